"""``tf.TensorArray``: a list of tensors of one dtype, written and read by index, as TF1 loops
collect their per-step results (``ta = ta.write(t, h)`` in a ``while_loop`` body, then
``ta.stack()``).

Here a TensorArray is a value: its ``flow`` tensor holds all its elements as one array
[size, *element_shape] (allocated at the first write when the element shape is not declared),
and ``write`` returns a new TensorArray whose flow is a copy with the row set (TF's semantics:
use the returned array). The flow is what a while loop carries; its gradient flows back through
the writes and reads (TensorArrayWriteGrad, TensorArrayReadGrad). Each write copies the array,
so a loop writing n rows costs O(n^2) copying: fine for the sizes of tutorials.
"""

from __future__ import annotations

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework.errors import InvalidArgumentError
from ..framework.graph import TensorShape
from ..framework.registry import apply, register
from .array import shape as _shape
from .core import convert_to_tensor, no_op
from .sparse import gather


def _new_forward(size, dtype, element_shape):
    if element_shape.is_fully_defined():
        return np.zeros([int(size), *element_shape.as_list()], dtype.np)
    return np.zeros([0], dtype.np)  # allocated by the first write, once its shape is known


register("TensorArrayNew", _new_forward,
         lambda inputs, dtype, element_shape: [(dtype, None)])


def _write_forward(buf, index, value, size, dynamic):
    index, size = int(index), int(size)
    value = np.asarray(value)
    if buf.ndim == 1 and buf.shape[0] == 0:  # nothing written yet: allocate
        buf = np.zeros([max(size, index + 1) if dynamic else size, *value.shape], value.dtype)
    if index < 0 or (index >= buf.shape[0] and not dynamic):
        raise InvalidArgumentError(f"Tried to write to index {index} but array is not resizeable "
                                   f"and size is: {buf.shape[0]}")
    if buf.shape[1:] != value.shape:
        raise InvalidArgumentError(f"Could not write to TensorArray index {index}: the element "
                                   f"has shape {list(value.shape)}, the array's elements "
                                   f"{list(buf.shape[1:])}")
    if index >= buf.shape[0]:
        grown = np.zeros([index + 1, *buf.shape[1:]], buf.dtype)
        grown[:buf.shape[0]] = buf
        buf = grown
    else:
        buf = buf.copy()
    buf[index] = value
    return buf


def _write_grad(op, g):
    index = op.inputs[1]
    return [apply("TensorArrayWriteGrad", [g, index]), None, read_row(g, index), None]


register("TensorArrayWrite", _write_forward, lambda inputs, dynamic: [(inputs[0].dtype, None)],
         grad=_write_grad)


def _write_grad_forward(g, index):
    """The gradient reaching a written array's input: the written row's is the value's."""
    g = np.array(g, copy=True)
    if g.ndim and int(index) < g.shape[0]:
        g[int(index)] = 0
    return g


register("TensorArrayWriteGrad", _write_grad_forward,
         lambda inputs: [(inputs[0].dtype, inputs[0].shape)],
         grad=lambda op, g: [apply("TensorArrayWriteGrad", [g, op.inputs[1]]), None])


def _read_forward(buf, index, element_shape):
    index = int(index)
    if buf.ndim == 0 or not 0 <= index < buf.shape[0]:
        raise InvalidArgumentError(f"Could not read from TensorArray index {index}: it holds "
                                   f"{0 if buf.ndim == 0 else buf.shape[0]} elements written")
    return buf[index], np.array(buf.shape, np.int64)


register("TensorArrayRead", _read_forward,
         lambda inputs, element_shape: [(inputs[0].dtype, element_shape),
                                        (_dtypes.int64, TensorShape([None]))],
         grad=lambda op, g, _: [apply("TensorArrayReadGrad", [op.outputs[1], op.inputs[1], g]),
                                None],
         aliases_input=True)


def _read_grad_forward(shape, index, g):
    out = np.zeros(tuple(shape), np.asarray(g).dtype)
    out[int(index)] = g
    return out


register("TensorArrayReadGrad", _read_grad_forward,
         lambda inputs: [(inputs[2].dtype, None)],
         grad=lambda op, d: [None, None, read_row(d, op.inputs[1])])


def read_row(buf, index):
    """Row ``index`` of an array's flow (a TensorArray's element)."""
    return apply("TensorArrayRead", [buf, index], element_shape=TensorShape(None))[0]


def _stack_forward(buf, size, element_shape):
    if buf.ndim == 1 and buf.shape[0] == 0 and int(size) == 0 and element_shape.ndims:
        return np.zeros([0, *(d or 0 for d in element_shape.dims)], buf.dtype)
    if buf.ndim == 1 and buf.shape[0] == 0 and int(size) != 0:
        raise InvalidArgumentError(f"TensorArray has size {int(size)} but nothing was "
                                   "written to it")
    return buf


register("TensorArrayStack", _stack_forward,
         lambda inputs, element_shape: [(inputs[0].dtype, TensorShape(
             None if element_shape.dims is None else [None, *element_shape.dims]))],
         grad=lambda op, g: [g, None], aliases_input=True)


class TensorArray:
    """``tf.TensorArray(dtype, size, dynamic_size=False, element_shape=None, ...)``: see the
    module's doc. ``clear_after_read``, ``infer_shape`` and the colocation arguments are
    accepted; the element shape is inferred from the first write (shared by the arrays a write
    returns, as TF's)."""

    def __init__(self, dtype, size=None, dynamic_size=None, clear_after_read=None,
                 tensor_array_name=None, handle=None, flow=None, infer_shape=True,
                 element_shape=None, colocate_with_first_write_call=True, name=None):
        self._dtype = _dtypes.as_dtype(dtype)
        self._dynamic = bool(dynamic_size)
        if flow is not None:
            if size is None:
                raise ValueError("a TensorArray made from a flow needs its size")
            self._size, self.flow = convert_to_tensor(size, dtype=_dtypes.int32), flow
            self._shape = [TensorShape(element_shape)]
            return
        if size is None:
            raise ValueError("Size must be provided if handle is not provided")
        self._size = convert_to_tensor(size, dtype=_dtypes.int32)
        self._shape = [TensorShape(element_shape)]
        self.flow = apply("TensorArrayNew", [self._size], name=name or "TensorArray",
                          dtype=self._dtype, element_shape=self._shape[0])

    def _with_flow(self, flow):
        out = object.__new__(TensorArray)
        out._dtype, out._dynamic, out._size, out._shape = (self._dtype, self._dynamic,
                                                           self._size, self._shape)
        out.flow = flow
        return out

    @property
    def dtype(self):
        return self._dtype

    @property
    def handle(self):
        return self.flow

    @property
    def element_shape(self):
        return self._shape[0]

    def _merge_shape(self, shape):
        known = self._shape[0]
        if known.dims is None:
            self._shape[0] = TensorShape(shape)
        elif not known.is_compatible_with(shape):
            raise ValueError(f"Inconsistent shapes: saw {shape} but expected {known} (the "
                             "TensorArray's elements)")

    def write(self, index, value, name=None):
        value = convert_to_tensor(value, dtype=self._dtype)
        self._merge_shape(value.shape)
        flow = apply("TensorArrayWrite", [self.flow, convert_to_tensor(index, _dtypes.int32),
                                          value, self._size], name=name or "TensorArrayWrite",
                     dynamic=self._dynamic)
        return self._with_flow(flow)

    def read(self, index, name=None):
        return apply("TensorArrayRead", [self.flow, convert_to_tensor(index, _dtypes.int32)],
                     name=name or "TensorArrayRead", element_shape=self._shape[0])[0]

    def stack(self, name=None):
        return apply("TensorArrayStack", [self.flow, self._size], name=name or "TensorArrayStack",
                     element_shape=self._shape[0])

    def gather(self, indices, name=None):
        return gather(self.stack(), indices, name=name or "TensorArrayGather")

    def unstack(self, value, name=None):
        """A TensorArray holding the rows of ``value`` (its first dimension is the size)."""
        value = convert_to_tensor(value, dtype=self._dtype)
        if value.shape.dims:
            self._merge_shape(value.shape[1:])
        out = self._with_flow(apply("TensorArrayStack", [value, _shape(value)[0]],
                                    name=name or "TensorArrayUnstack",
                                    element_shape=self._shape[0]))
        out._size = _shape(value)[0]
        return out

    def size(self, name=None):
        return self._size

    def identity(self):
        return self

    def close(self, name=None):
        return no_op(name=name or "TensorArrayClose")
