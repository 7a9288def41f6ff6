"""A run's outputs, written by runner.app, runner.loop and runner.sweep and read back by them:

- how a run ends: its exit code (``EXIT_*``) and ``summary.json`` (``write_summary``);
- its metrics file, ``metrics.jsonl`` (one JSON record per logged step; ``read_records``);
- pictures, with the ``plot`` extra (matplotlib): ``loss.png`` beside a run's metrics.jsonl and
  ``comparison.png`` in a sweep directory.

This module imports none of the modules that use it, so they share it without an import cycle.

Pictures: without matplotlib nothing is written and nothing fails, and a picture that cannot be drawn is
logged, never raised: pictures are a convenience, the metrics files are the record. Figures are
drawn on matplotlib's Agg canvas directly (``Figure`` + ``FigureCanvasAgg``), not through pyplot,
so that no global backend is switched in a process that also shows figures, and jobs drawing in
threads do not share state.
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Mapping, Sequence
from pathlib import Path

log = logging.getLogger("runner")

#: exit codes of a run (``runner.app.run``), of ``python -m runner`` and of a sweep's jobs
EXIT_OK = 0
EXIT_FAILED = 1
EXIT_CONFIG = 2
EXIT_DIVERGED = 3
EXIT_INTERRUPTED = 130

METRICS = "metrics.jsonl"
SUMMARY = "summary.json"
LOSS_PNG = "loss.png"
COMPARISON_PNG = "comparison.png"
_MAX_LEGEND = 12  # more runs than this in one comparison: no legend (it would hide the curves)


def write_summary(out_dir: Path, summary: Mapping) -> None:
    """summary.json, replaced atomically so a reader never sees half of it."""
    from runner.checkpoint import atomic_write_bytes

    text = json.dumps(summary, indent=2, allow_nan=False) + "\n"
    atomic_write_bytes(Path(out_dir) / SUMMARY, text.encode())


def _figure_class():
    """matplotlib's Figure with an Agg canvas, or None when matplotlib is not installed."""
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        return None

    def make(**kwargs):
        figure = Figure(**kwargs)
        FigureCanvasAgg(figure)
        return figure

    return make


def read_records(run_dir) -> list[dict]:
    """The records of a run's metrics.jsonl (none when it is missing)."""
    path = Path(run_dir) / METRICS
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip()]


def _series(records: Sequence[Mapping], key: str) -> tuple[list, list]:
    """Steps and values of ``key`` (non-finite and missing values left out)."""
    points = [(r["step"], float(r[key])) for r in records
              if isinstance(r.get(key), (int, float)) and math.isfinite(float(r[key]))]
    return [p[0] for p in points], [p[1] for p in points]


def _log_scale_if_positive(ax) -> None:
    """A log y axis when every value drawn is positive (a loss may be negative)."""
    values = [y for line in ax.get_lines() for y in line.get_ydata()]
    if values and min(values) > 0:
        ax.set_yscale("log")


def _metric_names(records: Sequence[Mapping]) -> list[str]:
    """The model's metrics besides the loss, training or eval (``accuracy`` for ``accuracy``
    and ``eval/accuracy``), in the order they first appear."""
    names: dict[str, None] = {}
    for record in records:
        for key in record:
            name = key.removeprefix("eval/")
            if "/" not in name and name not in ("step", "epoch", "loss", "skipped_steps"):
                names[name] = None
    return list(names)


def loss_figure(records: Sequence[Mapping], make_figure):
    """The loss (and eval loss) over steps; beside it each group's gradient norm before (solid)
    and after (dashed, same colour) its pipeline; then, when the model has other metrics, each
    of them on the training batches (solid) and on the eval split (circles, dashed)."""
    groups = sorted({k.rsplit("/", 1)[0] for r in records for k in r if k.endswith("/grad_norm")})
    metrics = _metric_names(records)
    panels = 1 + bool(groups) + bool(metrics)
    figure = make_figure(figsize=(1 + 5 * panels, 4))
    axes = list(figure.subplots(1, panels, squeeze=False)[0])
    loss_ax = axes.pop(0)
    for key, style in (("loss", ".-"), ("eval/loss", "o-")):
        steps, values = _series(records, key)
        if steps:
            loss_ax.plot(steps, values, style, label=key)
    loss_ax.set(xlabel="step", ylabel="loss", title="loss")
    _log_scale_if_positive(loss_ax)
    if groups:
        norm_ax = axes.pop(0)
        for group in groups:
            steps, values = _series(records, f"{group}/grad_norm")
            line = norm_ax.plot(steps, values, ".-", label=f"{group} before pipeline")[0]
            steps, values = _series(records, f"{group}/grad_norm_processed")
            norm_ax.plot(steps, values, "--", color=line.get_color(),
                         label=f"{group} after pipeline")
        norm_ax.set(xlabel="step", ylabel="gradient norm", title="gradient norm per group")
        _log_scale_if_positive(norm_ax)
    if metrics:
        metric_ax = axes.pop(0)
        for name in metrics:
            steps, values = _series(records, name)
            color = None
            if steps:
                color = metric_ax.plot(steps, values, ".-", label=name)[0].get_color()
            steps, values = _series(records, f"eval/{name}")
            if steps:
                metric_ax.plot(steps, values, "o--", color=color, label=f"eval/{name}")
        metric_ax.set(xlabel="step", title="metrics")
    for ax in figure.axes:
        if ax.get_lines():
            ax.legend(fontsize="small")
    figure.tight_layout()
    return figure


def comparison_figure(runs: Mapping[str, Sequence[Mapping]], make_figure):
    """Each run's loss over steps, labelled (``runs`` maps a label to the run's records)."""
    figure = make_figure(figsize=(7, 4))
    ax = figure.subplots()
    for label, records in runs.items():
        steps, values = _series(records, "loss")
        if steps:
            ax.plot(steps, values, ".-", label=label)
    ax.set(xlabel="step", ylabel="loss", title="loss per job")
    _log_scale_if_positive(ax)
    if 0 < len(ax.get_lines()) <= _MAX_LEGEND:
        ax.legend(fontsize="small")
    figure.tight_layout()
    return figure


def _save(figure, path: Path) -> Path:
    figure.savefig(path, dpi=80)
    return path


def write_loss_plot(run_dir) -> Path | None:
    """loss.png in ``run_dir`` from its metrics.jsonl; its path, or None when matplotlib is
    missing, nothing was logged or drawing failed (logged)."""
    make_figure = _figure_class()
    if make_figure is None:
        return None
    try:
        records = read_records(run_dir)
        if not records:
            return None
        return _save(loss_figure(records, make_figure), Path(run_dir) / LOSS_PNG)
    except Exception:
        log.exception("could not draw %s in %s", LOSS_PNG, run_dir)
        return None


def write_sweep_plot(sweep_dir, job_dirs: Mapping[str, Path]) -> Path | None:
    """comparison.png in ``sweep_dir``: the loss of each job (``job_dirs`` maps a label to the
    job's run directory). None when matplotlib is missing or no job logged a loss."""
    make_figure = _figure_class()
    if make_figure is None:
        return None
    try:
        runs = {label: read_records(d) for label, d in job_dirs.items()}
        if not any(_series(records, "loss")[0] for records in runs.values()):
            return None
        return _save(comparison_figure(runs, make_figure), Path(sweep_dir) / COMPARISON_PNG)
    except Exception:
        log.exception("could not draw %s in %s", COMPARISON_PNG, sweep_dir)
        return None
