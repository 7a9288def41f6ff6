"""Numerics checks: ``check_numerics``, ``verify_tensor_all_finite``, ``add_check_numerics_ops``.

``CheckNumerics`` passes its input through and fails the run with InvalidArgumentError naming
its message when the input holds a NaN or an Inf (TF's kernel message). It is stateful so that
the plan neither folds it nor drops it when nothing reads its output (add_check_numerics_ops
runs the checks through control dependencies only).
"""

from __future__ import annotations

import numpy as np

from ..framework.eager import EagerGraph
from ..framework.errors import InvalidArgumentError
from ..framework.graph import get_default_graph
from ..framework.registry import apply, register
from .core import convert_to_tensor, group


def _check_numerics_forward(state, op, x):
    nan, inf = bool(np.isnan(x).any()), bool(np.isinf(x).any())
    if nan or inf:
        what = "Inf and NaN" if nan and inf else "NaN" if nan else "Inf"
        raise InvalidArgumentError(f"{op.attrs['message']} : Tensor had {what} values", op=op)
    return x


def _check_numerics_infer(inputs, message):
    (x,) = inputs
    if not x.dtype.is_floating:
        raise TypeError(f"Value passed to parameter 'tensor' has DataType {x.dtype.name} not in "
                        "list of allowed values: bfloat16, float16, float32, float64")
    return [(x.dtype, x.shape)]


def _check_numerics_grad(op, grad):
    return [check_numerics(grad, "Not a number (NaN) or infinity (Inf) values detected in "
                                 f"gradient. {op.attrs['message']}")]


register("CheckNumerics", _check_numerics_forward, _check_numerics_infer,
         grad=_check_numerics_grad, stateful=True)


def check_numerics(tensor, message, name=None):
    """``tensor`` unchanged; running it fails if it holds a NaN or an Inf, naming ``message``."""
    return apply("CheckNumerics", [convert_to_tensor(tensor)], name=name or "CheckNumerics",
                 message=str(message))


def verify_tensor_all_finite(t, msg, name=None):
    """TF1's name for ``check_numerics`` (``t`` unchanged, the run fails on NaN or Inf)."""
    return check_numerics(t, msg, name=name or "VerifyFinite")


def add_check_numerics_ops():
    """One op that checks every floating-point tensor of the default graph made so far (each
    named ``op:index`` in the message), the checks chained in creation order as TF's; run it
    with the training op to stop at the first tensor that holds a NaN or an Inf."""
    graph = get_default_graph()
    if isinstance(graph, EagerGraph):
        raise RuntimeError("add_check_numerics_ops() is not compatible with eager execution: "
                           "wrap values in tf.check_numerics instead.")
    ops = graph.get_operations()
    if any(op.type in ("If", "While") for op in ops):  # a branch's tensors are not always computed
        raise ValueError("tf.add_check_numerics_ops() is not compatible with TensorFlow control "
                         "flow operations such as tf.cond() or tf.while_loop().")
    checks = []
    for op in ops:
        if op.type in ("VariableV2", "CheckNumerics"):  # TF skips ref (variable) tensors
            continue
        for output in op.outputs:
            if output.dtype.is_floating:
                with graph.control_dependencies(checks):
                    checks = [check_numerics(output, f"{op.name}:{output.value_index}")]
    return group(*checks)
