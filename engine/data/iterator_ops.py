"""``tf.data.Iterator``: the graph ops that walk a dataset in a session, and the eager iterator.

In a graph an iterator is a session resource (``engine/ops/iterator_ops.py``): ``get_next()``
makes an ``IteratorGetNext`` op whose outputs are the element's components, packed into the
element's structure; each run of it advances the iterator, and past the end it raises
``tf.errors.OutOfRangeError``, which ends TF1's ``while True: try: sess.run(...) except
OutOfRangeError: break`` loops. Kinds, as TF1's:

- one-shot (``dataset.make_one_shot_iterator()``): starts at its first ``get_next``;
- initializable (``dataset.make_initializable_iterator()``): ``sess.run(it.initializer,
  feed_dict=...)`` starts (or restarts) a pass, evaluating what the dataset captured, such as
  the placeholders of ``from_tensor_slices``;
- reinitializable (``Iterator.from_structure(types, shapes)``): ``make_initializer(dataset)``
  gives an initializer per dataset of that structure (training and validation sets);
- feedable (``Iterator.from_string_handle(handle, types, shapes)``): each run walks the
  iterator whose handle (``sess.run(iterator.string_handle())``) is fed to ``handle``.

Eagerly, ``iter(dataset)`` (``for x in dataset``) gives an ``EagerIterator`` of eager tensors.
"""

from __future__ import annotations

import itertools

from ..framework import dtypes as _dtypes
from ..framework.eager import eager_mode
from ..framework.errors import OutOfRangeError
from ..framework.graph import Tensor
from ..framework.registry import apply
from ..ops import iterator_ops as _ops  # noqa: F401  (registers MakeIterator, IteratorGetNext)
from ..ops.core import constant
from . import structure as nest
from .structure import TensorSpec


def _placeholders_behind(tensors):
    """A placeholder some of ``tensors`` are computed from, or None."""
    stack, seen = [t.op for t in tensors], set()
    while stack:
        op = stack.pop()
        if op in seen:
            continue
        seen.add(op)
        if op.type == "Placeholder":
            return op
        stack.extend(t.op for t in op.inputs)
        stack.extend(op.control_inputs)
    return None


class Iterator(nest.HasElementSpec):
    """A graph iterator over datasets of one element structure (see module doc)."""

    def __init__(self, element_spec, dataset=None, one_shot=False, shared_name=None):
        self._structure = element_spec
        self._one_shot = one_shot
        self._dataset = dataset
        self._initializer = None
        self._handle_tensor = None
        if one_shot:
            captures = dataset._captures()
            placeholder = _placeholders_behind(captures)
            if placeholder is not None:
                raise ValueError(f"Cannot capture a placeholder (name:{placeholder.name}, "
                                 "type:Placeholder) by value: a one-shot iterator cannot be fed; "
                                 "use make_initializable_iterator() and feed its initializer.")
        elif dataset is not None:
            self._initializer = self.make_initializer(dataset, name="MakeIterator")

    @classmethod
    def from_structure(cls, output_types, output_shapes=None, shared_name=None,
                       output_classes=None):
        """A reinitializable iterator: ``make_initializer(dataset)`` for each dataset it walks."""
        if output_shapes is None:
            output_shapes = nest.map_structure(lambda _: None, output_types)
        types = nest.flatten(output_types)
        shapes = nest.flatten(output_shapes) if nest.is_nested(output_types) else [output_shapes]
        if len(shapes) != len(types):
            raise TypeError("output_shapes must have the structure of output_types")
        return cls(nest.pack(output_types, [TensorSpec(s, _dtypes.as_dtype(d))
                                            for s, d in zip(shapes, types)]))

    @property
    def initializer(self):
        """The op that starts a pass (initializable iterators)."""
        if self._initializer is None:
            raise ValueError("Iterator does not have an initializer: a one-shot iterator starts "
                             "by itself; a reinitializable one has make_initializer(dataset).")
        return self._initializer

    def make_initializer(self, dataset, name=None):
        """An op that starts a pass of this iterator over ``dataset`` (of its structure)."""
        mine, theirs = self._structure, dataset._structure
        if not _compatible(mine, theirs):
            raise TypeError(f"Expected output types and shapes {nest.describe(mine)} but got "
                            f"dataset with {nest.describe(theirs)}.")
        return apply("MakeIterator", dataset._captures(), name=name or "MakeIterator",
                     iterator=self, dataset=dataset)

    def get_next(self, name=None):
        """The next element as tensors (one op; each run advances the iterator)."""
        specs = nest.flatten(self._structure)
        captures = self._dataset._captures() if self._one_shot else []
        outputs = apply("IteratorGetNext", captures, name=name or "IteratorGetNext",
                        iterator=self, dataset=self._dataset if self._one_shot else None,
                        specs=tuple((s.dtype, s.shape) for s in specs))
        outputs = [outputs] if isinstance(outputs, Tensor) else list(outputs)
        return nest.pack(self._structure, outputs)

    def string_handle(self, name=None):
        """A string tensor naming this iterator, to feed to a feedable iterator's handle
        (running it starts a one-shot iterator)."""
        if self._handle_tensor is None:
            self._handle = f"Iterator:{next(_handles)}"
            self._handle_tensor = apply(
                "IteratorToStringHandle", self._dataset._captures() if self._one_shot else [],
                name=name or "IteratorToStringHandle", iterator=self,
                dataset=self._dataset if self._one_shot else None, handle=self._handle)
        return self._handle_tensor

    @staticmethod
    def from_string_handle(string_handle, output_types, output_shapes=None,
                           output_classes=None):
        """A feedable iterator: ``get_next`` walks the iterator whose handle ``string_handle``
        (a scalar string placeholder) holds when it runs."""
        handle = string_handle._as_graph_element() if hasattr(
            string_handle, "_as_graph_element") else string_handle
        if not isinstance(handle, Tensor) or not handle.dtype.is_string:
            raise TypeError(f"string_handle must be a string tensor, got {string_handle!r}")
        return _FeedableIterator(Iterator.from_structure(output_types, output_shapes)._structure,
                                 handle)


def _compatible(mine, theirs) -> bool:
    return nest.same_structure(mine, theirs) and all(
        a.dtype == b.dtype and a.shape.is_compatible_with(b.shape)
        for a, b in zip(nest.flatten(mine), nest.flatten(theirs)))


_handles = itertools.count(1)


class _FeedableIterator(nest.HasElementSpec):
    """``Iterator.from_string_handle``: the iterator is chosen by the fed handle at each run."""

    def __init__(self, element_spec, handle):
        self._structure = element_spec
        self._handle = handle

    def get_next(self, name=None):
        specs = nest.flatten(self._structure)
        mine = self._structure
        outputs = apply("IteratorFromStringHandleGetNext", [self._handle],
                        name=name or "IteratorGetNext",
                        specs=tuple((s.dtype, s.shape) for s in specs),
                        accepts=lambda iterator: _compatible(mine, iterator._structure))
        outputs = [outputs] if isinstance(outputs, Tensor) else list(outputs)
        return nest.pack(self._structure, outputs)


class EagerIterator(nest.HasElementSpec):
    """``iter(dataset)`` eagerly: each element as eager tensors; ``get_next()`` raises
    ``OutOfRangeError`` at the end where ``next()`` raises ``StopIteration``."""

    def __init__(self, dataset):
        self._dataset = dataset
        self._structure = dataset._structure
        self._elements = dataset.start(None, {})

    def __iter__(self):
        return self

    def __next__(self):
        flat = next(self._elements)
        specs = nest.flatten(self._structure)
        with eager_mode():
            tensors = [constant(v, dtype=s.dtype) for v, s in zip(flat, specs)]
        return nest.pack(self._structure, tensors)

    next = __next__

    def get_next(self, name=None):
        try:
            return next(self)
        except StopIteration:
            raise OutOfRangeError("End of sequence") from None


def make_one_shot_iterator(dataset):
    """``tf.compat.v1.data.make_one_shot_iterator``."""
    return dataset.make_one_shot_iterator()


def make_initializable_iterator(dataset, shared_name=None):
    """``tf.compat.v1.data.make_initializable_iterator``."""
    return dataset.make_initializable_iterator(shared_name)


def get_output_types(dataset_or_iterator):
    return dataset_or_iterator.output_types


def get_output_shapes(dataset_or_iterator):
    return dataset_or_iterator.output_shapes
