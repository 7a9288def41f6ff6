"""The typed specs a checked run config is made of: what ``runner.config.validate`` returns
(:class:`RunConfig` and its parts, one frozen dataclass per section and entry).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class InputSpec:
    """A placeholder fed from the data each step; ``shape`` is example-major ([null, ...]).

    ``time_major``: the model takes the input as [time, batch, ...] while the data is
    [batch, time, ...]; the placeholder's first two dims are swapped and each batch transposed.
    """

    name: str
    shape: tuple[int | None, ...] | None
    dtype: str
    time_major: bool = False

    @property
    def graph_shape(self) -> tuple[int | None, ...] | None:
        if self.shape is None or not self.time_major:
            return self.shape
        return (self.shape[1], self.shape[0], *self.shape[2:])


@dataclass(frozen=True)
class ConstantSpec:
    name: str
    value: np.ndarray
    dtype: str


@dataclass(frozen=True)
class InitSpec:
    """An initializer by name with its parameters (defaults filled in)."""

    name: str
    params: dict


@dataclass(frozen=True)
class VariableSpec:
    name: str
    shape: tuple[int, ...]
    init: np.ndarray | InitSpec
    dtype: str
    trainable: bool
    collections: tuple[str, ...]
    scope: str | None

    @property
    def engine_name(self) -> str:
        """The engine's name for it: ``scope/name`` (TF's variable_scope naming) or ``name``."""
        return f"{self.scope}/{self.name}" if self.scope else self.name


@dataclass(frozen=True)
class ModelSpec:
    inputs: dict[str, InputSpec]
    constants: dict[str, ConstantSpec]
    variables: dict[str, VariableSpec]
    graph: dict[str, str]
    loss: str | None
    metrics: tuple[str, ...]


@dataclass(frozen=True)
class ScheduleSpec:
    """``learning_rate: {schedule: NAME, ...}``: a schedule of the global step."""

    name: str
    params: dict


@dataclass(frozen=True)
class OptimizerSpec:
    name: str
    learning_rate: float | ScheduleSpec | None
    params: dict


@dataclass(frozen=True)
class SelectSpec:
    collection: str | None = None
    scope: str | None = None
    variables: tuple[str, ...] | None = None


@dataclass(frozen=True)
class GroupSpec:
    """One optimizer set-up: which variables, which loss, which optimizer and pipeline."""

    name: str
    select: SelectSpec
    loss: tuple[str, ...] | None  # None: the model's loss
    loss_is_list: bool
    grad_loss: tuple | None  # one nested list per loss name
    optimizer: OptimizerSpec
    pipeline: tuple[tuple[str, object, str], ...]  # (stage, parameters or a number, config key)


@dataclass(frozen=True)
class EarlyStoppingSpec:
    """Stop when ``monitor`` has not improved by more than ``min_delta`` for ``patience``
    evaluations in a row (Keras's EarlyStopping rule)."""

    monitor: str = "eval/loss"
    mode: str = "min"
    patience: int = 5
    min_delta: float = 0.0


@dataclass(frozen=True)
class KeepBestSpec:
    """best.npz: the state at the evaluation where ``monitor`` was best so far."""

    monitor: str = "eval/loss"
    mode: str = "min"


DEFAULT_STEPS = 100  # when neither train.steps nor train.epochs is given


@dataclass(frozen=True)
class TrainSpec:
    steps: int | None = DEFAULT_STEPS  # None: train.epochs decides
    log_every: int = 10
    eval_every: int = 0
    checkpoint_every: int = 0
    on_nonfinite: str = "raise"
    resume: bool = False
    overwrite: bool = False
    progress: bool = True
    threads: int = 0  # BLAS threads of the engine's session; 0: its default (engine/threads.py)
    max_memory_gb: float | None = None
    max_init_seconds: float | None = 60.0  # refuse an initializer estimated to take longer
    plots: bool = True  # loss.png at the end (with matplotlib)
    epochs: int | None = None  # passes over the training split, instead of steps
    early_stopping: EarlyStoppingSpec | None = None
    keep_best: KeepBestSpec | None = None


@dataclass(frozen=True)
class GradcheckSpec:
    epsilon: float = 1e-6
    tolerance: float = 1e-4
    max_entries: int = 32


@dataclass(frozen=True)
class RunConfig:
    seed: int
    mode: str
    model: ModelSpec
    data: dict | None
    groups: dict[str, GroupSpec]
    train: TrainSpec
    gradcheck: GradcheckSpec = field(default_factory=GradcheckSpec)
    logger: tuple[str, ...] = ()  # runner.loggers.LOGGERS besides metrics.jsonl

