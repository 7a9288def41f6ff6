"""Watching a logged value at each evaluation: early stopping and the best checkpoint.

Keras's rules (``keras.callbacks.EarlyStopping`` and ``ModelCheckpoint(save_best_only=True)``):
a value improves on the best so far when it is lower by more than ``min_delta`` (mode ``min``) or
higher by more than ``min_delta`` (mode ``max``); the first value always improves. Early stopping
counts evaluations in a row without an improvement and stops when that count reaches
``patience`` (Keras: ``wait >= patience``; patience 0 stops at the first evaluation that does not
improve). A non-finite value never improves.

Both are rebuilt on resume by replaying the records of metrics.jsonl that the checkpoint has seen
(``replay``), so a resumed run stops where an uninterrupted one would.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

from runner.errors import ConfigError, did_you_mean


class Monitor:
    """The best value so far of one logged key, and whether a new value improves on it."""

    def __init__(self, key: str, monitor: str, mode: str, min_delta: float = 0.0):
        self.key = key  # the config key, for messages
        self.monitor = monitor
        self.mode = mode
        self.min_delta = min_delta
        self.best: float | None = None
        self.best_step: int | None = None

    def improves(self, value: float) -> bool:
        if not math.isfinite(value):
            return False
        if self.best is None:
            return True
        if self.mode == "min":
            return value < self.best - self.min_delta
        return value > self.best + self.min_delta

    def update(self, record: Mapping) -> bool:
        """Take the record of an evaluation; True when its value is the new best."""
        value = float(record[self.monitor])
        if not self.improves(value):
            return False
        self.best, self.best_step = value, int(record["step"])
        return True

    def check_known(self, keys: Iterable[str]) -> None:
        """A ConfigError naming ``self.key`` when the records of an evaluation lack the key."""
        keys = list(keys)
        if self.monitor not in keys:
            raise ConfigError(f"{self.key}.monitor",
                              f"{self.monitor!r} is not logged at an evaluation"
                              f"{did_you_mean(self.monitor, keys)}; one of: {', '.join(keys)}")


class EarlyStopping(Monitor):
    """Stop after ``patience`` evaluations in a row without an improvement > ``min_delta``."""

    def __init__(self, key: str, monitor: str, mode: str, patience: int, min_delta: float):
        super().__init__(key, monitor, mode, min_delta)
        self.patience = patience
        self.wait = 0

    def update(self, record: Mapping) -> bool:
        """True when the run should stop after this evaluation."""
        if super().update(record):
            self.wait = 0
            return False
        self.wait += 1
        return self.wait >= self.patience

    def reason(self) -> str:
        best = "no finite value" if self.best is None else \
            f"best {self.best:.6g} at step {self.best_step}"
        return (f"early stopping: {self.monitor} did not improve by more than {self.min_delta:g} "
                f"for {self.wait} evaluations ({best})")


def replay(monitor: Monitor, records: Iterable[Mapping], eval_every: int) -> None:
    """Feed ``monitor`` the records of the evaluations logged so far (every ``eval_every``
    steps)."""
    for record in records:
        if record["step"] % eval_every == 0 and record.get(monitor.monitor) is not None:
            monitor.update(record)


def monitors_for(train) -> list[Monitor]:
    """The EarlyStopping and keep_best Monitor a train spec asks for (fresh)."""
    out = []
    if train.early_stopping is not None:
        spec = train.early_stopping
        out.append(EarlyStopping("train.early_stopping", spec.monitor, spec.mode, spec.patience,
                                 spec.min_delta))
    if train.keep_best is not None:
        out.append(Monitor("train.keep_best", train.keep_best.monitor, train.keep_best.mode))
    return out
