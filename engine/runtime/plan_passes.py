"""Plan passes over the update steps: they rewrite a compiled plan's steps by the properties of
their ops in the registry (an update op's ``OpDef.scaled_forward``), never by importing the
packages that define the optimizers.

- ``fold_gradient_scales``: an update whose gradient is ``x * s`` (a scalar ``s``) multiplies by
  ``s`` block by block inside its kernel instead of after a full-size product;
- ``batch_updates``: consecutive updates of different variables become one step whose blocks run
  as one pool (``update_ops.run_jobs``), and whose small updates of one kind run as one call
  over their arrays concatenated (``update_ops.FlatUpdate``).

Both keep every element's operations and their order, so neither changes a result.
"""

from __future__ import annotations

import functools
import math
import os

from ..framework.graph import Tensor
from ..framework.registry import get_op
from . import update_ops
from .steps import index_steps
from .update_ops import KERNELS, FlatUpdate, run_jobs


def fold_gradient_scales(steps, fetched_slots, fresh):
    """Plan pass: an update whose gradient is ``x * s`` for a scalar ``s`` (what
    ``clip_by_global_norm`` and ``clip_by_norm`` feed optimizers, through an Identity) multiplies
    ``x`` by ``s`` block by block inside its kernel, instead of after a full-size product that
    is written to memory and read back. Each element is computed as before: the same multiply,
    then the same update.

    ``steps`` are the plan's ``(fn, input slots, output slot, op)`` in execution order;
    ``fetched_slots`` must survive the run; ``fresh(tensor)`` says whether a value is computed
    by the run (not a variable's storage or a constant), which no update between the product and
    its update can change. Returns the new step list.
    """
    users, producer, mutating = index_steps(steps)

    def private(slot, user):
        """The slot is produced by a step whose value only ``user`` reads."""
        return slot in producer and slot not in fetched_slots and users.get(slot) == [user]

    dropped, replaced = set(), {}
    for j, (_, ins, _, op) in enumerate(steps):
        scaled_forward = get_op(op.type).scaled_forward
        if scaled_forward is None or not ins or not private(ins[0], j):
            continue
        chain, i = [], producer[ins[0]]
        if steps[i][3].type == "Identity" and private(steps[i][1][0], i):
            chain.append(i)
            i = producer[steps[i][1][0]]
        product = steps[i][3]
        if product.type != "Mul":
            continue
        x, s = product.inputs
        if s.shape.ndims != 0:
            x, s = s, x
        if s.shape.ndims != 0 or x.shape.ndims == 0:
            continue
        if not (fresh(x) and fresh(s)) and any(i < m < j for m in mutating):
            continue
        chain.append(i)
        dropped.update(chain)
        x_slot, s_slot = (steps[i][1] if product.inputs[0] is x else steps[i][1][::-1])
        replaced[j] = (functools.partial(scaled_forward, *steps[j][0].args),
                       [x_slot, s_slot, *ins[1:]], steps[j][2], op)
    return [replaced.get(j, step) for j, step in enumerate(steps) if j not in dropped]


def batch_updates(steps, fresh, constant):
    """Plan pass: consecutive update steps on different variables become one step whose large
    updates run as one pool of blocks (``update_ops.run_jobs``). Their kernels then run after every member
    has read its inputs, and side by side; so a step joins only if its inputs are values the run
    computed (``fresh``), ``constant``, or reads of variables no member writes, and it writes no
    variable a member reads: each update computes what it computed alone.
    ``GRADPIPE_BATCH_UPDATES=0`` (read when a plan is compiled) leaves the steps as they are."""
    if os.environ.get("GRADPIPE_BATCH_UPDATES", "1") == "0":
        return steps
    out, run = [], []
    written: set = set()
    read: set = set()
    produced: set = set()

    flats: list = []

    def flush():
        if run:
            out.append(_batched_step(run, flats) if len(run) > 1 else run[0])
        run.clear()
        written.clear()
        read.clear()
        produced.clear()

    for step in steps:
        _, ins, slot, op = step
        if get_op(op.type).scaled_forward is None or not isinstance(slot, int):
            flush()
            out.append(step)
            continue
        refs = {t.op for t in op.attrs.values() if isinstance(t, Tensor)}
        reads = set()
        for t in _input_tensors(op, len(ins)):
            if fresh(t) or constant(t):
                continue
            if t.op.type != "VariableV2":  # a view or alias of state: keep it in order
                reads = None
                break
            reads.add(t.op)
        if reads is None:
            flush()
            out.append(step)
            continue
        if refs & (written | read) or reads & written or refs & reads \
                or any(s in produced for s in ins):
            flush()
        run.append(step)
        written |= refs
        read |= reads
        produced.add(slot)
    flush()
    if flats:  # before any step reads a variable, the flat buffers hold them (FlatUpdate)
        out.insert(0, (functools.partial(_put_views, flats), [], None, flats[0].ops[0]))
    return out


def _input_tensors(op, n_slots):
    """The tensors an update step reads: its op's inputs, or for a folded step (one slot more,
    see ``fold_gradient_scales``) the product's factors instead of the gradient."""
    if n_slots == len(op.inputs):
        return list(op.inputs)
    grad = op.inputs[0]
    if grad.op.type == "Identity":
        grad = grad.op.inputs[0]
    return list(grad.op.inputs) + list(op.inputs[1:])


def _flat_calls(members):
    """The members as calls ``(function, input slots, output slots)``: the small updates of
    one kind (the same op type and flat kernel, hyperparameter inputs, gate, static
    attributes and dtype; all scaled or none) as one ``FlatUpdate`` each, the others as they
    are. ``GRADPIPE_FLAT_UPDATES=0`` (read when a plan is compiled) keeps every update alone."""
    families: dict = {}
    calls = []
    enabled = os.environ.get("GRADPIPE_FLAT_UPDATES", "1") != "0"
    for fn, ins, slot, op in members:
        spec = KERNELS.get(op.type) if enabled else None
        var = op.attrs.get("var")
        state = getattr(fn, "args", (None,))[0]
        size = _static_size(var) if spec is not None and spec.flat else None
        if size is None or size > update_ops.BLOCK or not hasattr(state, "flat_updates"):
            calls.append([(fn, ins, slot, op)])
            continue
        scaled = len(ins) - len(op.inputs)
        key = (op.type, scaled, tuple(ins[1 + scaled:]), var.dtype,
               tuple(op.attrs[k] for k in spec.static), id(state))
        family = families.get(key)
        if family is None or family[0] + size > update_ops.BLOCK:
            family = families[key] = [0, []]
            calls.append(family[1])
        family[0] += size
        family[1].append((fn, ins, slot, op))
    out = []
    for call in calls:
        if len(call) == 1:
            fn, ins, slot, _ = call[0]
            out.append((fn, ins, (slot,)))
            continue
        fns, ins, slots, ops = zip(*call)
        scaled = len(ins[0]) - len(ops[0].inputs)
        shared_scale = bool(scaled) and len({i[1] for i in ins}) == 1
        flat = FlatUpdate(fns[0].args[0], list(ops), list(fns), scaled, shared_scale)
        out.append((flat, [s for i in ins for s in i], slots))
    return out


def _static_size(var):
    shape = var.shape if var is not None else None
    if shape is None or not shape.is_fully_defined():
        return None
    return math.prod(shape.as_list())


def _put_views(flats):
    """A plan's first step when it has flat updates: their variables' arrays become views of
    the flat buffers again if something put new arrays in the session since (an initializer, a
    restore), so that every read of the run sees the arrays its updates write (as a variable
    read before its update sees the update, its array being updated in place)."""
    for flat in flats:
        flat.storage.arrays(flat.state.variables)


def _batched_step(members, flats):
    """One step running ``members`` (update steps that ``batch_updates`` found independent):
    their small updates of one kind as one flat update (added to ``flats``), their large ones
    as one pool of blocks. Returns the members' outputs in order."""
    calls = _flat_calls(members)
    flats += [fn for fn, _, _ in calls if type(fn) is FlatUpdate]
    if len(calls) == 1 and type(calls[0][0]) is FlatUpdate:  # the flat update is the step
        flat, ins, slots = calls[0]
        return flat, list(ins), tuple(slots), members[0][3]
    plan = [(fn, len(ins), type(fn) is FlatUpdate) for fn, ins, _ in calls]

    def run_batch(*values):
        jobs, outs, i = [], [], 0
        for fn, k, flat in plan:
            if flat:
                outs.extend(fn(*values[i:i + k]))
            else:
                outs.append(fn(*values[i:i + k], jobs=jobs))
            i += k
        if jobs:
            run_jobs(jobs)
        return tuple(outs)

    return (run_batch, [s for _, ins, _ in calls for s in ins],
            tuple(s for _, _, slots in calls for s in slots), members[0][3])
