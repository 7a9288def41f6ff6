"""TF1's queues (``tf.FIFOQueue``, ``tf.RandomShuffleQueue``, ``tf.PaddingFIFOQueue``) and
their ops: enqueue, enqueue_many, dequeue, dequeue_many, dequeue_up_to, size, close, is_closed.

A queue's contents are a resource of the session that runs its ops (``state.resources``), as
an iterator's are. TF fills queues from threads (``QueueRunner``s started by
``tf.train.start_queue_runners``) while a dequeue blocks; here nothing runs in the background.
Queues are filled on demand, deterministically: a dequeue that finds too few elements runs the
enqueue ops of the queue runners started in that session (``fillers``, registered by
``engine/train/queue_runner.py``), one after the other, until the queue holds enough (for a
``RandomShuffleQueue``, ``min_after_dequeue`` more than it takes, up to its capacity) or the
runners end (a runner whose input is exhausted closes its queue, as TF's do). Then, as in TF:

- a closed queue with too few elements raises ``tf.errors.OutOfRangeError`` (``dequeue_up_to``
  returns what is left first);
- an open queue that nothing fills raises ``FailedPreconditionError`` naming the queue (where TF
  would wait forever: no queue runner was started, or they cannot fill it), or TF's
  ``DeadlineExceededError`` when the session has a timeout (``operation_timeout_in_ms``,
  ``RunOptions.timeout_in_ms``: TF's error once it has waited that long);
- an enqueue into a closed queue raises ``CancelledError``.

``capacity`` is where on-demand filling stops; an ``enqueue`` never blocks (there is no other
thread to make room), so a program that enqueues past it by hand keeps every element.
A ``RandomShuffleQueue`` takes each element uniformly among those it holds (TF's rule) with a
generator seeded from the graph seed and its ``seed`` (its orders are not TF's).
"""

from __future__ import annotations

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework.errors import (
    CancelledError,
    DeadlineExceededError,
    FailedPreconditionError,
    InvalidArgumentError,
    OutOfRangeError,
)
from ..framework.graph import Tensor
from ..framework.registry import apply, register
from ..framework.tensor_shape import TensorShape
from .core import convert_to_tensor


class _Contents:
    """A queue's elements (flat lists of arrays) and whether it is closed, in one session."""

    def __init__(self):
        self.items: list = []
        self.closed = False


def contents(state, queue) -> _Contents:
    found = state.resources.get(queue)
    if found is None:
        found = state.resources[queue] = _Contents()
    return found


def _fill(state, queue, box, n):
    """Run the started runners' enqueue ops until ``box`` holds the ``n`` elements a dequeue
    takes (and ``min_after_dequeue`` more, up to the capacity), the queue closes, or no runner
    can add more."""
    want = n + queue._min_after_dequeue
    if queue._capacity > 0:
        want = max(n, min(want, queue._capacity))
    while len(box.items) < want and not box.closed:
        progressed = False
        for filler in list(queue._fillers):
            progressed = filler(state) or progressed
            if len(box.items) >= want or box.closed:
                break
        if not progressed:
            return


def take(state, op, queue, n, up_to=False):
    """``n`` elements out of ``queue`` (fewer with ``up_to`` once it is closed), as a list of
    flat lists of arrays; fills it on demand first (see module doc)."""
    box = contents(state, queue)
    if len(box.items) < n + queue._min_after_dequeue:
        _fill(state, queue, box, n)
    if len(box.items) < n:
        if box.closed and (not up_to or not box.items):
            raise OutOfRangeError(
                f"{queue._kind} '{queue.name}' is closed and has insufficient elements "
                f"(requested {n}, current size {len(box.items)}) (op '{op.name}')", op=op)
        if not box.closed and getattr(state, "timeout_ms", 0):
            # TF waits the session's timeout for another thread to fill it; none can here
            raise DeadlineExceededError(
                f"Timed out waiting for notification: {queue._kind} '{queue.name}' holds "
                f"{len(box.items)} elements, {n} requested, and nothing fills it "
                f"(op '{op.name}')", op=op)
        if not box.closed:
            raise FailedPreconditionError(
                f"{queue._kind} '{queue.name}' holds {len(box.items)} elements, {n} requested, "
                "and nothing fills it: start its queue runners with "
                "tf.train.start_queue_runners(sess) before running the dequeue, or enqueue more "
                f"(TF would wait here forever) (op '{op.name}')", op=op)
        n = len(box.items)
    if queue._kind != "RandomShuffleQueue":
        out, box.items[:n] = box.items[:n], []
        return out
    rng = state.rng_for(queue.queue_ref.op)
    out = []
    for _ in range(n):
        i = int(rng.integers(len(box.items)))
        box.items[i], box.items[-1] = box.items[-1], box.items[i]
        out.append(box.items.pop())
    return out


def _check_open(op, queue, box):
    if box.closed:
        raise CancelledError(f"{queue._kind} '{queue.name}' is closed (op '{op.name}')", op=op)


def _enqueue_forward(state, op, handle, *components):
    queue = op.attrs["queue"]
    box = contents(state, queue)
    _check_open(op, queue, box)
    box.items.append(queue._checked(op, [np.array(c, copy=True) for c in components]))


def _enqueue_many_forward(state, op, handle, *components):
    queue = op.attrs["queue"]
    box = contents(state, queue)
    _check_open(op, queue, box)
    sizes = {len(c) for c in components}
    if len(sizes) != 1:
        raise _invalid(op, "enqueue_many: the components have different numbers of rows "
                           f"{sorted(sizes)}")
    for row in range(sizes.pop()):
        box.items.append(queue._checked(op, [np.array(c[row], copy=True) for c in components]))


def _invalid(op, message):
    return InvalidArgumentError(f"{message} (op '{op.name}')", op=op)


def _stacked(queue, elements):
    if not elements:
        return queue._empty_batch()
    out = []
    for parts in zip(*elements):
        if queue._kind == "PaddingFIFOQueue":
            longest = np.max([p.shape for p in parts], axis=0)
            batch = np.zeros([len(parts), *longest], dtype=parts[0].dtype)
            for n, p in enumerate(parts):
                batch[(n, *(slice(0, d) for d in p.shape))] = p
            out.append(batch)
        else:
            out.append(np.stack(parts))
    return out


def _single(values):
    return values[0] if len(values) == 1 else tuple(values)


def _dequeue_forward(state, op, handle):
    return _single(take(state, op, op.attrs["queue"], 1)[0])


def _dequeue_many_forward(state, op, handle, n):
    queue = op.attrs["queue"]
    return _single(_stacked(queue, take(state, op, queue, int(n), op.attrs["up_to"])))


def _size_forward(state, op, handle):
    return np.int32(len(contents(state, op.attrs["queue"]).items))


def _close_forward(state, op, handle):
    contents(state, op.attrs["queue"]).closed = True


def _is_closed_forward(state, op, handle):
    return np.bool_(contents(state, op.attrs["queue"]).closed)


def _handle_forward(state, op):
    out = np.empty((), dtype=object)
    out[()] = op.attrs["queue"].name.encode()
    return out


register("QueueHandle", _handle_forward,
         lambda inputs, queue, seed: [(_dtypes.string, TensorShape([]))], stateful=True)
register("QueueEnqueueV2", _enqueue_forward, lambda inputs, queue: [], stateful=True)
register("QueueEnqueueManyV2", _enqueue_many_forward, lambda inputs, queue: [], stateful=True)
register("QueueDequeueV2", _dequeue_forward,
         lambda inputs, queue: [(d, s) for d, s in zip(queue.dtypes, queue.shapes)],
         stateful=True)
register("QueueDequeueManyV2", _dequeue_many_forward,
         lambda inputs, queue, up_to: [(d, TensorShape([None, *s.dims]) if s.dims is not None
                                        else TensorShape(None))
                                       for d, s in zip(queue.dtypes, queue.shapes)],
         stateful=True)
register("QueueSizeV2", _size_forward,
         lambda inputs, queue: [(_dtypes.int32, TensorShape([]))], stateful=True)
register("QueueCloseV2", _close_forward, lambda inputs, queue: [], stateful=True)
register("QueueIsClosedV2", _is_closed_forward,
         lambda inputs, queue: [(_dtypes.bool_, TensorShape([]))], stateful=True)


class QueueBase:
    """A queue of elements of fixed dtypes (and shapes, where given); see module doc."""

    _kind = "FIFOQueue"

    def __init__(self, capacity, dtypes, shapes=None, names=None, shared_name=None,
                 name="fifo_queue", min_after_dequeue=0, seed=None):
        single = not isinstance(dtypes, list | tuple)
        self._dtypes = [_dtypes.as_dtype(d) for d in ([dtypes] if single else dtypes)]
        if shapes is None:
            self._shapes = [TensorShape(None)] * len(self._dtypes)
        else:
            # TF's _as_shape_list: one shape (a TensorShape, or a list of ints and Nones, []
            # included) is the shape of a single component
            if isinstance(shapes, TensorShape) or all(d is None or isinstance(d, int)
                                                      for d in shapes):
                shapes = [shapes]
            if len(shapes) != len(self._dtypes):
                raise ValueError(f"Queue shapes must have the same length as dtypes: "
                                 f"{len(shapes)} != {len(self._dtypes)}")
            self._shapes = [TensorShape(s) for s in shapes]
        if names is not None:
            names = [names] if isinstance(names, str) else list(names)
            if len(names) != len(self._dtypes):
                raise ValueError("Queue names must have the same length as dtypes")
        self._names = names
        self._capacity = int(capacity)
        self._min_after_dequeue = int(min_after_dequeue)
        self._fillers: list = []
        self.queue_ref = apply("QueueHandle", [], name=name, queue=self, seed=seed)
        self._name = self.queue_ref.op.name

    def parts(self):
        """What a ``.meta`` file records of the queue (with its handle op): see ``rebuilt``."""
        return {"kind": self._kind, "capacity": self._capacity,
                "min_after_dequeue": self._min_after_dequeue, "dtypes": self._dtypes,
                "shapes": self._shapes, "names": self._names}

    @staticmethod
    def rebuilt(handle, kind, capacity, min_after_dequeue, dtypes, shapes, names):
        """The queue of ``parts()`` whose handle op (``handle``, a name) is being rebuilt from a
        ``.meta`` file; ``attach`` gives it the handle once made."""
        queue = object.__new__(_KINDS[kind])
        queue._capacity, queue._min_after_dequeue = int(capacity), int(min_after_dequeue)
        queue._dtypes, queue._shapes, queue._names = list(dtypes), list(shapes), names
        queue._fillers, queue._name, queue.queue_ref = [], handle, None
        return queue

    def attach(self, handle):
        """The rebuilt handle tensor of a queue made by ``rebuilt``."""
        self.queue_ref, self._name = handle, handle.op.name

    # -- properties ------------------------------------------------------------------------
    @property
    def name(self):
        return self._name

    @property
    def dtypes(self):
        return list(self._dtypes)

    @property
    def shapes(self):
        return list(self._shapes)

    @property
    def names(self):
        return self._names

    def add_filler(self, filler):
        """Register ``filler(state) -> bool`` (run one enqueue in that session's state; False
        when it added nothing): what on-demand filling runs (``QueueRunner``)."""
        self._fillers.append(filler)

    # -- elements --------------------------------------------------------------------------
    def _components(self, vals, many):
        if self._names is not None:
            if not isinstance(vals, dict) or set(vals) != set(self._names):
                raise ValueError(f"Queue with names {self._names} requires a dict with exactly "
                                 f"those keys, got {vals!r}")
            vals = [vals[k] for k in self._names]
        elif not isinstance(vals, list | tuple):
            vals = [vals]
        if len(vals) != len(self._dtypes):
            raise ValueError(f"Expected {len(self._dtypes)} components, got {len(vals)}")
        tensors = []
        for i, (v, d, s) in enumerate(zip(vals, self._dtypes, self._shapes)):
            t = convert_to_tensor(v, dtype=d)
            shape = t.shape if not many or t.shape.dims is None else TensorShape(t.shape.dims[1:])
            if not shape.is_compatible_with(s):
                raise ValueError(f"Shapes {shape} and {s} are incompatible (component {i} of "
                                 f"an element of {self._kind} '{self.name}')")
            tensors.append(t)
        return tensors

    def _checked(self, op, arrays):
        for i, (a, s) in enumerate(zip(arrays, self._shapes)):
            if not s.is_compatible_with(a.shape):
                raise _invalid(op, f"Shape mismatch in tuple component {i}. Expected {s}, "
                                       f"got {list(a.shape)}")
        return arrays

    def _empty_batch(self):
        return [np.zeros([0, *(s.dims or [])], dtype=object if d.is_string else d.np)
                for d, s in zip(self._dtypes, self._shapes)]

    def _pack(self, outputs):
        outputs = [outputs] if isinstance(outputs, Tensor) else list(outputs)
        for t, s in zip(outputs, self._shapes):
            if t.shape.dims is None and s.dims is not None:
                t.set_shape(s)
        if self._names is not None:
            return dict(zip(self._names, outputs))
        return outputs[0] if len(outputs) == 1 else outputs

    def enqueue(self, vals, name=None):
        """An op adding one element (a tensor, a list of them, or a dict with ``names``)."""
        return apply("QueueEnqueueV2", [self.queue_ref, *self._components(vals, False)],
                     name=name or "enqueue", queue=self)

    def enqueue_many(self, vals, name=None):
        """An op adding the rows of the components as elements."""
        return apply("QueueEnqueueManyV2", [self.queue_ref, *self._components(vals, True)],
                     name=name or "enqueue_many", queue=self)

    def dequeue(self, name=None):
        """The next element (see module doc for when it is empty)."""
        return self._pack(apply("QueueDequeueV2", [self.queue_ref], name=name or "dequeue",
                                queue=self))

    def dequeue_many(self, n, name=None):
        """``n`` elements stacked (OutOfRangeError when a closed queue has fewer)."""
        return self._dequeue_n(n, False, name or "dequeue_many")

    def dequeue_up_to(self, n, name=None):
        """Up to ``n`` elements stacked: fewer only when the queue is closed."""
        return self._dequeue_n(n, True, name or "dequeue_up_to")

    def _dequeue_n(self, n, up_to, name):
        count = convert_to_tensor(n, dtype=_dtypes.int32)
        outputs = apply("QueueDequeueManyV2", [self.queue_ref, count], name=name, queue=self,
                        up_to=up_to)
        outputs = [outputs] if isinstance(outputs, Tensor) else list(outputs)
        static = int(count.op.attrs["value"]) if count.op.type == "Const" and not up_to else None
        for t in outputs:
            if t.shape.dims is not None:
                t.set_shape([static, *t.shape.dims[1:]])
        return self._pack(outputs)

    def size(self, name=None):
        return apply("QueueSizeV2", [self.queue_ref], name=name or "size", queue=self)

    def close(self, cancel_pending_enqueues=False, name=None):
        """An op closing the queue: no more enqueues; dequeues drain what is left."""
        return apply("QueueCloseV2", [self.queue_ref], name=name or "close", queue=self)

    def is_closed(self, name=None):
        return apply("QueueIsClosedV2", [self.queue_ref], name=name or "is_closed", queue=self)


class FIFOQueue(QueueBase):
    """``tf.FIFOQueue(capacity, dtypes, shapes=None, names=None)``: first in, first out."""

    def __init__(self, capacity, dtypes, shapes=None, names=None, shared_name=None,
                 name="fifo_queue"):
        super().__init__(capacity, dtypes, shapes, names, shared_name, name)


class PaddingFIFOQueue(QueueBase):
    """``tf.PaddingFIFOQueue``: a FIFOQueue whose ``dequeue_many`` pads each component with
    zeros to the longest element's shape (dims given as None in ``shapes``)."""

    _kind = "PaddingFIFOQueue"

    def __init__(self, capacity, dtypes, shapes, names=None, shared_name=None,
                 name="padding_fifo_queue"):
        super().__init__(capacity, dtypes, shapes, names, shared_name, name)


class RandomShuffleQueue(QueueBase):
    """``tf.RandomShuffleQueue(capacity, min_after_dequeue, dtypes, shapes=None, seed=None)``:
    each dequeue takes a uniformly random element, once the queue holds ``min_after_dequeue``
    more than it takes (or is closed)."""

    _kind = "RandomShuffleQueue"

    def __init__(self, capacity, min_after_dequeue, dtypes, shapes=None, names=None, seed=None,
                 shared_name=None, name="random_shuffle_queue"):
        if min_after_dequeue >= capacity:
            raise ValueError(f"min_after_dequeue ({min_after_dequeue}) must be below capacity "
                             f"({capacity})")
        super().__init__(capacity, dtypes, shapes, names, shared_name, name,
                         min_after_dequeue=min_after_dequeue, seed=seed)


_KINDS = {cls._kind: cls for cls in (FIFOQueue, PaddingFIFOQueue, RandomShuffleQueue)}


# -- the op of the input producers' epochs (engine/train/input.py) ---------------------------------


def _limit_epochs_forward(state, op, tensor):
    """``tensor`` itself, ``num_epochs`` times per session; then OutOfRangeError (TF counts in a
    local variable with count_up_to; here the count is the session's, so nothing to
    initialize)."""
    key = (op, "epochs")
    done, num_epochs = state.resources.get(key, 0), op.attrs["num_epochs"]
    if done >= num_epochs:
        raise OutOfRangeError(f"Reached limit of {num_epochs} (op '{op.name}')", op=op)
    state.resources[key] = done + 1
    return tensor


register("LimitEpochs", _limit_epochs_forward, lambda inputs, num_epochs: [
    (inputs[0].dtype, inputs[0].shape)], stateful=True)


def limit_epochs(tensor, num_epochs=None, name=None):
    """``tf.train.limit_epochs``: ``tensor``, and OutOfRangeError after ``num_epochs`` runs
    (None: no limit)."""
    tensor = convert_to_tensor(tensor)
    if num_epochs is None:
        return tensor
    if num_epochs <= 0:
        raise ValueError(f"num_epochs must be > 0 not {num_epochs}.")
    return apply("LimitEpochs", [tensor], name=name or "limit_epochs", num_epochs=int(num_epochs))
