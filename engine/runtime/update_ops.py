"""In-place update ops: how optimizers and gradient stages write variables and slots.

An update op is a registered op like TF's ``ApplyAdam`` kernels: stateful and mutating, with the
variables it writes named in its attributes (``var``, ``m``, ``v``, ...) and the gradient and the
hyperparameters as its inputs. Its kernel is plain numpy that updates the live arrays in place
(``+=``, ``np.copyto``), so views held elsewhere stay valid and float32 stays float32.

Kernels that need temporaries declare ``scratch=n`` and receive ``n`` preallocated buffers (kept
per op and session, so a step allocates nothing). Large arrays are updated in blocks of
``BLOCK`` elements: the several passes of an optimizer formula then run over data still in the
core's cache, instead of streaming every full-size array from memory once per pass. Each element
sees the same operations in the same order either way, so blocking changes no result.

Gating: any update op may take one extra boolean scalar input, the *gate*. When the gate is False
at run time the op writes nothing. This is how a gradient pipeline skips a group's update on a
step (``skip_nonfinite``, ``accumulate``) without control flow in the graph. ``GatedAssign``,
``GatedAssignAdd`` and ``GatedAssignSub`` are the gated forms of ``assign``/``assign_add``/
``assign_sub`` for state that is not updated by an optimizer kernel.

The plan passes over update steps (folding a gradient's scale into its update, batching the
updates of a step into one pool of blocks, ``run_jobs``) are in ``plan_passes.py``.
"""

from __future__ import annotations

import functools
import itertools
import math
import operator
import threading
from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework import workers
from ..framework.errors import InvalidArgumentError, ShapeError
from ..framework.registry import apply, register
from ..ops.core import convert_to_tensor
from ..ops.variables import assign, assign_add, assign_sub, variable_ref
from . import compiled as _compiled

#: elements per block of a blocked update: Adam's 7 block-sized float32 arrays (3.5 MB) stay in
#: the shared L3 cache. Measured for Adam over 10 x 1e6 float32 on 2 threads (2026-11-23): 64K
#: 17-19 ms, 128K 14-17 ms, 256K+ 21-24 ms; smaller blocks lose to the per-call overhead and to
#: the GIL handoffs of two threads (16K: 29-38 ms)
BLOCK = 131_072
#: threads updating the blocks of one large array (numpy's loops release the GIL)
THREADS = workers.UPDATE_THREADS
#: elements from which an update is split over THREADS threads
PARALLEL_MIN = 2 * BLOCK

def _scratch(state, op, out, n, workers=None):
    """Scratch for op's kernel: one list of ``n + 1`` buffers of ``out``'s dtype per worker
    thread (the last for a scaled gradient's block), one block long, or the size of an array
    too small to block. Made once where the state keeps scratch (a session; eager ops allocate
    them) and shared by the session's update ops of the same dtype and size run from the same
    thread (an update runs to its end before the next starts), so a model with many large
    variables holds one set of blocks, not one per variable."""
    blocked = out.flags.c_contiguous and out.size > BLOCK
    size = BLOCK if blocked else out.size
    if workers is None:
        workers = THREADS if blocked and out.size >= PARALLEL_MIN else 1
    cache = getattr(state, "scratch", None)
    key = (threading.get_ident(), out.dtype, size, n, workers)
    bufs = None if cache is None else cache.get(key)
    if bufs is None:
        bufs = [[np.empty(size, out.dtype) for _ in range(n + 1)] for _ in range(workers)]
        if cache is not None:
            cache[key] = bufs
    return bufs


def _run_blocks(kernel, flat, value, scale, args, static, bufs, starts):
    """The blocks starting at the offsets ``starts`` yields, on this thread's scratch ``bufs``.
    ``starts`` may be shared with other threads: each block is taken once, by whichever thread
    is free (a thread the machine delays leaves its blocks to the others; a block's values do
    not depend on the thread). The gradient is ``value * scale`` when ``scale`` is given,
    computed per block into the spare buffer."""
    *scratch, spare = bufs
    n = value.size
    for start in starts:
        end = min(start + BLOCK, n)
        grad = value[start:end]
        if scale is not None:
            grad = np.multiply(grad, scale, out=spare[:end - start])
        kernel(*[a[start:end] for a in flat], grad, *args,
               scratch=[b[:end - start] for b in scratch], **static)


def _run_kernel(kernel, arrays, value, args, static, bufs, scale=None):
    """``kernel(*arrays, value [* scale], *args, scratch=...)``, in blocks when the arrays are
    large and contiguous, the blocks shared out to the workers of ``bufs`` (one list of scratch
    buffers per worker, see ``_scratch``) from ``PARALLEL_MIN`` elements."""
    out = arrays[0]
    n = out.size
    if n <= BLOCK or not all(a.flags.c_contiguous for a in arrays):
        own = bufs[0] if bufs[0][0].size == n else [np.empty(n, out.dtype) for _ in bufs[0]]
        own = [b.reshape(out.shape) for b in own]
        if scale is not None:
            value = np.multiply(value, scale, out=own[-1])
        kernel(*arrays, value, *args, scratch=own[:-1], **static)
        return
    flat = [a.reshape(-1) for a in arrays]
    value = np.reshape(value, -1)
    starts = iter(range(0, n, BLOCK))  # a range iterator's next() is atomic under the GIL
    run = functools.partial(_run_blocks, kernel, flat, value, scale, args, static)
    futures = [workers.submit(run, bufs[w], starts)
               for w in range(1, len(bufs) if n >= PARALLEL_MIN else 1)]
    run(bufs[0], starts)
    for f in futures:
        f.result()


class _Job:
    """A blocked update prepared by its op's forward (``jobs=``) and run by ``run_jobs``."""

    __slots__ = ("kernel", "flat", "value", "scale", "args", "static", "state", "op", "scratch")

    def __init__(self, kernel, flat, value, scale, args, static, state, op, scratch):
        self.kernel, self.flat, self.value, self.scale = kernel, flat, value, scale
        self.args, self.static, self.state, self.op, self.scratch = args, static, state, op, scratch


def run_jobs(jobs):
    """The blocks of every job, handed out from one queue to the calling thread and the pool, so
    a group's updates are one parallel pass whatever the number of its variables: no wait at the
    end of each variable, no thread left idle while the last blocks of one variable finish."""
    total = sum(job.value.size for job in jobs)
    workers_n = THREADS if total >= PARALLEL_MIN else 1
    bufs = [_scratch(job.state, job.op, job.flat[0], job.scratch, workers_n) for job in jobs]
    blocks = iter([(j, start) for j, job in enumerate(jobs)
                   for start in range(0, job.value.size, BLOCK)])

    def run(w):
        for j, start in blocks:  # a list iterator's next() is atomic under the GIL
            job = jobs[j]
            _run_blocks(job.kernel, job.flat, job.value, job.scale, job.args, job.static,
                        bufs[j][w], (start,))

    futures = [workers.submit(run, w) for w in range(1, workers_n)]
    run(0)
    for f in futures:
        f.result()


class FlatStorage:
    """The variables that a group's update ops write, as views into one flat buffer per role
    (``var``, ``m``, ``v`` ...): the arrays of ``ops[role][i]`` in the session live at
    ``offsets[i]`` of ``flats[role]``. ``grad`` is the buffer the members' gradients are
    concatenated into.

    The session stays the owner of a variable's array: anything may put a new array there
    (an initializer, a checkpoint restore, ``Saver.restore``, ``Variable.load``, an Assign of
    another shape). ``arrays()`` notices (the session's arrays are no longer these views),
    copies the values into the flat buffers, laid out anew if a shape changed, and puts the
    views back, before every flat update; so an update never writes a detached copy."""

    def __init__(self, ops):
        self.ops = ops  # per role, the variables of the members, in order
        self.dtypes = [role[0].outputs[0].dtype.np for role in ops]
        self.shapes: list = []
        self.views: list = []  # per role, the members' views
        self.keys = [op for role in ops for op in role]
        self.flat_views: list = [object()] * len(self.keys)  # the views in ``keys``' order
        self.flats: list = []
        self.grad = None
        self.segments: list = []  # the members' parts of ``grad``
        self.lock = threading.Lock()  # held by the flat update using ``grad`` (FlatUpdate)

    def arrays(self, variables):
        """The flat buffers holding the variables' current values (False when they cannot be:
        an array of another dtype or kind, or a variable not initialized)."""
        if all(map(operator.is_, map(variables.get, self.keys), self.flat_views)):
            return self.flats
        return self._restore(variables)

    def _restore(self, variables):
        current = [[variables.get(op) for op in role] for role in self.ops]
        shapes = [a.shape for a in current[0] if type(a) is np.ndarray]
        if len(shapes) != len(current[0]) or any(
                type(a) is not np.ndarray or a.dtype != dtype or a.shape != shape
                for role, dtype in zip(current, self.dtypes) for a, shape in zip(role, shapes)):
            return False
        if shapes != self.shapes:
            self._layout(shapes)
        for role, arrays, views in zip(self.ops, current, self.views):
            for op, a, view in zip(role, arrays, views):
                if a is not view:
                    np.copyto(view, a)
                    variables[op] = view
        return self.flats

    def _layout(self, shapes):
        sizes = [math.prod(shape) for shape in shapes]
        offsets = [0, *itertools.accumulate(sizes)]
        total = offsets[-1]

        def views(flat):
            return [flat[a:b].reshape(shape) for a, b, shape in zip(offsets, offsets[1:], shapes)]

        self.shapes = shapes
        self.flats = [np.zeros(total, dtype) for dtype in self.dtypes]
        self.views = [views(flat) for flat in self.flats]
        self.flat_views = [v for role in self.views for v in role]
        self.grad = np.zeros(total, self.dtypes[0])
        self.segments = views(self.grad)


class FlatUpdate:
    """The update ops of one kind (the same op type, hyperparameter inputs, gate and static
    attributes) over several small variables as one call of their kernel over the variables,
    slots and gradients concatenated, as torch's foreach/fused optimizers and optax's flatten
    do: Adam over eight variables is one set of twelve numpy calls instead of eight.

    Only kernels declared ``flat`` (each element's result depends on the same element of
    every array and on the scalars only; or a flat version given, ``flat(flats, views, grad,
    *hyper) -> bool``, for a kernel that also reads per-variable state) run so: each element
    sees the same operations in the same order as in its own op, so the results are the same
    bits. The variables' arrays are
    views into a ``FlatStorage`` of the session (shared by every plan with the same members);
    when the inputs of a run do not fit (a gradient of another shape or dtype, a scale that
    is not a scalar of the variables' dtype, gates that differ), the members run one by one.

    Called with the members' plan inputs one after the other (``width`` each: the gradient,
    or the unscaled gradient and its scale when ``scaled``, the hyperparameters, the gate);
    returns the members' outputs (their variables' arrays)."""

    def __init__(self, state, ops, forwards, scaled, shared_scale):
        spec = KERNELS[ops[0].type]
        self.state, self.ops, self.forwards = state, ops, forwards
        self.kernel, self.scaled, self.shared_scale = spec.kernel, scaled, shared_scale
        self.gated = ops[0].attrs["gated"]
        self.width = len(ops[0].inputs) + scaled
        self.hyper = slice(1 + scaled, 1 + scaled + len(spec.hyper))
        self.static = {k: ops[0].attrs[k] for k in spec.static}
        self.scratch = spec.scratch
        self.flat_kernel = spec.flat if callable(spec.flat) else None
        self.small = spec.small
        # a plain kernel without hyperparameters (an assignment: the beta powers' GatedAssign)
        # runs on each member's array: one call a member and no concatenation to pass
        self.each = (spec.flat is True and not spec.hyper and not spec.scratch and not scaled
                     and spec.small is None and len(spec.refs) == 1)
        roles = [[op.attrs[r].op for op in ops] for r in spec.refs]
        key = tuple(op for role in roles for op in role)
        self.storage = state.flat_updates.get(key)
        if self.storage is None:
            self.storage = state.flat_updates[key] = FlatStorage(roles)

    def __call__(self, *values):
        first = values[:self.width]
        if self.gated and not first[-1]:  # the members share the gate
            return tuple(self.state.storage(op.attrs["var"].op) for op in self.ops)
        # concurrent runs of the session (threads, as TF allows) take turns: each writes its
        # gradients into the one buffer of the group and must update with them, not another's
        with self.storage.lock:
            return self._update(values, first)

    def _update(self, values, first):
        flats = self.storage.arrays(self.state.variables)
        if flats and self.each and self._each(values):
            return tuple(self.storage.views[0])
        if not flats or not self._gradient(values):
            return self._one_by_one(values)
        args = first[self.hyper]
        if self.flat_kernel is not None:
            if not self.flat_kernel(flats, self.storage.views, self.storage.grad, *args):
                return self._one_by_one(values)
        elif self.small is not None and self.small(flats, self.storage.grad, args):
            pass
        elif self.scratch:
            grad = self.storage.grad
            bufs = _scratch(self.state, self.ops[0], grad, self.scratch)[0][:-1]
            if bufs[0].size != grad.size:  # more than a block (BLOCK changed since compiling)
                bufs = [np.empty_like(grad) for _ in bufs]
            self.kernel(*flats, grad, *args, scratch=bufs, **self.static)
        else:
            self.kernel(*flats, self.storage.grad, *args, **self.static)
        return tuple(self.storage.views[0])

    def _each(self, values):
        """The kernel on each member's view with its own value (``each``), where the values have
        the members' shapes and the dtype the concatenation would require and are no views: the
        same elementwise operations, without copying the values into ``grad`` first (two
        scalars' concatenation cost more than their assignments)."""
        storage = self.storage
        values = values[0::self.width]
        dtype = storage.dtypes[0]
        for v, shape in zip(values, storage.shapes):
            if getattr(v, "shape", None) != shape or v.dtype != dtype or getattr(v, "base", None) \
                    is not None:  # a view might be of a member's variable, written meanwhile
                return False
        if self.kernel is _assign_kernel:  # the dtypes are equal: a plain copy, no casting
            for view, v in zip(storage.views[0], values):
                view[...] = v
        else:
            for view, v in zip(storage.views[0], values):
                self.kernel(view, v, **self.static)
        return True

    def _gradient(self, values):
        """The members' gradients (times their scales) into ``storage.grad``; False when they
        do not fit it."""
        w, storage = self.width, self.storage
        grads = values[0::w]
        for g, shape in zip(grads, storage.shapes):
            if getattr(g, "shape", None) != shape:
                return False
        try:
            np.concatenate(grads, axis=None, out=storage.grad, casting="no")
        except TypeError:
            return False
        if self.scaled:
            scales = values[1::w]
            if any(getattr(s, "ndim", 1) or s.dtype != storage.dtypes[0] for s in scales):
                return False
            if self.shared_scale:
                np.multiply(storage.grad, scales[0], out=storage.grad)
            else:
                for segment, s in zip(storage.segments, scales):
                    np.multiply(segment, s, out=segment)
        return True

    def _one_by_one(self, values):
        w = self.width
        return tuple(forward(*values[i * w:(i + 1) * w])
                     for i, forward in enumerate(self.forwards))


def register_update(op_type, kernel, refs, hyper=(), int_hyper=(), static=(), scratch=0,
                    compiled=None, flat=None, small=None):
    """Register an update op whose ``kernel(*ref_arrays, value, *hyper_arrays)`` writes in place.

    ``refs`` names the attributes holding the written variables (the first one is the op's
    output, as TF's Apply* ops return their ``var``). Inputs are ``[value, *hyper]`` plus the
    optional gate; ``value`` (the gradient) must have the shape and dtype of the first ref, the
    hyperparameters are scalars of that dtype except those named in ``int_hyper`` (integers).
    ``static`` names attributes passed to the kernel as keywords (Momentum's ``use_nesterov``).
    ``scratch`` is the number of temporary buffers the kernel takes (keyword ``scratch``, each of
    the shape of the block it is given); kernels with scratch may be called block by block.
    ``compiled(flat_refs, flat_value, scale, hyper, static) -> bool`` is a one-pass version of
    the kernel (``compiled.py``) tried first on large contiguous arrays; False when unavailable.
    ``small(flat_refs, flat_value, hyper) -> bool`` is one for small ones (the kernel's scalar
    factors included), tried first on smaller contiguous arrays without a scale.
    ``flat`` says the kernel is elementwise (each element's result depends on the same element
    of every array and on the scalar hyperparameters only), so that several updates of small
    variables may run as one call over their arrays concatenated (``FlatUpdate``); by default
    the kernels with scratch, which run block by block and so are elementwise already. A
    kernel that reads per-variable state gives instead its flat version,
    ``flat(flat_refs, views, flat_value, *hyper) -> bool`` (``views``: per ref, the members'
    arrays), which returns False, having changed nothing, when the members cannot run as one.
    """
    refs, hyper, static = tuple(refs), tuple(hyper), tuple(static)
    flat = bool(scratch) if flat is None else flat  # True, False or a flat version

    def forward(state, op, value, *args, scale=None, jobs=None):
        attrs = op.attrs
        variables = state.variables
        try:
            arrays = [variables[attrs[r].op] for r in refs]
        except KeyError:  # TF's precondition error, naming the first uninitialized one
            arrays = [state.storage(attrs[r].op) for r in refs]
        out = arrays[0]
        if attrs["gated"]:
            *args, gate = args
            if not gate:
                return out
        if scale is not None and (np.ndim(scale) or np.result_type(value, scale) != out.dtype):
            value, scale = np.multiply(value, scale), None  # not a same-dtype scalar: as unfolded
        if getattr(value, "shape", ()) != out.shape:
            raise InvalidArgumentError(
                f"{op_type} (op '{op.name}'): var and grad do not have the same shape"
                f"{list(out.shape)} {list(np.shape(value))}")
        static_kw = {k: attrs[k] for k in static} if static else {}
        if compiled is not None and out.size >= _compiled.MIN_ELEMENTS \
                and all(a.flags.c_contiguous for a in arrays) \
                and compiled([a.reshape(-1) for a in arrays], np.reshape(value, -1), scale, args,
                             static_kw):
            return out
        if small is not None and scale is None and out.size < _compiled.MIN_ELEMENTS \
                and all(a.flags.c_contiguous for a in arrays) \
                and small([a.reshape(-1) for a in arrays], np.reshape(value, -1), args):
            return out
        if scratch:
            if jobs is not None and out.size > BLOCK and all(a.flags.c_contiguous for a in arrays):
                jobs.append(_Job(kernel, [a.reshape(-1) for a in arrays], np.reshape(value, -1),
                                 scale, args, static_kw, state, op, scratch))
                return out
            _run_kernel(kernel, arrays, value, args, static_kw,
                        _scratch(state, op, out, scratch), scale)
            return out
        if scale is not None:
            value = np.multiply(value, scale)
        kernel(*arrays, value, *args, **static_kw)
        return out

    def scaled_forward(state, op, value, scale, *args, jobs=None):
        return forward(state, op, value, *args, scale=scale, jobs=jobs)

    def infer(inputs, gated, **attrs):
        var = check_refs(attrs, refs)
        value = inputs[0]
        check_value_dtype(op_type, value, var)
        if not value.shape.is_compatible_with(var.shape):
            raise ShapeError(f"var {var.name} has shape {var.shape} but the value {value.name} "
                             f"has shape {value.shape}")
        check_hyper_and_gate(op_type, var, hyper, int_hyper, inputs[1:], gated)
        return [(var.dtype, var.shape)]

    KERNELS[op_type] = UpdateKernel(kernel, refs, hyper, int_hyper, static, scratch, flat, small)
    register(op_type, forward, infer, stateful=True, mutates=True, scaled_forward=scaled_forward)


class UpdateKernel(NamedTuple):
    """What ``register_update`` was given for an op type (sparse updates reuse the kernel)."""

    kernel: Callable
    refs: tuple
    hyper: tuple
    int_hyper: tuple
    static: tuple
    scratch: int
    flat: object = False  # True for an elementwise kernel, or its flat version
    small: Callable | None = None  # a compiled version for small arrays (``register_update``)


#: op type -> its UpdateKernel
KERNELS: dict[str, UpdateKernel] = {}


def check_refs(attrs, refs):
    """The first ref (the updated variable), after checking the others have its shape."""
    var = attrs[refs[0]]
    for r in refs[1:]:
        other = attrs[r]
        if not other.shape.is_compatible_with(var.shape):
            raise ShapeError(f"{r} {other.name} has shape {other.shape}, but {refs[0]} "
                             f"{var.name} has shape {var.shape}")
    return var


def check_value_dtype(op_type, value, var):
    if value.dtype != var.dtype:
        raise TypeError(f"Input 'grad' of '{op_type}' Op has type {value.dtype.name} that does "
                        f"not match type {var.dtype.name} of argument 'var'.")


def check_hyper_and_gate(op_type, var, hyper, int_hyper, inputs, gated):
    """Hyperparameters are scalars of var's dtype (integers where named in ``int_hyper``); the
    gate, when ``gated``, is the last input and a boolean scalar."""
    for name, t in zip(hyper, inputs[:len(hyper)]):
        if t.shape.ndims not in (None, 0):
            raise ShapeError(f"{name} must be a scalar, got shape {t.shape} ({t.name})")
        if name in int_hyper:
            if not t.dtype.is_integer:
                raise TypeError(f"{name} of '{op_type}' must be an integer, got {t.dtype.name}")
        elif t.dtype != var.dtype:
            raise TypeError(f"Input '{name}' of '{op_type}' Op has type {t.dtype.name} that "
                            f"does not match type {var.dtype.name} of argument 'var'.")
    if gated:
        gate = inputs[-1]
        if not gate.dtype.is_bool or gate.shape.ndims not in (None, 0):
            raise TypeError(f"the gate of '{op_type}' must be a boolean scalar, got "
                            f"{gate.dtype.name} of shape {gate.shape} ({gate.name})")


def update(op_type, value, hyper=(), gate=None, name=None, attrs=None, **refs):
    """Add an update op: ``refs`` are the variables it writes, ``value`` its gradient/value input,
    ``hyper`` its scalar hyperparameter tensors, ``gate`` an optional boolean scalar tensor and
    ``attrs`` its static attributes."""
    refs = {k: variable_ref(v, op_type) for k, v in refs.items()}
    inputs = [convert_to_tensor(value)] + [convert_to_tensor(h) for h in hyper]
    if gate is not None:
        inputs.append(as_gate(gate))
    return apply(op_type, inputs, name=name or op_type, gated=gate is not None, **refs,
                 **(attrs or {}))


def as_gate(gate):
    """A boolean scalar tensor (Python bools become constants)."""
    gate = convert_to_tensor(gate, preferred_dtype=_dtypes.bool_)
    if not gate.dtype.is_bool or gate.shape.ndims not in (None, 0):
        raise TypeError(f"a gate must be a boolean scalar tensor, got {gate!r}")
    return gate


def _assign_kernel(ref, value):
    np.copyto(ref, value, casting="unsafe")


def _assign_add_kernel(ref, value):
    np.add(ref, value, out=ref, casting="unsafe")


def _assign_sub_kernel(ref, value):
    np.subtract(ref, value, out=ref, casting="unsafe")


register_update("GatedAssign", _assign_kernel, refs=("var",), flat=True)
register_update("GatedAssignAdd", _assign_add_kernel, refs=("var",), flat=True)
register_update("GatedAssignSub", _assign_sub_kernel, refs=("var",), flat=True)


def _write(op_type, plain, ref, value, gate, name):
    ref = variable_ref(ref, op_type)
    value = convert_to_tensor(value, preferred_dtype=ref.dtype)
    if gate is None:
        return plain(ref, value) if name is None else plain(ref, value, name=name)
    return update(op_type, value, gate=gate, name=name or op_type, var=ref)


def gated_assign(ref, value, gate=None, name=None):
    """``assign(ref, value)``, written only when ``gate`` is True (always when it is None)."""
    return _write("GatedAssign", assign, ref, value, gate, name)


def gated_assign_add(ref, value, gate=None, name=None):
    """``assign_add(ref, value)``, applied only when ``gate`` is True (always when it is None)."""
    return _write("GatedAssignAdd", assign_add, ref, value, gate, name)


def gated_assign_sub(ref, value, gate=None, name=None):
    """``assign_sub(ref, value)``, applied only when ``gate`` is True (always when it is None)."""
    return _write("GatedAssignSub", assign_sub, ref, value, gate, name)
