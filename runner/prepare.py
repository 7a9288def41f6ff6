"""Before a run's first step: the config validated, the model built, the data loaded.

``prepare`` raises every config error of the run together (runner/job.py picks what a job does
with them): the model is built and the data loaded from the valid sections even when others have
problems, the memory and initialization-time estimates refuse a run that would not fit first
(runner.memory, runner.init_time), and what needs data or a held-out split is checked against
the data loaded.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path

from runner import init_time, memory
from runner.config import check as check_config
from runner.config_specs import RunConfig, TrainSpec
from runner.data import Dataset, load_data
from runner.errors import ConfigError, ConfigErrors
from runner.model import Model
from runner.model_build import build_model
from runner.monitor import monitors_for


def prepare(cfg: Mapping, base_dir: Path) -> tuple[RunConfig, Model, Dataset | None]:
    """Validate, build and load: every config error of the run, raised together.

    The model is built and the data loaded from the valid sections even when others have
    problems (a bad ``train.steps`` does not hide a bad expression).
    """
    config, errors = check_config(cfg)
    errors = list(errors)
    usable = dataclasses.replace(config, seed=config.seed if config.seed is not None else 0,
                                 mode=config.mode or "train")
    model = None
    train = config.train or TrainSpec()
    cap = train.max_memory_gb
    parts = {}
    if config.model is not None:
        parts = memory.config_parts(usable, config.data, base_dir)
        try:
            memory.refuse_above(parts, cap)
            init_time.refuse_above(usable, train.max_init_seconds, train.threads)
        except ConfigError as error:  # nothing is built: its errors would follow from this one
            raise ConfigErrors([*errors, error]) from None
    if config.model is not None and config.groups is not None:
        try:
            model = build_model(usable)
            memory.refuse_above(memory.total(parts, memory.graph_parts(model),
                                             memory.gradient_parts(model, _batch_rows(config))),
                                cap)
        except ConfigErrors as exc:
            errors.extend(exc.errors)
        except ConfigError as error:
            raise ConfigErrors([*errors, error]) from None
    dataset = None
    data_ok = not any(e.key == "data" or e.key.startswith("data.") for e in errors)
    if config.model is not None and data_ok:
        try:
            dataset = load_dataset(usable, base_dir)
        except (ConfigError, ConfigErrors) as exc:
            errors.extend(exc.errors if isinstance(exc, ConfigErrors) else [exc])
    if config.train is not None and config.train.eval_every and config.mode == "train" \
            and config.model is not None and (dataset is None or dataset.eval is None):
        if config.model.inputs:
            if dataset is not None:
                errors.append(ConfigError("train.eval_every", "needs a held-out split: set "
                                                              "data.eval_fraction (e.g. 0.1; on "
                                                              "the command line "
                                                              "++data.eval_fraction=0.1)"))
        else:
            errors.append(ConfigError("train.eval_every", "needs data: the model has no inputs"))
    if config.train is not None and config.train.epochs and config.mode == "train" \
            and config.model is not None and not config.model.inputs:
        errors.append(ConfigError("train.epochs", "needs data: the model has no inputs; give "
                                                  "train.steps"))
    if config.model is not None and model is not None and config.train is not None \
            and config.mode == "train":
        for monitor in monitors_for(config.train):
            try:
                monitor.check_known(monitored_keys(model))
            except ConfigError as error:
                errors.append(error)
    if errors:
        raise ConfigErrors(errors)
    return config, model, dataset


def _batch_rows(config: RunConfig) -> int:
    """The examples in a training batch as configured (data.batch_size, else data.n, else 1),
    for the memory estimate."""
    data = config.data if isinstance(config.data, Mapping) else {}
    for value in (data.get("batch_size"), data.get("n")):
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 1:
            return int(value)
    return 1


def monitored_keys(model: Model) -> list[str]:
    """What an evaluation's record holds that early stopping and keep_best may watch."""
    names = ["loss", *(name for name in model.metrics if name != "loss")]
    return [*names, *(f"eval/{name}" for name in names)]


def load_dataset(config: RunConfig, base_dir: Path) -> Dataset | None:
    """The data for the model's inputs; None for a model without inputs (it needs no data)."""
    inputs = config.model.inputs
    if not inputs:
        return None
    if config.data is None:
        raise ConfigError("data", f"missing: model.inputs declares {', '.join(inputs)}, which are "
                                  "fed from data (e.g. data: {source: linear})")
    declared = {name: {"shape": None if spec.shape is None else list(spec.shape),
                       "dtype": spec.dtype} for name, spec in inputs.items()}
    return load_data(config.data, declared, config.seed, base_dir)
