"""Evaluation on the held-out split: the loss and the metrics averaged over its batches, in one
forward pass each (no state changes), recorded as ``eval/NAME``."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from runner.model import Model
from runner.records import plain


def eval_batches(data: Mapping, inputs: Mapping) -> Iterator[dict]:
    """The held-out split ``data`` in batches: whole, or of the inputs' fixed example count."""
    fixed = [spec.shape[0] for spec in inputs.values()
             if spec.shape is not None and spec.shape[0] is not None]
    n = next(iter(data.values())).shape[0]
    size = fixed[0] if fixed else n
    for start in range(0, n - size + 1, size):
        yield {k: v[start:start + size] for k, v in data.items()}


def evaluate(model: Model, session, fetches: Mapping, batches) -> dict:
    """Loss and metrics (``fetches``) averaged over ``batches`` (one forward pass each)."""
    totals: dict[str, float] = {}
    count = 0
    for batch in batches:
        values = session.run(fetches, model.feed(batch))
        for key, value in values.items():
            totals[key] = totals.get(key, 0.0) + float(value)
        count += 1
    return {f"eval/{key}": plain(total / max(count, 1)) for key, total in totals.items()}
