"""``tf.custom_gradient``: a function whose gradient is given by the user, in graphs and eagerly.

The decorated ``f(*x)`` returns ``(y, grad_fn)``; ``grad_fn(*dy)`` returns the gradients of the
inputs (one per argument), or, when ``f`` reads variables that are not among its arguments,
``grad_fn(*dy, variables=...)`` returns ``(input gradients, [one gradient per variable])``.
Uses beyond a more stable formula: straight-through estimators, gradient reversal, clipping a
gradient where it passes an op.

As TF does it: ``f`` runs under a ``GradientTape`` that tells which variables it read. In a graph
the results pass through one ``IdentityN`` op whose inputs are the results, the arguments and
those variables, and which carries the user's rule: ``gradients`` reaches the arguments and the
variables through that rule only, never through the ops inside ``f``. Eagerly the results are
fresh identities that the recording tapes record as one op with that rule. Ops ``grad_fn`` makes
are ordinary ops, so second derivatives go through them.
"""

from __future__ import annotations

import functools
import inspect

from ..framework.eager import executing_eagerly, no_recording, recording_tapes
from ..ops.core import convert_to_tensor, identity, identity_n
from .tape import GradientTape, flatten, pack


def custom_gradient(f=None):
    """Decorator: ``f(*x) -> (y, grad_fn)`` becomes ``h(*x) -> y`` whose gradient is
    ``grad_fn`` (see the module doc); usable as ``@custom_gradient`` or ``@custom_gradient()``."""
    if f is None:
        return custom_gradient

    @functools.wraps(f)
    def decorated(*args, **kwargs):
        if executing_eagerly():
            return _eager_mode(f, args, kwargs)
        return _graph_mode(f, args, kwargs)

    return decorated


def _captured_variables(f, args, kwargs):
    """Run ``f`` under a tape: its result, its grad_fn, and the variables it read that are not
    among its inputs (TF's rule, including the signature check)."""
    with GradientTape() as tape:
        result, grad_fn = f(*args, **kwargs)
    inputs = list(args) + list(kwargs.values())
    variables = [v for v in tape.watched_variables() if all(v is not i for i in inputs)]
    if variables and not _accepts_variables(grad_fn):
        raise TypeError("If using @custom_gradient with a function that uses variables, then "
                        "grad_fn must accept a keyword argument 'variables'.")
    return result, grad_fn, variables


def _accepts_variables(fn):
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return True
    return any(p.name == "variables" or p.kind is p.VAR_KEYWORD for p in params)


def _call_grad_fn(grad_fn, result_grads, variables):
    """The user's gradients, flat: input gradients, then one per variable."""
    if variables:
        input_grads, variable_grads = grad_fn(*result_grads, variables=variables)
        variable_grads = list(variable_grads)
        if len(variable_grads) != len(variables):
            raise ValueError("Must return gradient for each variable from @custom_gradient "
                             "grad_fn.")
    else:
        input_grads, variable_grads = grad_fn(*result_grads), []
    return flatten(input_grads), variable_grads


def _graph_mode(f, args, kwargs):
    if kwargs:
        raise ValueError("The custom_gradient decorator currently supports keywords arguments "
                         "only when eager execution is enabled.")
    args = [convert_to_tensor(x) for x in args]
    result, grad_fn, variables = _captured_variables(f, args, {})
    flat_result = [convert_to_tensor(r) for r in flatten(result)]
    n = len(flat_result)

    def rule(op, *result_grads):
        # One gradient per IdentityN input: none for the results (the ops inside f get
        # nothing), the user's for the arguments and variables. A wrong count is caught by
        # backprop with TF's graph-mode message.
        input_grads, variable_grads = _call_grad_fn(grad_fn, result_grads[:n], variables)
        return [None] * n + input_grads + variable_grads

    outputs = identity_n(flat_result + args + variables, n=n, name="CustomGradient")
    if outputs:
        outputs[0].op._gradient_function = rule
    return pack(result, iter(outputs))


def _eager_mode(f, args, kwargs):
    result, grad_fn, variables = _captured_variables(f, args, kwargs)
    flat_result = [convert_to_tensor(r) for r in flatten(result)]
    inputs = [convert_to_tensor(x) for x in list(args) + variables]
    with no_recording():  # outputs that only the custom op below produces on the tapes
        outputs = [identity(r) for r in flat_result]

    def rule(op, *result_grads):
        input_grads, variable_grads = _call_grad_fn(grad_fn, result_grads, variables)
        if len(input_grads) != len(args):
            raise ValueError(f"custom_gradient function expected to return {len(args)} "
                             f"gradients but returned {len(input_grads)} instead.")
        return input_grads + variable_grads

    name = getattr(f, "__name__", "custom_gradient")
    for tape in recording_tapes():
        if tape._should_record(inputs):
            tape._record("IdentityN", name, {"n": len(outputs)}, inputs, outputs, rule)
    return pack(result, iter(outputs))
