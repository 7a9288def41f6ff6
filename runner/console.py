"""What the terminal shows of a training run: a line per logged step, the summary table at the
end, and a tqdm progress bar when stdout is a terminal (a log file or a pipe gets the lines
only)."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path


def fmt(value) -> str:
    """A record's value for reading: 4 significant digits, NaN for null."""
    if value is None:
        return "nan"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def log_line(record: Mapping, rate: float, total_steps: int, epochs: int | None,
             groups: Sequence[str], skipped: int | None) -> str:
    """A logged step: the step (and epoch), the loss and metrics, each group's learning rate,
    gradient norms and reports, the skipped steps (when any) and the steps per second."""
    parts = [f"step {record['step']}/{total_steps}"]
    if "epoch" in record:
        of_epochs = f"/{epochs}" if epochs else ""
        parts.append(f"epoch {record['epoch']}{of_epochs}")
    skip = {"step", "skipped_steps", "epoch"}
    for key, value in record.items():
        if key in skip or key.split("/")[0] in groups:
            continue
        parts.append(f"{key} {fmt(value)}")
    for g in groups:
        text = (f"{g}: lr {fmt(record.get(f'{g}/lr'))} grad_norm "
                f"{fmt(record.get(f'{g}/grad_norm'))} -> "
                f"{fmt(record.get(f'{g}/grad_norm_processed'))}")
        extras = [f"{k.split('/', 1)[1]} {fmt(v)}" for k, v in record.items()
                  if k.startswith(f"{g}/") and k.split("/", 1)[1] not in
                  ("lr", "grad_norm", "grad_norm_processed")]
        parts.append(text + (f" ({', '.join(extras)})" if extras else ""))
    if skipped:
        parts.append(f"skipped {skipped}")
    parts.append(f"{rate:.1f} steps/s")
    return " | ".join(parts)


def summary_table(status: str, steps: int, wall_time: float, out_dir: Path, final: Mapping,
                  skipped: int, extra: Mapping) -> str:
    """What the terminal shows at the end: status, steps, why the run stopped, the best
    checkpoint (train.keep_best), then the final values."""
    final = dict(final)
    final.pop("step", None)
    rows = [("status", status), ("steps", str(steps)),
            ("wall time", f"{wall_time:.2f} s"), ("run directory", str(out_dir.resolve()))]
    if extra.get("stop_reason"):
        rows.insert(2, ("stopped", extra["stop_reason"]))
    best = extra.get("best")
    if best:
        rows.append(("best", f"{best['monitor']} {fmt(best['value'])} at step {best['step']} "
                             f"({best['path']})"))
    final.pop("skipped_steps", None)
    if skipped:
        rows.append(("skipped steps", str(skipped)))
    rows += [(key, fmt(value)) for key, value in final.items()]
    width = max(len(k) for k, _ in rows)
    return "\n".join(["summary:"] + [f"  {k.ljust(width)}  {v}" for k, v in rows])


def progress_bar(total: int, initial: int, enabled: bool):
    """A tqdm bar (steps done, steps/s, time left; the loss as its postfix) when stdout is a
    terminal, else None: a log file or a pipe gets the log lines only."""
    if not enabled or not sys.stdout.isatty():
        return None
    from tqdm import tqdm

    return tqdm(total=total, initial=initial, unit="step", dynamic_ncols=True, leave=False)


def redirect_logging(bar):
    """Log lines printed above the progress bar (tqdm's redirect) while there is one."""
    if bar is None:
        return contextlib.nullcontext()
    from tqdm.contrib.logging import logging_redirect_tqdm

    return logging_redirect_tqdm()
