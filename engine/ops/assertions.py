"""Run-time assertions: ``tf.Assert`` and the ``tf.assert_*`` checks of TF1's check_ops.

``Assert`` is an op without outputs that fails the run with InvalidArgumentError when its
scalar condition is false, its message TF's kernel's: ``assertion failed: `` then each data
tensor summarized in brackets (at most ``summarize`` values, default 3, as ``tf.Print``).
It is stateful, so a plan runs it when it is fetched or a control dependency, never folds it.

The checks (``assert_equal``, ``assert_less``, ``assert_positive``, ``assert_rank``...) build
their condition and TF's data strings around one Assert; where both sides' values are known
when the graph is built, they fail at once (InvalidArgumentError, or ValueError for a rank),
as TF's static checks do, and ``assert_type`` is only static (TypeError).
"""

from __future__ import annotations

import numpy as np

from ..framework.errors import InvalidArgumentError
from ..framework.graph import get_default_graph
from ..framework.registry import apply, register
from ..framework.tensor_util import static_value
from .array import rank as rank_of
from .comparisons import equal, greater, greater_equal, less, less_equal, not_equal
from .core import convert_to_tensor, no_op
from .logging_ops import summarize_value
from .reduce import reduce_all

DEFAULT_SUMMARIZE = 3


def _assert_forward(state, op, condition, *data):
    if np.ndim(condition) != 0:
        raise InvalidArgumentError(
            f"In[0] should be a scalar: [{','.join(map(str, np.shape(condition)))}]", op=op)
    if not condition:
        limit = op.attrs["summarize"]
        raise InvalidArgumentError(
            "assertion failed: " + " ".join(f"[{summarize_value(d, limit)}]" for d in data), op=op)


def _assert_infer(inputs, summarize):
    if inputs[0].dtype.name != "bool":
        raise TypeError(f"Assert's condition must be bool, not {inputs[0].dtype.name}")
    return []


register("Assert", _assert_forward, _assert_infer, stateful=True)


def Assert(condition, data, summarize=None, name=None):  # noqa: N802
    """An op that fails the run (InvalidArgumentError) when the scalar bool ``condition`` is
    false, printing the tensors of ``data`` (TF1's ``tf.Assert``); eagerly it checks at once."""
    inputs = [convert_to_tensor(condition)] + [convert_to_tensor(d) for d in data]
    return apply("Assert", inputs, name=name or "Assert",
                 summarize=DEFAULT_SUMMARIZE if summarize is None else int(summarize))


def _checked(condition, data, static, summarize):
    """The Assert of a check (inside ``scope``), or a failure now when ``static`` (the
    condition's value known when the graph is built) is False: TF's message is the data,
    strings as they are and tensors' known values, one per line."""
    if static is not None and not bool(np.all(static)):
        lines = [d if isinstance(d, str) else str(static_value(d)) for d in data]
        raise InvalidArgumentError("\n".join(lines))
    return Assert(condition, data, summarize=summarize, name="Assert")


def _binary_assert(symbol, compare, compare_values, default_name):
    def check(x, y, data=None, summarize=None, message=None, name=None):
        with get_default_graph().name_scope(name or default_name):
            x, y = convert_to_tensor(x, name="x"), convert_to_tensor(y, name="y")
            if data is None:
                data = [f"Condition x {symbol} y did not hold element-wise:",
                        f"x ({x.name}) = ", x, f"y ({y.name}) = ", y]
            if message is not None:
                data = [message] + list(data)
            xs, ys = static_value(x), static_value(y)
            static = None if xs is None or ys is None else compare_values(xs, ys)
            condition = reduce_all(compare(x, y))
            return _checked(condition, data, static, summarize)

    check.__name__ = default_name
    check.__doc__ = (f"An Assert that ``x {symbol} y`` holds element-wise (broadcast), failing "
                     "now when both values are known when the graph is built (TF1's "
                     f"``tf.{default_name}``).")
    return check


assert_equal = _binary_assert("==", equal, np.equal, "assert_equal")
assert_none_equal = _binary_assert("!=", not_equal, np.not_equal, "assert_none_equal")
assert_less = _binary_assert("<", less, np.less, "assert_less")
assert_less_equal = _binary_assert("<=", less_equal, np.less_equal, "assert_less_equal")
assert_greater = _binary_assert(">", greater, np.greater, "assert_greater")
assert_greater_equal = _binary_assert(">=", greater_equal, np.greater_equal,
                                      "assert_greater_equal")


def _sign_assert(symbol, binary, zero_first, default_name):
    def check(x, data=None, summarize=None, message=None, name=None):
        with get_default_graph().name_scope(name or default_name):
            x = convert_to_tensor(x, name="x")
            if data is None:
                data = [message or "", f"Condition x {symbol} 0 did not hold element-wise:",
                        f"x ({x.name}) = ", x]
            zero = np.zeros((), x.dtype.np)
            pair = (zero, x) if zero_first else (x, zero)
            return binary(*pair, data=data, summarize=summarize)

    check.__name__ = default_name
    check.__doc__ = (f"An Assert that ``x {symbol} 0`` holds element-wise (TF1's "
                     f"``tf.{default_name}``).")
    return check


assert_positive = _sign_assert(">", assert_less, True, "assert_positive")
assert_negative = _sign_assert("<", assert_less, False, "assert_negative")
assert_non_negative = _sign_assert(">=", assert_less_equal, True, "assert_non_negative")
assert_non_positive = _sign_assert("<=", assert_less_equal, False, "assert_non_positive")


def assert_rank(x, rank, message=None, name=None):
    """That ``x`` has rank ``rank``: a ValueError now when x's static rank is known (TF's
    message), else an Assert on the run-time rank."""
    with get_default_graph().name_scope(name or "assert_rank"):
        x = convert_to_tensor(x)
        prefix = f"{message}  " if message else ""
        if x.shape.ndims is not None:
            if x.shape.ndims != int(rank):
                raise ValueError(f"{prefix}Tensor {x.name} must have rank {int(rank)}.  Received "
                                 f"rank {x.shape.ndims}, shape {x.shape}")
            return no_op(name="static_checks_determined_all_ok")
        actual = rank_of(x)
        data = ([message] if message else []) + [
            f"Tensor {x.name} must have rank", np.int32(rank), "Received shape: ", actual]
        return Assert(equal(actual, np.int32(rank)), data, name="Assert")


def assert_type(tensor, tf_type, message=None, name=None):
    """That ``tensor``'s dtype is ``tf_type`` (static: TypeError, TF's message); a no-op."""
    tensor = convert_to_tensor(tensor)
    if tensor.dtype != tf_type:
        prefix = f"{message}  " if message else ""
        raise TypeError(f"{prefix}{tensor.name} must be of type {tf_type!r}; got "
                        f"{tensor.dtype!r}")
    return no_op(name=name or "statically_determined_correct_type")


def assert_scalar(tensor, name=None):
    """``tensor`` itself after checking that its static rank is 0 (ValueError otherwise)."""
    tensor = convert_to_tensor(tensor, name=name)
    if tensor.shape.ndims != 0:
        raise ValueError(f"Expected scalar shape for {tensor.name}, saw shape: {tensor.shape}.")
    return tensor
