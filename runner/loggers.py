"""``logger: [tensorboard, mlflow]``: where a run's records go besides metrics.jsonl (always
written). MLflow: runner/mlflow_logger.py.

TensorBoard: event files (``events.out.tfevents.*``) in the run directory, written by the
engine's own writer (engine.summary.FileWriter; no dependency): every number of a metrics.jsonl record as a
scalar at its step (the loss, metrics, eval metrics, each group's ``lr`` and gradient norms), and
at each log step, per group, histograms of its gradient values before (``GROUP/gradients``) and
after (``GROUP/gradients_processed``) its pipeline. ``tensorboard --logdir outputs`` (pip install
tensorboard) shows them.
"""

from __future__ import annotations

import importlib.util
import numbers
from collections.abc import Iterable, Mapping
from pathlib import Path

import numpy as np

from engine.summary import FileWriter, HistogramProto, SessionLog, Summary
from runner.errors import ConfigError, did_you_mean

#: each logger and the module it needs (from the extra of the same name: pip install
#: 'gradpipe[NAME]'), None when the plain install writes it
LOGGERS = {"tensorboard": None, "mlflow": "mlflow"}
HISTOGRAM_BINS = 30


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def check_loggers(value) -> tuple[str, ...]:
    """``logger``: a name or a list of names of LOGGERS (null or []: none), each with its
    package installed."""
    if value is None:
        return ()
    names = [value] if isinstance(value, str) else value
    if not isinstance(names, list | tuple):
        raise ConfigError("logger", f"a list of loggers ({', '.join(LOGGERS)}), got {value!r}")
    for i, name in enumerate(names):
        if name not in LOGGERS:
            raise ConfigError(f"logger[{i}]", f"unknown logger {name!r}"
                                              f"{did_you_mean(str(name), LOGGERS)}; one of: "
                                              f"{', '.join(LOGGERS)}")
        if LOGGERS[name] is not None and not _installed(LOGGERS[name]):
            raise ConfigError(f"logger[{i}]", f"{name} is not installed: pip install "
                                              f"'gradpipe[{name}]' (or pip install {name})")
    return tuple(names)


def histogram(values: np.ndarray) -> HistogramProto:
    """The HistogramProto of ``values`` (finite ones): min, max, count, sum, sum of squares,
    and HISTOGRAM_BINS equal buckets, each given by its right edge."""
    values = np.asarray(values, dtype=np.float64).ravel()
    values = values[np.isfinite(values)]
    if values.size == 0:
        return HistogramProto()
    counts, edges = np.histogram(values, bins=HISTOGRAM_BINS)
    return HistogramProto(min=float(values.min()), max=float(values.max()), num=values.size,
                          sum=float(values.sum()), sum_squares=float(np.dot(values, values)),
                          bucket_limit=[float(e) for e in edges[1:]],
                          bucket=[float(c) for c in counts])


class TensorBoard:
    """Event files in ``out_dir``, written by the engine's own writer (engine.summary: no
    TensorFlow or TensorBoard needed to write them)."""

    def __init__(self, out_dir: Path):
        self._writer = FileWriter(str(out_dir))

    def start(self, step: int) -> None:
        """A run that goes on from a checkpoint at ``step`` (a resume) writes a SessionLog START
        at the step after it: TensorBoard then drops what an earlier run logged past the
        checkpoint (a run killed after it), as it does for TF's restarted sessions."""
        if step > 0:
            self._writer.add_session_log(SessionLog(status=SessionLog.START), step + 1)

    def log(self, record: Mapping, gradients: Mapping[str, Iterable[np.ndarray]]) -> None:
        """One metrics.jsonl record as scalars; ``gradients`` maps a histogram tag to the
        gradient arrays of that group."""
        values = [Summary.Value(tag=key, simple_value=float(value))
                  for key, value in record.items()
                  if key != "step" and isinstance(value, numbers.Real)
                  and not isinstance(value, bool)]
        for tag, arrays in gradients.items():
            flat = [np.asarray(a).ravel() for a in arrays]
            values.append(Summary.Value(tag=tag, histo=histogram(
                np.concatenate(flat) if flat else np.zeros(0))))
        if values:
            self._writer.add_summary(Summary(value=values), int(record["step"]))

    def close(self) -> None:
        self._writer.close()

    def end(self, status: str, summary: Mapping) -> None:
        """Nothing more when the run ends: every record is in the event file."""


def make_loggers(names: Iterable[str], out_dir: Path, params: Mapping | None = None,
                 resume: bool = False) -> list:
    """The loggers ``names`` of a run in ``out_dir``; ``params`` (the config) is what MLflow
    records of the run, ``resume`` whether it continues an earlier one."""
    from runner.mlflow_logger import MLflow

    return [TensorBoard(out_dir) if name == "tensorboard" else MLflow(out_dir, params, resume)
            for name in names]
