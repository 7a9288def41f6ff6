"""A logged step's record, one line of metrics.jsonl.

A record holds only values computed from the run's state (no wall-clock times), so a resumed
run's records equal an uninterrupted run's bit for bit: the step, the epoch, every fetched value
as JSON (non-finite floats as null) and, with ``on_nonfinite: skip``, the steps skipped so far.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from runner.outputs import METRICS
from runner.step_fetches import HISTOGRAM


def plain(value):
    """A fetched value as JSON: numbers as Python numbers, non-finite floats as null."""
    value = np.asarray(value)
    if value.ndim:
        return [plain(v) for v in value]
    value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def step_record(values: Mapping, step: int, steps_per_epoch: int | None,
                skipped: int | None) -> dict:
    """The record of a step's fetched ``values``; ``skipped`` (None: not recorded) counts the
    steps whose update was skipped."""
    record = {"step": step}
    if steps_per_epoch:
        record["epoch"] = (step - 1) // steps_per_epoch + 1
    for key, value in values.items():
        if key in ("train", "finite") or key.startswith(HISTOGRAM):
            continue
        record[key] = plain(value)
    if skipped is not None:
        record["skipped_steps"] = skipped
    return record


def gradient_values(values: Mapping) -> dict:
    """The gradients a full step fetched for the loggers, by ``GROUP/gradients[_processed]``
    (a sparse gradient as its values)."""
    return {key[len(HISTOGRAM):]: [getattr(g, "values", g) for g in value]
            for key, value in values.items() if key.startswith(HISTOGRAM)}


def append(out_dir: Path, record: Mapping) -> None:
    """One record appended to the run's metrics.jsonl."""
    line = json.dumps(record, allow_nan=False)
    with open(Path(out_dir) / METRICS, "a", encoding="utf-8") as handle:
        handle.write(line + "\n")


def last_record(path: Path) -> dict:
    """The last record of a metrics file (none when it is missing or empty)."""
    if not path.exists():
        return {}
    lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return json.loads(lines[-1]) if lines else {}
