"""Which steps of a plan form blocked regions (``blocked.Region``: elementwise work over one
large shape, run block by block in cache; see ``blocked``), found once when a plan is compiled.

What a region holds:

- elementwise ops (a registry ``numexpr`` fragment, or a ufunc forward whose numpy dtypes are
  the graph's, ``Cast``, ``AddN``, ``Identity``) whose output has the region's shape and whose
  operands have it too or are size-1 values from outside the region (scalars, broadcast);
- the broadcast of a size-1 value into the full shape (``BroadcastReduced``, ``BroadcastLike``:
  the gradient of a mean or sum) and ``OnesLike``/``ZerosLike`` (they need no values), held as
  one 0-d value; ``SumToShapeOf``/``BroadcastLike`` to the shape their input already has;
- full reductions to a size-1 shape (``Sum``/``Mean`` over every axis, ``SumToShapeOf`` a
  size-1 shape) whose results are used only after the region (or only for their static shape,
  as ``OnesLike`` of the loss in a gradient).

The plan's steps are scanned in order; a region grows while steps fit, steps that depend on it
but do not fit are moved after it, and it closes at any update of a variable or other stateful
step that depends on it. Steps whose values nothing uses inside or after the region (the loss of
a training step that is not fetched, and the square whose only other use is its shape) are not
computed. Regions whose shape is known statically to be smaller than ``blocked.MIN_ELEMENTS``
are not formed at all, so small graphs keep the plain steps; nor are regions of fewer than
``MIN_OPS`` ops that compute per element.
"""

from __future__ import annotations

import math

import numpy as np

from ..framework.registry import get_op
from ..ops.core import SHAPE_ONLY
from . import blocked
from .blocked import FULL, REDUCE_DTYPES, REDUCED, SMALL, Region
from .steps import index_steps

#: a region is formed from this many ops that compute per element (maps and reductions)
MIN_OPS = 2

_SPREAD = ("BroadcastReduced", "BroadcastLike")
#: elementwise ops without a numexpr fragment or a ufunc forward
_ELEMENTWISE = ("Cast", "AddN")
_IDENTITY = ("Identity", "StopGradient")




class Member:
    """One step of a region: ``kind`` is map, reduce, spread, const or alias (a reduction or
    broadcast to the shape its input already has); ``cls`` the class of its value."""

    __slots__ = ("index", "step", "op", "slot", "kind", "cls", "dtype", "value_ins", "shape_ins",
                 "ufunc", "mean", "like", "out_shape", "const", "spread")

    def __init__(self, index, step, kind, cls=None):
        self.index, self.step, self.kind = index, step, kind
        self.cls = cls or {"map": FULL, "reduce": REDUCED}.get(kind, SMALL)
        self.op = step[3]
        self.slot = step[2]
        self.dtype = self.op.outputs[0].dtype.np
        self.value_ins: list[int] = []
        self.shape_ins: list[int] = []
        self.ufunc = None  # map: the ufunc called with out=
        self.mean = False  # reduce, spread: divide by the element count
        self.like = None  # reduce: the slot whose shape the result takes (SumToShapeOf)
        self.out_shape = None  # reduce: static result shape; const: its value's shape or None
        self.const = None  # const: the 0-d (or size-1) value
        self.spread = None  # spread: (axes, keepdims) of BroadcastReduced, or None


def _small(t, rank) -> bool:
    """A static size-1 shape of rank at most ``rank``: broadcast from outside the region."""
    s = t.shape
    return s.is_fully_defined() and math.prod(s.dims) == 1 and len(s.dims) <= rank


def _region_shape(op):
    """The shape a step would make a region over, from its op type; None if it cannot."""
    if op.type in ("Sum", "Mean", "SumToShapeOf"):
        return op.inputs[0].shape.dims
    return op.outputs[0].shape.dims


def _ufunc_for(op_def, op, ins):
    fn = op_def.forward
    if not isinstance(fn, np.ufunc) or op.attrs or fn.nout != 1 or fn.nin != len(ins):
        return None
    dtypes = tuple(t.dtype.np for t in op.inputs)
    try:
        resolved = fn.resolve_dtypes(dtypes + (None,))
    except (TypeError, ValueError):
        return False  # numpy refuses these dtypes: the plain step raises, named
    return fn if resolved[-1] == op.outputs[0].dtype.np else False


def _candidate(index, step, region):
    """The step as a member of ``region`` (or of a new region when None), or None."""
    fn, ins, out, op = step
    if not isinstance(out, int) or len(op.outputs) != 1 or op.control_inputs \
            or len(ins) != len(op.inputs):
        return None
    op_def = get_op(op.type)
    if op_def.stateful or op_def.mutates:
        return None
    shape = _region_shape(op)
    if op.type in SHAPE_ONLY and region is not None and region.classes.get(ins[0]) == REDUCED:
        shape = region.shape  # ones (zeros) of a reduction's static shape: no value needed
    if shape is None or (region is not None and shape != region.shape):
        return None
    if None not in shape and math.prod(shape) < max(blocked.MIN_ELEMENTS, 2):
        return None  # known to be small (one element is never worth blocking)
    rank = len(shape)

    def cls(i):
        """Class of input i: FULL, SMALL, REDUCED (a region reduction), or None (unusable)."""
        slot, t = ins[i], op.inputs[i]
        if region is not None:
            if slot in region.classes:
                return region.classes[slot]
            if slot in region.tainted:
                return None
        if t.shape.dims == shape:
            return FULL
        return SMALL if _small(t, rank) else None

    def external(i):
        return region is None or ins[i] not in region.classes

    kind = op.type
    if kind in ("Sum", "Mean"):
        axes = op.attrs.get("axes")
        if cls(0) != FULL or op.inputs[0].dtype.np not in REDUCE_DTYPES or (
                axes is not None and sorted(a % max(rank, 1) for a in axes) != list(range(rank))):
            return None
        m = Member(index, step, "reduce")
        m.value_ins = [ins[0]]
        m.mean = kind == "Mean"
        m.out_shape = op.outputs[0].shape.dims
        return m if None not in m.out_shape else None
    if kind in _IDENTITY and op.outputs[0].shape.dims == shape and cls(0) in (FULL, SMALL):
        m = Member(index, step, "alias", cls(0))
        m.value_ins = [ins[0]]
        return m
    if kind in ("SumToShapeOf", "BroadcastLike") and op.inputs[1].shape.dims == shape \
            and op.outputs[0].shape.dims == shape and cls(0) in (FULL, SMALL) \
            and cls(1) in (FULL, SMALL):
        m = Member(index, step, "alias", cls(0))  # equal shapes: the plain op returns its input
        m.value_ins, m.shape_ins = [ins[0]], [ins[1]]
        return m
    if kind == "SumToShapeOf":
        like = op.inputs[1]
        if cls(0) != FULL or op.inputs[0].dtype.np not in REDUCE_DTYPES \
                or not external(1) or cls(1) != SMALL:
            return None
        m = Member(index, step, "reduce")
        m.value_ins, m.shape_ins, m.like = [ins[0]], [ins[1]], ins[1]
        m.out_shape = like.shape.dims
        return m
    if kind in _SPREAD:
        g = op.inputs[0]
        if cls(0) != SMALL or cls(1) not in (FULL, SMALL) or op.inputs[1].shape.dims != shape:
            return None
        if kind == "BroadcastReduced":
            axes, keepdims = op.attrs["axes"], op.attrs["keepdims"]
            expanded = g.shape.ndims + (len(axes) if axes is not None and not keepdims else 0)
            if expanded > rank or (axes is not None and any(not -rank <= a < rank for a in axes)):
                return None
            m = Member(index, step, "spread")
            m.mean, m.spread = op.attrs["mean"], (axes, keepdims)
        else:
            m = Member(index, step, "spread")
        m.value_ins, m.shape_ins = [ins[0]], [ins[1]]
        return m
    if kind in SHAPE_ONLY:
        c = cls(0)
        m = Member(index, step, "const")
        if c == REDUCED:  # the value of a reduction is not needed, only its static shape
            m.out_shape = op.outputs[0].shape.dims
            m.const = SHAPE_ONLY[kind](m.out_shape, m.dtype)
        elif c in (FULL, SMALL) and op.inputs[0].shape.dims == shape:
            m.const = SHAPE_ONLY[kind]((), m.dtype)
            m.shape_ins = [ins[0]]
        else:
            return None
        return m
    if op_def.numexpr is None and not isinstance(op_def.forward, np.ufunc) \
            and kind not in _ELEMENTWISE:
        return None
    if op.outputs[0].shape.dims != shape:
        return None
    classes = [cls(i) for i in range(len(ins))]
    if any(c not in (FULL, SMALL) for c in classes):
        return None
    ufunc = _ufunc_for(op_def, op, ins)
    if ufunc is False:
        return None
    m = Member(index, step, "map")
    m.value_ins, m.ufunc = list(ins), ufunc
    return m


class _Open:
    """A region being grown by the scan."""

    def __init__(self, first):
        self.shape = _region_shape(first.op)
        self.members: list[Member] = []
        self.classes: dict[int, str] = {}  # member output slot -> class
        self.tainted: set[int] = set()  # slots of moved steps (they depend on the region)
        self.ops: set = set()  # ops of members and moved steps
        self.deferred: list = []  # (index, step) moved after the region
        self.add(first)

    def add(self, m):
        self.members.append(m)
        self.classes[m.slot] = m.cls
        self.ops.add(m.op)

    def depends(self, step):
        return any(s in self.classes or s in self.tainted for s in step[1]) or \
            any(c in self.ops for c in step[3].control_inputs)

    def defer(self, index, step):
        self.deferred.append((index, step))
        self.ops.add(step[3])
        out = step[2]
        if isinstance(out, int):
            self.tainted.add(out)
        elif isinstance(out, tuple):
            self.tainted.update(out)


def find_regions(steps, protected, fuse=None):
    """Replace the blocked regions of ``steps`` by one step each.

    ``steps`` are the plan's ``(fn, input slots, output slot(s), op)`` in execution order;
    ``protected`` are the slots that must exist after the run (fetches). ``fuse(steps,
    protected)`` (``fusion.fuse_steps``) is applied to the runs of steps between regions, with
    every slot a region reads protected. Returns the new step list.
    """
    if not blocked.enabled():
        return fuse(steps, protected) if fuse else steps
    readers = index_steps(steps).readers
    out: list = []  # steps, with Region entries in place of regions
    region = None

    def close():
        nonlocal region
        if region is not None:
            built = _build(region, readers, protected, fuse)
            if built is None:
                out.extend(s for _, s in sorted([(m.index, m.step) for m in region.members]
                                                + region.deferred, key=lambda p: p[0]))
            else:
                out.append(built)
                out.extend(s for _, s in region.deferred)
        region = None

    for index, step in enumerate(steps):
        if region is not None:
            m = _candidate(index, step, region)
            if m is not None:
                region.add(m)
                continue
            depends = region.depends(step)
            op_def = get_op(step[3].type)
            if depends and not op_def.stateful and _candidate(index, step, None) is None:
                region.defer(index, step)
                continue
            if depends or op_def.mutates or _candidate(index, step, None) is not None:
                close()
            else:
                out.append(step)
                continue
        m = _candidate(index, step, None)
        if m is not None:
            region = _Open(m)
        else:
            out.append(step)
    close()
    if not any(isinstance(s, Region) for s in out):
        return fuse(out, protected) if fuse else out
    return _fuse_between(out, protected, fuse)


def _fuse_between(entries, protected, fuse):
    """Plan steps from ``entries``: regions as steps, the runs between them fused apart."""
    groups, group = [], []
    for e in entries:
        if isinstance(e, Region):
            if group:
                groups.append(group)
            groups.append(e)
            group = []
        else:
            group.append(e)
    if group:
        groups.append(group)
    read_by: dict[int, set[int]] = {}
    for g, grp in enumerate(groups):
        for step in [grp.as_step()] if isinstance(grp, Region) else grp:
            for s in step[1]:
                read_by.setdefault(s, set()).add(g)
    result = []
    for g, grp in enumerate(groups):
        if isinstance(grp, Region):
            result.append(grp.as_step())
        elif fuse is None:
            result.extend(grp)
        else:
            keep = set(protected) | {s for s, gs in read_by.items() if gs - {g}}
            result.extend(fuse(grp, keep))
    return result


def _build(open_region, readers, protected, fuse):
    """A Region for a closed scan, or None when it is not worth one."""
    members = open_region.members
    indices = {m.index for m in members}
    member_slots = {m.slot for m in members}
    outputs = [m.slot for m in members if m.slot in protected
               or any(r not in indices for r in readers.get(m.slot, ()))]
    needed = set(outputs)
    live = []
    for m in reversed(members):
        if m.slot in needed:
            live.append(m)
            needed.update(s for s in m.value_ins if s in member_slots)
    live.reverse()
    if sum(m.kind in ("map", "reduce") for m in live) < MIN_OPS:
        return None
    inputs, full_input = [], False
    for m in members:
        for s, t in zip(m.step[1], m.op.inputs):
            if s in m.value_ins + m.shape_ins and s not in member_slots and s not in inputs:
                inputs.append(s)
                full_input = full_input or t.shape.dims == open_region.shape
    if not full_input:
        return None  # nothing to take the run's shape from
    plain = [m.step for m in members]
    return Region(members, live, inputs, outputs, open_region.shape,
                  fuse(plain, set(outputs)) if fuse else plain)
