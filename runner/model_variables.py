"""The graph's leaves from the config: the inputs' placeholders, the constants, and the variables
with their initial values (a literal, or an initializer seeded from the variable's name).

Floating dtypes go through ``BuildContext.dtype``, so that gradcheck's float64 twin of a model has
the same leaves in float64.
"""

from __future__ import annotations

import zlib

import numpy as np

import engine
from engine.framework.graph import GraphKeys, Tensor
from runner.config_specs import InitSpec, VariableSpec
from runner.model_context import BuildContext, engine_message


def build_inputs(ctx: BuildContext) -> dict[str, Tensor]:
    """A placeholder per declared input, named as the input."""
    return {name: engine.placeholder(ctx.dtype(spec.dtype), shape=spec.graph_shape, name=name)
            for name, spec in ctx.spec.inputs.items()}


def build_constants(ctx: BuildContext) -> dict[str, Tensor]:
    return {name: engine.constant(spec.value, dtype=ctx.dtype(spec.dtype), name=name)
            for name, spec in ctx.spec.constants.items()}


def build_variables(ctx: BuildContext) -> dict[str, engine.Variable]:
    """Every declared variable that could be made (the others are reported to ``ctx``)."""
    variables = {}
    for name, spec in ctx.spec.variables.items():
        var = build_variable(ctx, spec)
        if var is not None:
            variables[name] = var
    return variables


def build_variable(ctx: BuildContext, spec: VariableSpec):
    """Variable ``spec`` with its initial value, or None after reporting why it has none."""
    key = f"model.variables.{spec.name}"
    dtype = ctx.dtype(spec.dtype)
    collections = [GraphKeys.GLOBAL_VARIABLES, *spec.collections]
    try:
        if isinstance(spec.init, InitSpec):
            initializer = engine_initializer(spec.init, seed_of(spec.engine_name))
            initial = initializer(spec.shape, dtype=engine.as_dtype(dtype))
        else:
            initial = np.asarray(spec.init, dtype=np.dtype(dtype))
        return engine.Variable(initial, trainable=spec.trainable, collections=collections,
                               name=spec.engine_name, dtype=dtype, shape=list(spec.shape))
    except (ValueError, TypeError, engine.ShapeError) as exc:
        ctx.fail(f"{key}.init", engine_message(exc))
        return None


def engine_initializer(spec: InitSpec, seed: int):
    """The engine initializer for an InitSpec, seeded with ``seed``."""
    init = engine.initializers
    p = spec.params
    if spec.name == "zeros":
        return init.Zeros()
    if spec.name == "ones":
        return init.Ones()
    if spec.name == "constant":
        return init.Constant(p["value"])
    if spec.name == "normal":
        return init.RandomNormal(p["mean"], p["stddev"], seed=seed)
    if spec.name == "truncated_normal":
        return init.TruncatedNormal(p["mean"], p["stddev"], seed=seed)
    if spec.name == "uniform":
        return init.RandomUniform(p["minval"], p["maxval"], seed=seed)
    if spec.name == "glorot_uniform":
        return init.glorot_uniform_initializer(seed=seed)
    if spec.name == "glorot_normal":
        return init.glorot_normal_initializer(seed=seed)
    if spec.name == "he_normal":
        return init.he_normal(seed=seed)
    if spec.name == "he_uniform":
        return init.he_uniform(seed=seed)
    if spec.name == "orthogonal":
        return init.Orthogonal(p["gain"], seed=seed)
    if spec.name == "variance_scaling":
        return init.VarianceScaling(p["scale"], p["mode"], p["distribution"], seed=seed)
    raise ValueError(f"unknown initializer {spec.name!r}")


def seed_of(name: str) -> int:
    """A variable's op seed, from its name: adding a variable never changes another's values."""
    return zlib.crc32(name.encode()) & 0x7FFFFFFF
