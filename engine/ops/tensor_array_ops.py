"""``tf.TensorArray``: a list of tensors of one dtype, written and read by index, as TF1 loops
collect their per-step results (``ta = ta.write(t, h)`` in a ``while_loop`` body, then
``ta.stack()``).

The value of a TensorArray's ``flow`` tensor is a ``TensorArrayValue``: its elements (each
stored once, as TF's TensorArray resource holds them) and what TF checks of them. A write
stores one element (O(element): a loop writing n steps copies each once) and returns the
array (the flow after the write, which what reads it must run after; old and new flows share
the elements, as TF's flows share the resource). ``scatter`` writes rows at several indices,
``unstack`` / ``split`` cut a tensor's rows into elements (a split's pieces may differ in
length with ``infer_shape=False``, as TF), ``read`` / ``gather`` / ``stack`` / ``concat`` read
them. As TF1, an element is cleared after it is read unless ``clear_after_read=False``: a
second read of it raises. The flow is what a while loop carries. Gradients flow back as dense
arrays [size, *element_shape] through the reads and writes (TensorArrayReadGrad,
TensorArrayWriteGrad), so elements of one shape.
"""

from __future__ import annotations

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework.errors import InvalidArgumentError
from ..framework.registry import apply, register
from ..framework.tensor_shape import TensorShape
from .array import reshape, reshape_like
from .core import convert_to_tensor, no_op


class TensorArrayValue:
    """A TensorArray's elements at run time (a flow's value): ``elements`` (None where not
    written), the element shape its writes must keep (None: any, once ``infer_shape=False``),
    whether it grows and whether a read clears an element."""

    __slots__ = ("elements", "shape", "infer", "dynamic", "clear_after_read", "read", "dtype",
                 "shapes")

    def __init__(self, size, dtype, element_shape, dynamic, infer=True, clear_after_read=True):
        self.elements = [None] * int(size)
        self.shapes = [None] * int(size)  # each written element's shape, kept after a read
        self.shape, self.infer, self.dtype = element_shape, infer, dtype
        self.dynamic, self.clear_after_read = dynamic, clear_after_read
        self.read = set()

    def write(self, index, value, what="write to"):
        index = int(index)
        if index < 0 or (index >= len(self.elements) and not self.dynamic):
            raise InvalidArgumentError(f"Tried to write to index {index} but array is not "
                                       f"resizeable and size is: {len(self.elements)}")
        value = np.array(value, dtype=self.dtype, copy=True)
        if self.infer:
            if self.shape is None:
                self.shape = value.shape
            elif value.shape != self.shape:
                raise InvalidArgumentError(
                    f"Could not {what} TensorArray index {index} because the value shape is "
                    f"{list(value.shape)} which is incompatible with the TensorArray's inferred "
                    f"element shape: {list(self.shape)}")
        if index >= len(self.elements):
            self.elements.extend([None] * (index + 1 - len(self.elements)))
            self.shapes.extend([None] * (index + 1 - len(self.shapes)))
        if self.elements[index] is not None or index in self.read:
            raise InvalidArgumentError(f"Could not write to TensorArray index {index} because "
                                       "it has already been written to.")
        self.elements[index] = value
        self.shapes[index] = value.shape

    def get(self, index):
        """Element ``index`` (zeros of the element shape when not written, as TF), cleared
        after the read unless clear_after_read is off."""
        index = int(index)
        if index < 0 or index >= len(self.elements):
            raise InvalidArgumentError(f"Tried to read from index {index} but array size is: "
                                       f"{len(self.elements)}")
        if index in self.read and self.clear_after_read:
            raise InvalidArgumentError(
                f"Could not read index {index} twice because it was cleared after a previous "
                "read (perhaps try setting clear_after_read = false?)")
        value = self.elements[index]
        if value is None:
            if self.shape is None:
                raise InvalidArgumentError(f"Could not read from TensorArray index {index}: it "
                                           "was not written and the element shape is unknown")
            value = np.zeros(self.shape, self.dtype)
        if self.clear_after_read:
            self.read.add(index)
            self.elements[index] = None
        return value

    def zeros_like(self):
        """The zero gradient of the array: dense zeros in its gradient layout (what
        tf.zeros_like of a flow gives a while loop's gradient)."""
        return np.zeros(self.grad_layout()[0], self.dtype)

    def dense_shape(self):
        """[size, *element_shape] of the dense gradient arrays; -1s for elements of several
        shapes."""
        shapes = {s for s in self.shapes if s is not None}
        if self.shape is not None:
            shapes.add(tuple(self.shape))
        if len(shapes) != 1:
            return np.array([len(self.elements), -1], np.int64)
        return np.array([len(self.elements), *shapes.pop()], np.int64)

    def grad_layout(self):
        """How a gradient of the array is held, asked when the gradient runs (after every
        write: a read's gradient has the array's final size, also when it was read before it
        grew): (shape, None) for elements of one shape, a dense [size, *element_shape]; for
        elements that differ in their first axis (an unequal split) their rows joined,
        (shape, offsets), element i's rows at offsets[i] (what the split's gradient takes)."""
        dense = self.dense_shape()
        if dense[-1] != -1 or len(dense) != 2:
            return tuple(int(d) for d in dense), None
        known = [s for s in self.shapes if s is not None]
        if any(len(s) == 0 or s[1:] != known[0][1:] for s in known):
            raise InvalidArgumentError(f"Gradients through a TensorArray whose elements differ "
                                       f"in shape beyond their first axis are not supported "
                                       f"here: {[list(s) for s in known]}")
        rows = [0 if s is None else s[0] for s in self.shapes]
        offsets = np.concatenate([[0], np.cumsum(rows)])
        return (int(offsets[-1]), *known[0][1:]), offsets


class ReadShape:
    """The second output of a TensorArray read: the array read, whose gradient layout its
    gradient asks when it runs (the array may grow after the read)."""

    __slots__ = ("flow",)

    def __init__(self, flow):
        self.flow = flow


def as_array_value(flow):
    """The TensorArrayValue of a flow's value (eagerly wrapped in a 0-d object array)."""
    if isinstance(flow, np.ndarray) and flow.dtype == object and flow.ndim == 0:
        flow = flow[()]
    return flow


def _new_forward(size, dtype, element_shape, dynamic, infer, clear_after_read):
    """A TensorArray of ``size`` unwritten elements."""
    shape = tuple(element_shape.as_list()) if element_shape.is_fully_defined() else None
    return TensorArrayValue(size, dtype.np, shape, dynamic, infer, clear_after_read)


# The TensorArray ops hold a value that their runs change: never folded or merged.
register("TensorArrayNew", _new_forward,
         lambda inputs, dtype, **_: [(dtype, None)], foldable=False)


def _write_forward(flow, index, value):
    flow = as_array_value(flow)
    flow.write(index, value)
    return flow


def _write_grad(op, g):
    index = op.inputs[1]
    return [apply("TensorArrayWriteGrad", [g, index]), None, read_row(g, index)]


register("TensorArrayWrite", _write_forward, lambda inputs: [(inputs[0].dtype, None)],
         grad=_write_grad, foldable=False)


def _write_grad_forward(g, index):
    """The gradient reaching a written array's input: the written rows' are the values'."""
    g = np.array(g, copy=True)
    if g.ndim:
        index = np.asarray(index).ravel()
        g[index[index < g.shape[0]]] = 0
    return g


register("TensorArrayWriteGrad", _write_grad_forward,
         lambda inputs: [(inputs[0].dtype, inputs[0].shape)],
         grad=lambda op, g: [apply("TensorArrayWriteGrad", [g, op.inputs[1]]), None])


def _read_forward(flow, index, element_shape):
    """Element ``index`` of the flow, or the elements of a vector of indices (gather); the
    second output is the dense shape of the gradient. A dense array (a gradient flow) is read
    by rows."""
    flow, index = as_array_value(flow), np.asarray(index)
    if not isinstance(flow, TensorArrayValue):
        held = flow.shape[0] if flow.ndim else 0
        bad = index[(index < 0) | (index >= held)]
        if bad.size:
            raise InvalidArgumentError(f"Could not read from TensorArray index "
                                       f"{int(bad.flat[0])}: it holds {held} elements")
        return flow[index], np.array(flow.shape, np.int64)
    dense = np.array(ReadShape(flow), dtype=object)
    if index.ndim == 0:
        return flow.get(index), dense
    rows = [flow.get(i) for i in index.tolist()]
    if rows and any(r.shape != rows[0].shape for r in rows):
        raise InvalidArgumentError("TensorArray.gather: the elements gathered differ in shape "
                                   f"({[list(r.shape) for r in rows]})")
    if not rows:
        return np.zeros([0, *(flow.shape or ())], flow.dtype), dense
    return np.stack(rows), dense


def _read_infer(inputs, element_shape):
    """A scalar index reads one element, a vector of them as many rows."""
    index = inputs[1].shape
    rows = element_shape if index.ndims == 0 else TensorShape(
        None if element_shape.dims is None else [index.dims[0] if index.dims else None,
                                                 *element_shape.dims])
    return [(inputs[0].dtype, rows), (_dtypes.int64, TensorShape([None]))]


register("TensorArrayRead", _read_forward, _read_infer,
         grad=lambda op, g, _: [apply("TensorArrayReadGrad", [op.outputs[1], op.inputs[1], g]),
                                None],
         foldable=False)


def _read_grad_forward(shape, index, g):
    """The gradient of a read in its array's gradient layout (``TensorArrayValue
    .grad_layout``); ``shape`` is a dense flow's shape or a ``ReadShape``."""
    shape, index, g = as_array_value(shape), np.asarray(index), np.asarray(g)
    offsets = None
    if isinstance(shape, ReadShape):
        shape, offsets = shape.flow.grad_layout()
    out = np.zeros(tuple(int(d) for d in shape), g.dtype)
    if offsets is None:
        np.add.at(out, index, g)  # a gather's repeated index gets each row's gradient
        return out
    for i, rows in zip(index.reshape(-1).tolist(), g.reshape((-1,) + g.shape[index.ndim:])
                       if index.ndim else [g]):
        out[offsets[i]:offsets[i + 1]] += rows
    return out


register("TensorArrayReadGrad", _read_grad_forward,
         lambda inputs: [(inputs[2].dtype, None)],
         grad=lambda op, d: [None, None, read_row(d, op.inputs[1])])


def _scatter_forward(flow, indices, value):
    flow, indices, value = as_array_value(flow), np.asarray(indices).ravel(), np.asarray(value)
    if value.ndim == 0 or value.shape[0] != indices.size:
        raise InvalidArgumentError(f"TensorArray.scatter: {indices.size} indices for a value of "
                                   f"shape {list(value.shape)} (one row per index)")
    if len(set(indices.tolist())) != indices.size:
        raise InvalidArgumentError(f"Could not scatter to TensorArray: indices "
                                   f"{indices.tolist()} repeat one (each element is written "
                                   "once)")
    for i, row in zip(indices.tolist(), value):
        flow.write(i, row, "scatter to")
    return flow


def _scatter_grad(op, g):
    indices = op.inputs[1]
    return [apply("TensorArrayWriteGrad", [g, indices]), None, read_row(g, indices)]


register("TensorArrayScatter", _scatter_forward, lambda inputs: [(inputs[0].dtype, None)],
         grad=_scatter_grad, foldable=False)


def _split_forward(flow, value, lengths):
    """``value``'s rows cut into pieces of ``lengths`` rows written as the elements."""
    flow, value = as_array_value(flow), np.asarray(value)
    lengths = np.asarray(lengths).ravel()
    if value.ndim == 0:
        raise InvalidArgumentError("TensorArray.split: expected value to be at least a vector")
    if int(lengths.sum()) != value.shape[0]:
        raise InvalidArgumentError(f"TensorArray.split: expected sum of lengths to be equal to "
                                   f"values.shape[0], but sum of lengths is {int(lengths.sum())}"
                                   f" and value's shape is: {list(value.shape)}")
    if not flow.dynamic and lengths.size != len(flow.elements):
        raise InvalidArgumentError(f"TensorArray's size is not equal to the size of lengths "
                                   f"({len(flow.elements)} vs. {lengths.size}), and the "
                                   "TensorArray is not marked as dynamically resizeable")
    for i, (start, n) in enumerate(zip(np.cumsum(lengths) - lengths, lengths)):
        flow.write(i, value[int(start):int(start) + int(n)], "split into")
    return flow


register("TensorArraySplit", _split_forward, lambda inputs: [(inputs[0].dtype, None)],
         grad=lambda op, g: [None, reshape_like(g, op.inputs[1]), None], foldable=False)


def _unstack_forward(flow, value):
    flow, value = as_array_value(flow), np.asarray(value)
    if value.ndim == 0:
        raise InvalidArgumentError("TensorArray.unstack: expected value to be at least a vector")
    if not flow.dynamic and value.shape[0] > len(flow.elements):
        raise InvalidArgumentError(f"Tried to write to index {len(flow.elements)} but array is "
                                   f"not resizeable and size is: {len(flow.elements)}")
    for i, row in enumerate(value):
        flow.write(i, row, "unstack into")
    return flow


register("TensorArrayUnstack", _unstack_forward, lambda inputs: [(inputs[0].dtype, None)],
         grad=lambda op, g: [None, reshape_like(g, op.inputs[1])], foldable=False)


def _all_elements(flow, what):
    flow = as_array_value(flow)
    if not isinstance(flow, TensorArrayValue):  # a gradient's dense array
        return list(flow)
    if flow.elements and all(v is None for v in flow.elements) and not flow.read and \
            flow.shape is None:
        raise InvalidArgumentError(f"TensorArray has size {len(flow.elements)} but nothing was "
                                   f"written to it ({what})")
    return [flow.get(i) for i in range(len(flow.elements))]


def _concat_forward(flow, element_shape):
    rows = _all_elements(flow, "concat")
    if any(r.ndim == 0 for r in rows):
        raise InvalidArgumentError("Concat saw a scalar shape: its elements must be at least "
                                   "vectors")
    if not rows:
        dims = element_shape.dims
        return (np.zeros([0, *(d or 0 for d in dims[1:])] if dims else [0]),
                np.array([0, 0], np.int32))
    joined = np.concatenate(rows)
    # the gradient's dense shape: [size, length, ...], or the joined rows when the lengths
    # differ (what an unequal split's gradient takes)
    uniform = len({r.shape for r in rows}) == 1
    dense = [len(rows), *rows[0].shape] if uniform else list(joined.shape)
    return joined, np.array(dense, np.int32)


def _concat_grad(op, g, _):
    return [reshape(g, op.outputs[1])]


register("TensorArrayConcat", _concat_forward,
         lambda inputs, element_shape: [(inputs[0].dtype, TensorShape(
             None if element_shape.dims is None else [None, *element_shape.dims[1:]])),
             (_dtypes.int32, TensorShape([None]))],
         grad=_concat_grad, foldable=False)


def read_row(buf, index):
    """Row ``index`` of an array's flow (a TensorArray's element)."""
    return apply("TensorArrayRead", [buf, index], element_shape=TensorShape(None))[0]


def _stack_forward(flow, element_shape):
    rows = _all_elements(flow, "stack")
    if not rows:
        return np.zeros([0, *(d or 0 for d in (element_shape.dims or ()))],
                        as_array_value(flow).dtype)
    if any(r.shape != rows[0].shape for r in rows):
        raise InvalidArgumentError(f"TensorArray.stack: the elements differ in shape "
                                   f"({[list(r.shape) for r in rows]}); concat them instead")
    return np.stack(rows)


register("TensorArrayStack", _stack_forward,
         lambda inputs, element_shape: [(inputs[0].dtype, TensorShape(
             None if element_shape.dims is None else [None, *element_shape.dims]))],
         grad=lambda op, g: [g], foldable=False)


register("TensorArraySize", lambda flow: np.int32(len(as_array_value(flow).elements)),
         lambda inputs: [(_dtypes.int32, TensorShape([]))], foldable=False)


class TensorArray:
    """``tf.TensorArray(dtype, size, dynamic_size=False, clear_after_read=True, ...,
    infer_shape=True, element_shape=None)``: see the module's doc. The static element shape is
    inferred from the writes (shared by the arrays a write returns, as TF's) unless
    ``infer_shape=False``; the colocation arguments are accepted."""

    def __init__(self, dtype, size=None, dynamic_size=None, clear_after_read=None,
                 tensor_array_name=None, handle=None, flow=None, infer_shape=True,
                 element_shape=None, colocate_with_first_write_call=True, name=None):
        self._dtype = _dtypes.as_dtype(dtype)
        self._dynamic = bool(dynamic_size)
        self._infer = bool(infer_shape)
        self._shape = [TensorShape(element_shape)]
        if flow is not None:
            self.flow = flow
            return
        if size is None:
            raise ValueError("Size must be provided if handle is not provided")
        self.flow = apply("TensorArrayNew", [convert_to_tensor(size, dtype=_dtypes.int32)],
                          name=name or "TensorArray", dtype=self._dtype,
                          element_shape=self._shape[0], dynamic=self._dynamic,
                          infer=self._infer,
                          clear_after_read=clear_after_read is None or bool(clear_after_read))

    def _with_flow(self, flow):
        out = object.__new__(TensorArray)
        out._dtype, out._dynamic, out._shape, out._infer = (
            self._dtype, self._dynamic, self._shape, self._infer)
        out.flow = flow
        return out

    @property
    def dtype(self):
        return self._dtype

    @property
    def handle(self):
        return self.flow

    @property
    def dynamic_size(self):
        return self._dynamic

    @property
    def element_shape(self):
        return self._shape[0]

    def _merge_shape(self, shape):
        if not self._infer:
            return
        known = self._shape[0]
        if known.dims is None:
            self._shape[0] = TensorShape(shape)
        elif not known.is_compatible_with(shape):
            raise ValueError(f"Inconsistent shapes: saw {shape} but expected {known} (the "
                             "TensorArray's elements)")

    def write(self, index, value, name=None):
        value = convert_to_tensor(value, dtype=self._dtype)
        self._merge_shape(value.shape)
        return self._with_flow(apply(
            "TensorArrayWrite", [self.flow, convert_to_tensor(index, _dtypes.int32), value],
            name=name or "TensorArrayWrite"))

    def read(self, index, name=None):
        return apply("TensorArrayRead", [self.flow, convert_to_tensor(index, _dtypes.int32)],
                     name=name or "TensorArrayRead", element_shape=self._shape[0])[0]

    def stack(self, name=None):
        return apply("TensorArrayStack", [self.flow], name=name or "TensorArrayStack",
                     element_shape=self._shape[0])

    def gather(self, indices, name=None):
        """The elements at ``indices`` stacked."""
        return apply("TensorArrayRead", [self.flow, convert_to_tensor(indices, _dtypes.int32)],
                     name=name or "TensorArrayGather", element_shape=self._shape[0])[0]

    def scatter(self, indices, value, name=None):
        """A TensorArray with the rows of ``value`` written at ``indices``."""
        value = convert_to_tensor(value, dtype=self._dtype)
        if value.shape.dims:
            self._merge_shape(value.shape[1:])
        return self._with_flow(apply(
            "TensorArrayScatter", [self.flow, convert_to_tensor(indices, _dtypes.int32), value],
            name=name or "TensorArrayScatter"))

    def split(self, value, lengths, name=None):
        """A TensorArray whose elements are consecutive pieces of ``value``'s rows, of
        ``lengths`` (unequal lengths need ``infer_shape=False``, as TF)."""
        value = convert_to_tensor(value, dtype=self._dtype)
        lengths = convert_to_tensor(lengths, preferred_dtype=_dtypes.int64)
        if value.shape.dims:
            self._merge_shape([None, *value.shape.dims[1:]])
        return self._with_flow(apply("TensorArraySplit", [self.flow, value, lengths],
                                     name=name or "TensorArraySplit"))

    def concat(self, name=None):
        """The elements concatenated along their first dimension."""
        return apply("TensorArrayConcat", [self.flow], name=name or "TensorArrayConcat",
                     element_shape=self._shape[0])[0]

    def unstack(self, value, name=None):
        """A TensorArray holding the rows of ``value`` (its first dimension is the size)."""
        value = convert_to_tensor(value, dtype=self._dtype)
        if value.shape.dims:
            self._merge_shape(value.shape[1:])
        return self._with_flow(apply("TensorArrayUnstack", [self.flow, value],
                                     name=name or "TensorArrayUnstack"))

    def size(self, name=None):
        """The number of elements when the graph runs (a dynamic array's grows)."""
        return apply("TensorArraySize", [self.flow], name=name or "TensorArraySize")

    def identity(self):
        return self

    def close(self, name=None):
        return no_op(name=name or "TensorArrayClose")
