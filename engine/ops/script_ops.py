"""``tf.py_func``, ``tf.numpy_function`` and ``tf.py_function``: a Python function as an op.

The function runs when the op runs (every time: the op is stateful, never folded or merged),
on numpy arrays (``py_func``, ``numpy_function``) or on eager tensors (``py_function``), and its
results become arrays of the declared ``Tout`` dtypes. Its outputs' shapes are unknown, as in TF
(``set_shape`` on them where the program knows better). It has no gradient, as in TF1, unless
the program gives one (``gradient_override_map({"PyFunc": "MyGrad"})``).
"""

from __future__ import annotations

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework.eager import eager_mode
from ..framework.errors import InvalidArgumentError, OpError
from ..framework.registry import apply, register
from .core import constant, convert_to_tensor


def _results(op, result):
    """The function's result as arrays of the op's output dtypes (TF's checks and messages)."""
    touts = op.attrs["Tout"]
    if not op.attrs["single"]:
        if result is None:
            result = []
        if not isinstance(result, list | tuple):
            result = [result]
        if len(result) != len(touts):
            raise InvalidArgumentError(
                f"{op.type} (op '{op.name}'): the function returned {len(result)} values, "
                f"Tout declares {len(touts)}")
    else:
        result = [result]
    out = []
    for i, (value, dtype) in enumerate(zip(result, touts)):
        value = np.asarray(getattr(value, "_value", value))
        if op.type == "EagerPyFunc" and dtype != _dtypes.string:  # TF converts eager results
            value = np.asarray(value, dtype=dtype.np)
        if dtype == _dtypes.string:
            value = value.astype(object)
        elif value.dtype != dtype.np:  # TF converts nothing: the dtype must be the declared one
            raise InvalidArgumentError(
                f"{i}-th value returned by {op.type} (op '{op.name}') is {value.dtype}, but "
                f"expects {dtype.name}")
        out.append(value)
    return out


def _call(op, args):
    try:
        return op.attrs["func"](*args)
    except OpError:
        raise
    except Exception as exc:  # the program's own error, named with the op that ran it
        raise InvalidArgumentError(f"{op.type} (op '{op.name}'): {type(exc).__name__}: {exc}") \
            from exc


def _py_func_forward(state, op, *inputs):
    out = _results(op, _call(op, [np.asarray(x) for x in inputs]))
    return out[0] if len(out) == 1 else out


def _eager_py_func_forward(state, op, *inputs):
    with eager_mode():
        args = [constant(np.asarray(x)) for x in inputs]
        out = _results(op, _call(op, args))
    return out[0] if len(out) == 1 else out


def _infer(inputs, Tout, **_):  # noqa: N803 (TF's attribute name)
    return [(dtype, None) for dtype in Tout]


register("PyFunc", _py_func_forward, _infer, stateful=True, foldable=False)
register("EagerPyFunc", _eager_py_func_forward, _infer, stateful=True, foldable=False)


def _apply(op_type, func, inp, Tout, name):  # noqa: N803
    if not callable(func):
        raise TypeError(f"func must be callable, got {type(func).__name__}")
    single = not isinstance(Tout, list | tuple)
    touts = tuple(_dtypes.as_dtype(t) for t in ([Tout] if single else Tout))
    inputs = [convert_to_tensor(x) for x in (inp if isinstance(inp, list | tuple) else [inp])]
    out = apply(op_type, inputs, name=name or op_type, func=func, Tout=touts, single=single)
    if single:
        return out
    if not touts:
        return []
    return [out] if len(touts) == 1 else list(out)


def py_func(func, inp, Tout, stateful=True, name=None):  # noqa: N803
    """``tf.py_func``: ``func`` on the inputs' numpy values, its result(s) of dtype ``Tout``
    (a dtype: one tensor; a list: a list). ``stateful=False`` is accepted; the op runs every time
    either way."""
    return _apply("PyFunc", func, inp, Tout, name)


def numpy_function(func, inp, Tout, name=None):  # noqa: N803
    """``tf.numpy_function``: ``py_func`` under its TF 1.14+ name."""
    return _apply("PyFunc", func, inp, Tout, name)


def py_function(func, inp, Tout, name=None):  # noqa: N803
    """``tf.py_function``: ``func`` on eager tensors of the inputs' values (it may use TF ops
    eagerly); no gradient here (TF differentiates it with a tape)."""
    return _apply("EagerPyFunc", func, inp, Tout, name)
