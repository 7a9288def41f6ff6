"""The two ops of ``tf.data`` iterators: ``MakeIterator`` (an iterator's initializer) and
``IteratorGetNext`` (the next element, one output per component).

An iterator is a resource of the session that runs these ops (``state.resources``): the
initializer starts a fresh pass over its dataset, ``get_next`` advances it. Neither op knows what
a dataset is: the ``iterator`` attribute is an object (``engine/data/iterator_ops.py``) with
``start(state, captured)``, which returns a Python iterator of elements (flat lists of arrays)
given the values of the tensors the dataset captured (the op's inputs: a placeholder fed to the
initializer, a batch size...). Both are stateful: never folded, deduplicated or skipped. Neither
is differentiable, as in TF.
"""

from __future__ import annotations

import numpy as np

from ..framework.errors import FailedPreconditionError, OutOfRangeError
from ..framework.registry import register


def _make_iterator_forward(state, op, *captured):
    iterator = op.attrs["iterator"]
    state.resources[iterator] = op.attrs["dataset"].start(state, dict(zip(op.inputs, captured)))


def _get_next_forward(state, op, *captured):
    iterator = op.attrs["iterator"]
    elements = state.resources.get(iterator)
    if elements is None:
        if op.attrs["dataset"] is None:
            raise FailedPreconditionError(
                "GetNext() failed because the iterator has not been initialized. Ensure that you "
                "have run the initializer operation for this iterator before getting the next "
                f"element (op '{op.name}').", op=op)
        # A one-shot iterator starts at its first get_next, with the values its inputs captured.
        elements = state.resources[iterator] = op.attrs["dataset"].start(
            state, dict(zip(op.inputs, captured)))
    try:
        flat = next(elements)
    except StopIteration:
        raise OutOfRangeError(f"End of sequence (op '{op.name}')", op=op) from None
    # Own arrays: an element may be a view of the dataset's source, which the plan must never
    # reuse as a buffer.
    flat = [v.copy() if v.base is not None or not v.flags.writeable else v
            for v in map(np.asarray, flat)]
    return flat[0] if len(flat) == 1 else tuple(flat)


def _make_iterator_infer(inputs, iterator, dataset):
    return []


def _get_next_infer(inputs, iterator, dataset, specs):
    return list(specs)


register("MakeIterator", _make_iterator_forward, _make_iterator_infer, stateful=True)
register("IteratorGetNext", _get_next_forward, _get_next_infer, stateful=True)
