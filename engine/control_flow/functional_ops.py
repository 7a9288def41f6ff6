"""``tf.map_fn``, ``tf.scan``, ``tf.foldl`` and ``tf.foldr`` on one While op each (as TF builds
them on while_loop): the loop's counter indexes the elements (``gather`` of the rows), and what
``map_fn`` and ``scan`` collect per iteration is stacked by the While op itself (its stacked
results: no TensorArray), with their gradients through WhileGrad. Eagerly, Python loops over the
rows.

``elems`` may be a nested structure of tensors with the same first dimension; ``fn``'s result a
nested structure too (``dtype`` is accepted: the result's structure comes from tracing ``fn``).
"""

from __future__ import annotations

import numpy as np

from ..autodiff.tape import flatten, pack
from ..framework.eager import executing_eagerly
from ..framework.graph import get_default_graph
from ..ops.array import concat, reverse, shape, stack
from ..ops.core import constant, convert_to_tensor
from ..ops.sparse import gather
from .while_loop import build_while


def _elements(elems, what):
    flat = [convert_to_tensor(e) for e in flatten(elems)]
    if not flat:
        raise ValueError(f"{what}: elems must be a tensor or a non-empty structure of tensors")
    for t in flat:
        if t.shape.dims is not None and not t.shape.dims:
            raise ValueError(f"{what}: elements in elems must be 1+ dimensional tensors, not "
                             f"scalars ({t.name})")
    first = flat[0].shape.dims
    return flat, _length(flat[0]), first[0] if first else None


def _length(t):
    dims = t.shape.dims
    return dims[0] if dims and dims[0] is not None else shape(t)[0]


def _rows(flat, i):
    return [gather(t, i) for t in flat]


def _eager_rows(flat):
    arrays = [np.asarray(t) for t in flat]
    return [[constant(a[k]) for a in arrays] for k in range(len(arrays[0]))]


def _stack_eager(results):
    """A structure of tensors stacked over the rows' results (the eager paths)."""
    leaves = [flatten(r) for r in results]
    return pack(results[0], iter(stack([row[j] for row in leaves])
                                 for j in range(len(leaves[0]))))


def map_fn(fn, elems, dtype=None, parallel_iterations=None, back_prop=True, swap_memory=False,
           infer_shape=True, name=None):
    """``tf.map_fn``: ``fn`` on each row of ``elems`` (along axis 0), the results stacked."""
    flat, n, static_n = _elements(elems, "map_fn")
    if executing_eagerly():
        return _stack_eager([fn(pack(elems, iter(row))) for row in _eager_rows(flat)])
    found = {}

    def body(i):
        result = fn(pack(elems, iter(_rows(flat, i))))
        found["structure"] = result
        return [i + 1, *flatten(result)]

    with get_default_graph().name_scope(name or "map"):
        _, _, stacked = build_while(lambda i: i < n, body, [constant(0)], None, None, back_prop,
                                    n_stacked=None, name="while")
    for t in stacked:
        t.set_shape([static_n] + ([None] * (t.shape.ndims - 1) if t.shape.ndims else []))
    return pack(found["structure"], iter(stacked))


def _scan_loop(fn, flat, elems, init_flat, init, n, reverse_order, back_prop, collect):
    """The While of scan/fold: carries (i, accumulator); ``collect`` also stacks it per row."""
    def body(i, *acc):
        index = (n - 1 - i) if reverse_order else i
        x = pack(elems, iter(_rows(flat, index)))
        new = fn(pack(init, iter(acc)), x)
        leaves = [convert_to_tensor(v) for v in flatten(new)]
        return [i + 1, *leaves, *(leaves if collect else [])]

    return build_while(lambda i, *acc: i < n, body, [constant(0), *init_flat], None, None,
                       back_prop, n_stacked=len(init_flat) if collect else 0, name="while")


def _start(elems, flat, initializer, reverse_order):
    """The accumulator's first value and the rows left: ``initializer``, else the first row
    (the last one, in reverse) of ``elems``, which the loop then skips."""
    if initializer is not None:
        init_flat = [convert_to_tensor(v) for v in flatten(initializer)]
        return initializer, init_flat, flat, False
    first = [t[-1] if reverse_order else t[0] for t in flat]
    rest = [t[:-1] if reverse_order else t[1:] for t in flat]
    return elems, first, rest, True


def scan(fn, elems, initializer=None, parallel_iterations=10, back_prop=True, swap_memory=False,
         infer_shape=True, reverse=False, name=None):
    """``tf.scan``: ``a = fn(a, x)`` over the rows ``x`` of ``elems``, every ``a`` stacked (in
    the rows' order, also with ``reverse``); without ``initializer`` the first row (the last,
    in reverse) starts the accumulator and is the first (last) result."""
    flat, _, _ = _elements(elems, "scan")
    if executing_eagerly():
        return _eager_scan(fn, elems, initializer, reverse, collect=True)
    with get_default_graph().name_scope(name or "scan"):
        init, init_flat, flat, from_elems = _start(elems, flat, initializer, reverse)
        n = _length(flat[0])
        _, _, stacked = _scan_loop(fn, flat, elems, init_flat, init, n, reverse, back_prop, True)
        if reverse:
            stacked = [_reverse_rows(t) for t in stacked]
        if from_elems:
            stacked = [concat([t, s[None]] if reverse else [s[None], t], 0)
                       for t, s in zip(stacked, init_flat)]
    return pack(init, iter(stacked))


def _reverse_rows(t):
    return reverse(t, [0])


def _fold(fn, elems, initializer, back_prop, name, reverse_order, what):
    flat, _, _ = _elements(elems, what)
    if executing_eagerly():
        return _eager_scan(fn, elems, initializer, reverse_order, collect=False)
    with get_default_graph().name_scope(name or what):
        init, init_flat, flat, _ = _start(elems, flat, initializer, reverse_order)
        n = _length(flat[0])
        finals, _, _ = _scan_loop(fn, flat, elems, init_flat, init, n, reverse_order, back_prop,
                                  False)
    return pack(init, iter(finals[1:]))


def foldl(fn, elems, initializer=None, parallel_iterations=10, back_prop=True,
          swap_memory=False, name=None):
    """``tf.foldl``: ``a = fn(a, x)`` over the rows of ``elems`` first to last; the last ``a``
    (without ``initializer``, the first row starts it)."""
    return _fold(fn, elems, initializer, back_prop, name, False, "foldl")


def foldr(fn, elems, initializer=None, parallel_iterations=10, back_prop=True,
          swap_memory=False, name=None):
    """``tf.foldr``: as ``foldl`` from the last row to the first."""
    return _fold(fn, elems, initializer, back_prop, name, True, "foldr")


def _eager_scan(fn, elems, initializer, reverse_order, collect):
    flat = [convert_to_tensor(e) for e in flatten(elems)]
    rows = _eager_rows(flat)
    order = list(range(len(rows)))[::-1] if reverse_order else list(range(len(rows)))
    if initializer is None:
        results = {order[0]: pack(elems, iter(rows[order[0]]))}
        acc, order = results[order[0]], order[1:]
    else:
        acc, results = initializer, {}
    for k in order:
        acc = fn(acc, pack(elems, iter(rows[k])))
        results[k] = acc
    if not collect:
        return acc
    return _stack_eager([results[k] for k in sorted(results)])
