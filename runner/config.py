"""The run config's schema: a composed config (plain mappings) -> checked, typed specs.

``validate`` checks the whole config before anything is built: every key is known (with a "did you
mean" when it is close to one), every value has the right type and range, names are identifiers
and unique across inputs, constants, variables and graph entries, literal ``init`` values agree
with their ``shape``. It collects every problem into one :class:`~runner.errors.ConfigErrors`, one
:class:`~runner.errors.ConfigError` per problem, each naming its key (``train.steps``,
``model.variables.W1.init``, ...). What needs the engine (expressions, shapes of graph nodes,
optimizer and stage parameters, groups' selections) is checked in ``runner.model_build`` when the
graph is built, still before the first step. The specs it returns are in ``runner.config_specs``;
the ``groups`` entries are checked in ``runner.config_groups``.
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping

import numpy as np

from engine.framework.graph import is_valid_name
from runner.checks import (
    cast_literal,
    check_bool,
    check_choice,
    check_dtype,
    check_float,
    check_int,
    check_list,
    check_mapping,
    check_name,
    check_shape,
    check_str,
    describe,
    literal_array,
    unknown_keys,
)
from runner.config_groups import group
from runner.config_specs import (
    DEFAULT_STEPS,
    ConstantSpec,
    EarlyStoppingSpec,
    GradcheckSpec,
    InitSpec,
    InputSpec,
    KeepBestSpec,
    ModelSpec,
    RunConfig,
    TrainSpec,
    VariableSpec,
)
from runner.errors import ConfigError, ConfigErrors, ErrorCollector, did_you_mean

MODES = ("train", "check", "gradcheck", "eval", "predict")
ON_NONFINITE = ("raise", "skip")
FLOAT_DTYPES = ("float16", "float32", "float64")

TOP_KEYS = ("seed", "mode", "model", "data", "groups", "train", "gradcheck", "eval", "predict",
            "logger")
MODEL_KEYS = ("inputs", "constants", "variables", "graph", "loss", "metrics")
INPUT_KEYS = ("shape", "dtype", "time_major")
CONSTANT_KEYS = ("value", "dtype")
VARIABLE_KEYS = ("shape", "init", "dtype", "trainable", "collections", "scope")
TRAIN_KEYS = ("steps", "log_every", "eval_every", "checkpoint_every", "on_nonfinite", "resume",
              "overwrite", "progress", "threads", "max_memory_gb", "max_init_seconds", "plots",
              "epochs", "early_stopping", "keep_best")
EARLY_STOPPING_KEYS = ("monitor", "mode", "patience", "min_delta")
KEEP_BEST_KEYS = ("monitor", "mode")
MONITOR_MODES = ("min", "max")
GRADCHECK_KEYS = ("epsilon", "tolerance", "max_entries")

# Initializers a variable's ``init`` may name, with their parameters and defaults (TF1's).
INITIALIZERS: dict[str, dict[str, object]] = {
    "zeros": {},
    "ones": {},
    "constant": {"value": 0.0},
    "normal": {"mean": 0.0, "stddev": 1.0},
    "truncated_normal": {"mean": 0.0, "stddev": 1.0},
    "uniform": {"minval": 0.0, "maxval": 1.0},
    "glorot_uniform": {},
    "glorot_normal": {},
    "he_normal": {},
    "he_uniform": {},
    "orthogonal": {"gain": 1.0},
    "variance_scaling": {"scale": 1.0, "mode": "fan_in", "distribution": "truncated_normal"},
}


# --------------------------------------------------------------------------------------------
# validate
# --------------------------------------------------------------------------------------------


def validate(cfg: Mapping) -> RunConfig:
    """The typed run config of a composed config, or ConfigErrors listing every problem."""
    config, errors = check(cfg)
    if errors:
        raise ConfigErrors(errors)
    return config


def check(cfg: Mapping) -> tuple[RunConfig, list[ConfigError]]:
    """The typed run config and every problem found; sections with problems are None (or, for
    ``groups``, hold only the valid groups), so that the model can still be built from the
    valid sections and its own problems reported in the same run."""
    errors = ErrorCollector()
    if not isinstance(cfg, Mapping):
        error = ConfigError("config", f"must be a mapping, got {describe(cfg)}")
        return RunConfig(None, None, None, None, None, None, None), [error]
    for error in unknown_keys("", cfg, TOP_KEYS):
        if error.key == "experiment":
            error = ConfigError("experiment", "an experiment's keys landed under 'experiment': "
                                              "its file needs '# @package _global_' as its "
                                              "first line")
        errors.add(error)
    seed = errors.check(check_int, "seed", cfg.get("seed", 0), 0)
    mode = errors.check(check_choice, "mode", cfg.get("mode", "train"), MODES)
    model = _model(errors, cfg.get("model"))
    data = cfg.get("data")
    if data is not None and not isinstance(data, Mapping):
        errors.add(ConfigError("data", f"must be a mapping with a source, got {describe(data)}"))
        data = None
    variables = model.variables if model is not None else None
    groups = _groups(errors, cfg.get("groups"), variables, mode)
    train = _train(errors, cfg.get("train"))
    gradcheck = _gradcheck(errors, cfg.get("gradcheck"))
    from runner.loggers import check_loggers

    loggers = errors.check(check_loggers, cfg.get("logger")) or ()
    config = RunConfig(seed, mode, model, dict(data) if data is not None else None, groups, train,
                       gradcheck, loggers)
    return config, errors.errors


def _train(errors: ErrorCollector, cfg) -> TrainSpec | None:
    if cfg is None:
        return TrainSpec()
    if errors.check(check_mapping, "train", cfg) is None:
        return None
    for error in unknown_keys("train", cfg, TRAIN_KEYS):
        errors.add(error)
    default = TrainSpec()
    before = len(errors.errors)
    steps, epochs = cfg.get("steps"), cfg.get("epochs")
    if steps is not None and epochs is not None:
        errors.add(ConfigError("train.epochs", f"give train.steps or train.epochs, not both "
                                               f"(train.steps is {steps}; set train.steps=null "
                                               "to train by epochs)"))
        return None
    values = {
        "steps": None if epochs is not None else
        errors.check(check_int, "train.steps", DEFAULT_STEPS if steps is None else steps, 0),
        "epochs": None if epochs is None else errors.check(check_int, "train.epochs", epochs, 1),
        "early_stopping": errors.check(_monitor_spec, "train.early_stopping",
                                       cfg.get("early_stopping"), EarlyStoppingSpec,
                                       EARLY_STOPPING_KEYS),
        "keep_best": errors.check(_monitor_spec, "train.keep_best", cfg.get("keep_best"),
                                  KeepBestSpec, KEEP_BEST_KEYS),
        "log_every": errors.check(check_int, "train.log_every",
                                  cfg.get("log_every", default.log_every), 1),
        "eval_every": errors.check(check_int, "train.eval_every",
                                   cfg.get("eval_every", default.eval_every), 0),
        "checkpoint_every": errors.check(check_int, "train.checkpoint_every",
                                         cfg.get("checkpoint_every", default.checkpoint_every), 0),
        "on_nonfinite": errors.check(check_choice, "train.on_nonfinite",
                                     cfg.get("on_nonfinite", default.on_nonfinite), ON_NONFINITE),
        "resume": errors.check(check_bool, "train.resume", cfg.get("resume", default.resume)),
        "overwrite": errors.check(check_bool, "train.overwrite",
                                  cfg.get("overwrite", default.overwrite)),
        "progress": errors.check(check_bool, "train.progress",
                                 cfg.get("progress", default.progress)),
        "threads": errors.check(check_int, "train.threads", cfg.get("threads", default.threads), 0),
        "plots": errors.check(check_bool, "train.plots", cfg.get("plots", default.plots)),
    }
    if len(errors.errors) > before:
        return None
    if (values["early_stopping"] or values["keep_best"]) and not values["eval_every"]:
        which = "early_stopping" if values["early_stopping"] else "keep_best"
        errors.add(ConfigError(f"train.{which}", "is checked at each evaluation: set "
                                                 "train.eval_every to a number of steps"))
        return None
    caps = {}
    for name in ("max_memory_gb", "max_init_seconds"):
        cap = cfg.get(name, getattr(default, name))
        if cap is not None:
            cap = errors.check(check_float, f"train.{name}", cap, 0.0, True)
            if cap is None:
                return None
        caps[name] = cap
    return TrainSpec(**values, **caps)


def _monitor_spec(key: str, value, cls, keys):
    """``train.early_stopping`` / ``train.keep_best``: None (off) or a mapping of ``keys``."""
    if value is None:
        return None
    value = check_mapping(key, value, f"a mapping with {', '.join(keys)} (null: off)")
    problems = unknown_keys(key, value, keys)
    if problems:
        raise ConfigErrors(problems)
    default = cls()
    params = {"monitor": check_str(f"{key}.monitor", value.get("monitor", default.monitor)),
              "mode": check_choice(f"{key}.mode", value.get("mode", default.mode), MONITOR_MODES)}
    if "patience" in keys:
        params["patience"] = check_int(f"{key}.patience", value.get("patience", default.patience),
                                       0)
        params["min_delta"] = check_float(f"{key}.min_delta",
                                          value.get("min_delta", default.min_delta), 0.0)
    return cls(**params)


def _gradcheck(errors: ErrorCollector, cfg) -> GradcheckSpec | None:
    if cfg is None:
        return GradcheckSpec()
    if errors.check(check_mapping, "gradcheck", cfg) is None:
        return None
    for error in unknown_keys("gradcheck", cfg, GRADCHECK_KEYS):
        errors.add(error)
    default = GradcheckSpec()
    values = {
        "epsilon": errors.check(check_float, "gradcheck.epsilon",
                                cfg.get("epsilon", default.epsilon), 0.0, True),
        "tolerance": errors.check(check_float, "gradcheck.tolerance",
                                  cfg.get("tolerance", default.tolerance), 0.0, True),
        "max_entries": errors.check(check_int, "gradcheck.max_entries",
                                    cfg.get("max_entries", default.max_entries), 1),
    }
    if any(v is None for v in values.values()):
        return None
    return GradcheckSpec(**values)


# -- model -----------------------------------------------------------------------------------


def _model(errors: ErrorCollector, cfg) -> ModelSpec | None:
    if cfg is None:
        errors.add(ConfigError("model", "missing: a run needs a model (variables and graph)"))
        return None
    if errors.check(check_mapping, "model", cfg) is None:
        return None
    before = len(errors.errors)
    for error in unknown_keys("model", cfg, MODEL_KEYS):
        errors.add(error)
    inputs = _section(errors, cfg, "inputs", _input)
    constants = _section(errors, cfg, "constants", _constant)
    variables = _section(errors, cfg, "variables", _variable)
    graph = _graph(errors, cfg.get("graph"))
    names: dict[str, str] = {}
    for section, entries in (("inputs", inputs), ("constants", constants),
                             ("variables", variables), ("graph", graph)):
        for name in entries or {}:
            if name in names:
                errors.add(ConfigError(f"model.{section}.{name}", f"the name '{name}' is already "
                                       f"used by model.{names[name]}.{name}; names must be unique"))
            else:
                names[name] = section
    loss = cfg.get("loss")
    if loss is not None:
        loss = errors.check(check_str, "model.loss", loss)
    metrics = _metrics(errors, cfg.get("metrics"), loss)
    if len(errors.errors) > before:
        return None
    return ModelSpec(inputs, constants, variables, graph, loss, metrics)


def _section(errors: ErrorCollector, cfg: Mapping, section: str, parse) -> dict | None:
    """A name -> spec mapping of the model (inputs, constants, variables)."""
    entries = cfg.get(section)
    if entries is None:
        return {}
    key = f"model.{section}"
    if errors.check(check_mapping, key, entries, f"a mapping of names to {section} specs") is None:
        return None
    out = {}
    for name, spec in entries.items():
        if errors.check(check_name, f"{key}.{name}", name) is None:
            continue
        parsed = errors.check(parse, f"{key}.{name}", name, spec)
        if parsed is not None:
            out[name] = parsed
    return out


def _input(key: str, name: str, spec) -> InputSpec:
    spec = {} if spec is None else check_mapping(key, spec, "a mapping with shape and dtype")
    problems = unknown_keys(key, spec, INPUT_KEYS)
    if problems:
        raise ConfigErrors(problems)
    shape = spec.get("shape")
    if shape is not None:
        shape = check_shape(f"{key}.shape", shape, allow_unknown=True)
    dtype = check_dtype(f"{key}.dtype", spec.get("dtype", "float32"))
    time_major = check_bool(f"{key}.time_major", spec.get("time_major", False))
    if time_major and (shape is None or len(shape) < 2):
        raise ConfigError(f"{key}.time_major", "needs a shape of rank >= 2 ([null, time, ...])")
    return InputSpec(name, shape, dtype, time_major)


def _constant(key: str, name: str, spec) -> ConstantSpec:
    dtype = "float32"
    value = spec
    if isinstance(spec, Mapping):
        problems = unknown_keys(key, spec, CONSTANT_KEYS)
        if problems:
            raise ConfigErrors(problems)
        if "value" not in spec:
            raise ConfigError(f"{key}.value", "missing: a constant needs a value")
        value = spec["value"]
        dtype = check_dtype(f"{key}.dtype", spec.get("dtype", "float32"))
        key = f"{key}.value"
    array = literal_array(key, value)
    if array.dtype == bool and dtype == "float32" and not isinstance(spec, Mapping):
        dtype = "bool"
    return ConstantSpec(name, cast_literal(key, array, dtype), dtype)


def _variable(key: str, name: str, spec) -> VariableSpec:
    if not isinstance(spec, Mapping):
        # A bare literal is the init value: ``b: [0.0, 0.0]``.
        spec = {"init": spec}
    problems = unknown_keys(key, spec, VARIABLE_KEYS)
    errors = ErrorCollector()
    for problem in problems:
        errors.add(problem)
    shape = spec.get("shape")
    if shape is not None:
        shape = errors.check(check_shape, f"{key}.shape", shape, allow_unknown=False)
    dtype = errors.check(check_dtype, f"{key}.dtype", spec.get("dtype", "float32"))
    trainable = errors.check(check_bool, f"{key}.trainable", spec.get("trainable", True))
    collections = errors.check(_collections, f"{key}.collections", spec.get("collections", []))
    scope = spec.get("scope")
    if scope is not None:
        scope = errors.check(_scope, f"{key}.scope", scope)
    if trainable and dtype is not None and dtype not in FLOAT_DTYPES:
        errors.add(ConfigError(f"{key}.dtype", f"a trainable variable must be floating point, got "
                                               f"{dtype}; set trainable: false or a float dtype"))
    init = None
    if "init" not in spec:
        errors.add(ConfigError(f"{key}.init", "missing: give a value (number or nested list) or "
                                              f"an initializer ({', '.join(INITIALIZERS)})"))
    elif dtype is not None:
        init = errors.check(_init, f"{key}.init", spec["init"], shape, dtype)
    if errors.errors:
        raise ConfigErrors(errors.errors)
    if not isinstance(init, InitSpec):
        if shape is None:
            shape = init.shape
        elif init.ndim == 0:
            init = np.full(shape, init, dtype=init.dtype)
    elif shape is None:
        raise ConfigError(f"{key}.shape", f"missing: the initializer '{init.name}' needs a shape")
    return VariableSpec(name, tuple(shape), init, dtype, trainable, tuple(collections), scope)


def _collections(key: str, value) -> list[str]:
    if isinstance(value, str):
        value = [value]
    items = check_list(key, value, "a list of collection names")
    for item in items:
        check_str(key, item)
    return items


def _scope(key: str, value) -> str:
    value = check_str(key, value)
    if value.endswith("/") or not is_valid_name(value) or "//" in value:
        raise ConfigError(key, f"must be a scope name like 'encoder' or 'net/encoder', "
                               f"got {value!r}")
    return value


def _init(key: str, value, shape, dtype: str) -> np.ndarray | InitSpec:
    """A literal value (checked against ``shape``) or an initializer name / mapping."""
    if isinstance(value, str):
        value = {"name": value}
    if isinstance(value, Mapping):
        return _initializer(key, value)
    array = cast_literal(key, literal_array(key, value), dtype)
    if shape is not None and array.ndim > 0 and tuple(array.shape) != tuple(shape):
        raise ConfigError(key, f"the value has shape {list(array.shape)} but shape is "
                               f"{list(shape)}; give a single number to fill the shape, or a list "
                               "of exactly that shape")
    return array


def _initializer(key: str, value: Mapping) -> InitSpec:
    name = value.get("name")
    if name is None:
        raise ConfigError(f"{key}.name", f"missing: an initializer mapping needs a name "
                                         f"({', '.join(INITIALIZERS)})")
    if not isinstance(name, str) or name not in INITIALIZERS:
        raise ConfigError(key if len(value) == 1 else f"{key}.name",
                          f"unknown initializer {name!r}{did_you_mean(name, INITIALIZERS)}; "
                          f"one of: {', '.join(INITIALIZERS)} (or a number / nested list)")
    defaults = INITIALIZERS[name]
    params = {k: v for k, v in value.items() if k != "name"}
    problems = [ConfigError(f"{key}.{p}", f"unknown parameter of initializer '{name}'"
                                          f"{did_you_mean(p, defaults)}; "
                                          f"it takes: {', '.join(defaults) or 'no parameters'}")
                for p in params if p not in defaults]
    if problems:
        raise ConfigErrors(problems)
    merged = {**defaults, **params}
    checked = {}
    for p, v in merged.items():
        pkey = f"{key}.{p}"
        if p == "stddev":
            checked[p] = check_float(pkey, v, 0.0, strict=True)
        elif p in ("gain", "scale"):
            checked[p] = check_float(pkey, v, 0.0, strict=True)
        elif p == "mode":
            checked[p] = check_choice(pkey, v, ("fan_in", "fan_out", "fan_avg"))
        elif p == "distribution":
            checked[p] = check_choice(pkey, v, ("truncated_normal", "untruncated_normal",
                                                "normal", "uniform"))
        else:
            checked[p] = check_float(pkey, v)
    if name == "uniform" and checked["minval"] >= checked["maxval"]:
        raise ConfigError(f"{key}.maxval", f"must be greater than minval ({checked['minval']}), "
                                           f"got {checked['maxval']}")
    return InitSpec(name, checked)


def _graph(errors: ErrorCollector, cfg) -> dict[str, str] | None:
    if cfg is None:
        return {}
    if errors.check(check_mapping, "model.graph", cfg,
                    "an ordered mapping of names to expressions") is None:
        return None
    out = {}
    for name, text in cfg.items():
        key = f"model.graph.{name}"
        if errors.check(check_name, key, name) is None:
            continue
        if isinstance(text, bool) or not isinstance(text, (str, numbers.Real)):
            errors.add(ConfigError(key, f"must be an expression (a string), got {describe(text)}"))
            continue
        out[name] = str(text)
    return out


def _metrics(errors: ErrorCollector, cfg, loss: str | None) -> tuple[str, ...]:
    if cfg is None:
        return (loss,) if loss else ()
    if isinstance(cfg, str):
        cfg = [cfg]
    items = errors.check(check_list, "model.metrics", cfg, "a list of graph node names")
    if items is None:
        return ()
    out = []
    for i, item in enumerate(items):
        if errors.check(check_str, f"model.metrics[{i}]", item) is not None:
            out.append(item)
    return tuple(out)


# -- groups ----------------------------------------------------------------------------------


def _groups(errors: ErrorCollector, cfg, variables: Mapping | None, mode: str | None) -> dict | None:
    if cfg is None:
        if mode == "train":
            errors.add(ConfigError("groups", "missing: training needs at least one group "
                                             "(select, optimizer, pipeline)"))
        return {}
    if errors.check(check_mapping, "groups", cfg, "a mapping of group names to groups") is None:
        return None
    if not cfg and mode == "train":
        errors.add(ConfigError("groups", "empty: training needs at least one group"))
    out = {}
    for name, spec in cfg.items():
        key = f"groups.{name}"
        if not isinstance(name, str) or "/" in name or not is_valid_name(name):
            errors.add(ConfigError(key, f"{name!r} is not a usable group name: use ASCII "
                                        "letters, digits and _ . -, starting with a letter or "
                                        "digit (the engine names the group's ops after it)"))
            continue
        parsed = errors.check(group, key, name, spec, variables)
        if parsed is not None:
            out[name] = parsed
    return out
