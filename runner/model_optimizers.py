"""A group's learning rate (a number or a schedule), optimizer and gradient pipeline, made from the
engine's registries (SCHEDULES, OPTIMIZERS, STAGES) with the config's parameters checked first:
an unknown name or parameter, a missing one, or a value the engine refuses is a ConfigError at
the key of that parameter.
"""

from __future__ import annotations

import inspect
import math
import numbers
from collections.abc import Mapping

import engine
from engine.framework.graph import Tensor
from engine.train import OPTIMIZERS, SCHEDULES, get_or_create_global_step
from engine.train.stages import STAGES, Pipeline
from runner.checks import describe
from runner.config_specs import ScheduleSpec
from runner.errors import did_you_mean
from runner.model_context import BuildContext, engine_message
from runner.signatures import keyword_parameters, missing_argument, param_key, required_parameters

# Keyword arguments of optimizer constructors that a config does not set.
_OPTIMIZER_INTERNAL = ("self", "learning_rate", "use_locking", "name", "global_step")


def _unknown_name(ctx: BuildContext, key: str, kind: str, name: str, table: Mapping) -> bool:
    """Report ``name`` at ``key`` when ``table`` (a registry of schedules, optimizers or stages)
    does not hold it, with the nearest names and every one it does hold; True if reported."""
    if name in table:
        return False
    ctx.fail(key, f"unknown {kind} {name!r}{did_you_mean(name, table)}; one of: "
                  f"{', '.join(table)}")
    return True


def build_learning_rate(ctx: BuildContext, name: str, spec, global_step):
    """Group ``name``'s learning rate: the configured number (or None), or its schedule's tensor
    of ``global_step``; None after reporting a bad schedule."""
    key = f"groups.{name}.optimizer.learning_rate"
    lr = spec.learning_rate
    if not isinstance(lr, ScheduleSpec):
        return lr
    if _unknown_name(ctx, f"{key}.schedule", "schedule", lr.name, SCHEDULES):
        return None
    fn = SCHEDULES[lr.name]
    accepted = list(getattr(fn, "params", None) or keyword_parameters(fn, ("global_step", "name")))
    if _unknown_parameters(ctx, key, f"schedule '{lr.name}'", lr.params, accepted,
                           ", ".join(accepted)):
        return None
    try:
        with engine.name_scope("learning_rate"):
            return fn(global_step, **lr.params)
    except (ValueError, TypeError) as exc:
        missing = missing_argument(exc)
        if missing:
            ctx.fail(f"{key}.{missing}", f"missing: schedule '{lr.name}' needs {missing}; "
                                         f"it takes: {', '.join(accepted)}")
        else:
            ctx.fail(param_key(key, exc, [*lr.params, *accepted]), engine_message(exc))
        return None


def build_optimizer(ctx: BuildContext, name: str, spec, lr, global_step):
    """Group ``name``'s optimizer with learning rate ``lr``, or None after reporting why not."""
    key = f"groups.{name}.optimizer"
    if _unknown_name(ctx, f"{key}.name", "optimizer", spec.name, OPTIMIZERS):
        return None
    cls = OPTIMIZERS[spec.name]
    accepted = keyword_parameters(cls.__init__, _OPTIMIZER_INTERNAL)
    ok = not _unknown_parameters(ctx, key, f"optimizer '{spec.name}'", spec.params, accepted,
                                 f"learning_rate, {', '.join(accepted)}")
    for param, value in spec.params.items():
        if isinstance(value, str) and param in accepted and _yaml_number(value):
            ctx.fail(f"{key}.{param}", f"must be a number, got {describe(value)} (YAML "
                                       "reads 1e-3 as a string; write 1.0e-3)")
            ok = False
    if lr is None and "learning_rate" in required_parameters(cls.__init__, ("self",)):
        ctx.fail(f"{key}.learning_rate", f"missing: optimizer '{spec.name}' needs a "
                                         "learning_rate (a number or a schedule)")
        ok = False
    if not ok:
        return None
    kwargs = dict(spec.params)
    if lr is not None:
        kwargs["learning_rate"] = lr
    if "global_step" in inspect.signature(cls.__init__).parameters:
        kwargs["global_step"] = global_step
    try:
        return cls(**kwargs)
    except (ValueError, TypeError) as exc:
        missing = missing_argument(exc)
        if missing:
            ctx.fail(f"{key}.{missing}", f"missing: optimizer '{spec.name}' needs {missing}")
        else:
            ctx.fail(param_key(key, exc, kwargs), engine_message(exc))
        return None


def build_pipeline(ctx: BuildContext, name: str, stages):
    """Group ``name``'s gradient pipeline, its stages in config order, or None after reporting
    every bad stage."""
    built, ok = [], True
    for stage_name, params, key in stages:
        if _unknown_name(ctx, key, "stage", stage_name, STAGES):
            ok = False
            continue
        cls = STAGES[stage_name]
        accepted = list(cls.accepted_params())
        if not isinstance(params, Mapping):
            if cls.primary is None:
                ctx.fail(key, f"stage '{stage_name}' takes "
                              f"{', '.join(accepted) or 'no parameters'}: give a mapping, "
                              f"got {describe(params)}")
                ok = False
                continue
            params = {cls.primary: params}
        if _unknown_parameters(ctx, key, f"stage '{stage_name}'", params, accepted,
                               ", ".join(accepted) or "no parameters"):
            ok = False
            continue
        try:
            built.append(cls(**params))
        except (ValueError, TypeError) as exc:
            param = getattr(exc, "param", None)
            pkey = f"{key}.{param}" if param else param_key(key, exc, accepted)
            ctx.fail(pkey, engine_message(exc))
            ok = False
    if not ok:
        return None
    return Pipeline(built, name="pipeline")


def check_groups_alone(ctx: BuildContext) -> None:
    """Check what the groups configure that needs no graph node (optimizers, schedules,
    stages), in a scratch graph: when the graph itself failed to build, these problems are
    reported in the same run."""
    with engine.Graph().as_default():
        global_step = get_or_create_global_step()
        for name, spec in ctx.config.groups.items():
            before = len(ctx.errors)
            lr = build_learning_rate(ctx, name, spec.optimizer, global_step)
            if len(ctx.errors) == before:
                build_optimizer(ctx, name, spec.optimizer, lr, global_step)
            build_pipeline(ctx, name, spec.pipeline)


def _unknown_parameters(ctx: BuildContext, key: str, what: str, params, accepted,
                        takes: str) -> bool:
    """Reports each of ``params`` that ``what`` does not accept, at ``key.param``; True if any."""
    unknown = [param for param in params if param not in accepted]
    for param in unknown:
        ctx.fail(f"{key}.{param}", f"unknown parameter of {what}{did_you_mean(param, accepted)}; "
                                   f"it takes: {takes}")
    return bool(unknown)


def learning_rate_tensor(lr, optimizer) -> Tensor:
    """What the log reports as the group's lr: the schedule's tensor, the configured number, or
    the optimizer's default (adadelta and ftrl have one)."""
    if isinstance(lr, Tensor):
        return lr
    if lr is None:
        default = inspect.signature(type(optimizer).__init__).parameters.get("learning_rate")
        lr = default.default if default is not None and _is_number(default.default) else math.nan
    return engine.constant(float(lr), dtype=engine.float32)


def _yaml_number(value: str) -> bool:
    """A string that YAML 1.1 left a string but the user meant as a number (``1e-3``)."""
    try:
        float(value)
    except ValueError:
        return False
    return True


def _is_number(value) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)
