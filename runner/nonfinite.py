"""Where a non-finite loss or gradient comes from (``on_nonfinite: raise``): the message of a
diverged run names the first input, variable or graph node holding NaN/Inf."""

from __future__ import annotations

import numpy as np

from engine.framework.indexed_slices import values_of
from runner.model import Model


def diagnose(model: Model, session, batch) -> str:
    """Name the first input, variable or graph node (in config order) holding NaN/Inf for
    this batch, or the first non-finite gradient. The update was gated off, so the
    variables still hold the values the failing forward pass used."""
    m = model
    feed = m.feed(batch, training=True) if batch is not None else {}
    for name in m.inputs:
        if not np.all(np.isfinite(feed[m.inputs[name]])):
            return f"the data fed to input '{name}' holds NaN/Inf"
    variables = session.run(m.variables) if m.variables else {}
    for name, value in variables.items():
        if not np.all(np.isfinite(value)):
            return f"variable '{name}' holds NaN/Inf"
    if m.nodes:
        values = session.run(m.nodes, feed)
        for name, value in values.items():
            value = np.asarray(value)
            if value.dtype.kind == "f" and not np.all(np.isfinite(value)):
                return (f"the first non-finite value is at graph node '{name}' "
                        f"(model.graph.{name})")
    for group in m.groups:
        grads = session.run(group.grads, feed)
        for var_name, grad in zip(group.var_names, grads):
            if not np.all(np.isfinite(values_of(grad))):
                return (f"the forward pass is finite, but the gradient of group "
                        f"'{group.name}' for variable '{var_name}' holds NaN/Inf")
    return ("the loss and the raw gradients are finite; a pipeline stage produced NaN/Inf "
            "(an overflow: a scale or a clip of an infinite norm)")
