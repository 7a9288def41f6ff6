"""The groups as built: each group's variables (its select), gradients of its loss, processed
gradients (its pipeline) and optimizer; then the one train op that applies every group, gated on
the step being finite, and increments global_step once after all the updates.
"""

from __future__ import annotations

import re

import engine
from engine.framework.graph import GraphKeys, Tensor
from engine.framework.indexed_slices import values_of
from engine.ops.math import all_finite
from engine.runtime.update_ops import gated_assign, gated_assign_add, gated_assign_sub
from runner.errors import did_you_mean
from runner.model import Group, Model
from runner.model_context import BuildContext, engine_message
from runner.model_losses import group_losses, weighted_sum
from runner.model_optimizers import (
    build_learning_rate,
    build_optimizer,
    build_pipeline,
    learning_rate_tensor,
)


def build_groups(ctx: BuildContext, model: Model) -> Tensor | None:
    """Every group that builds, into ``model.groups``; the trainable variables no group selects
    into ``model.frozen``. A variable selected by two groups is an error. All groups'
    gradients are made before any pipeline is applied, so that the pipelines can be gated on
    all of them (``incoming_gate``, returned for ``build_train_op``)."""
    owner: dict[str, str] = {}
    by_var = {id(v): name for name, v in model.variables.items()}
    selections = {}
    for name, spec in ctx.config.groups.items():
        chosen = select_variables(ctx, model, name, spec, by_var)
        if chosen is None:
            continue
        for var_name in chosen:
            if var_name in owner:
                ctx.fail(f"groups.{name}.select", f"variable '{var_name}' is also selected by "
                                                  f"group '{owner[var_name]}'; a variable "
                                                  "belongs to at most one group")
            else:
                owner[var_name] = name
        selections[name] = chosen
    trained = set(owner)
    model.frozen = [name for name, spec in ctx.spec.variables.items()
                    if spec.trainable and name not in trained]
    built = [build_group(ctx, model, name, spec, selections[name])
             for name, spec in ctx.config.groups.items() if name in selections]
    built = [b for b in built if b is not None]
    incoming = incoming_gate(built)
    for group in built:
        if apply_pipeline(ctx, model, group, incoming):
            model.groups.append(group)
    return incoming


def incoming_gate(groups: list[Group]) -> Tensor | None:
    """What the pipelines that keep state (``accumulate``, ``skip_nonfinite``) are gated on:
    every group's loss and raw gradients finite. A step that the runner skips or stops at then
    leaves their state as it was; None when no pipeline keeps state."""
    if not any(group.pipeline.stateful for group in groups):
        return None
    with engine.name_scope("finite"):
        # a sparse gradient's rows: never its dense table-sized sum
        return all_finite([values_of(t) for group in groups
                           for t in [group.objective, *group.grads]])


def select_variables(ctx: BuildContext, model: Model, name: str, spec, by_var) -> list[str] | None:
    """The names of the trainable variables group ``name`` selects (by a list of variables, a
    collection and/or a scope regex), or None after reporting that it selects none."""
    key = f"groups.{name}.select"
    sel = spec.select
    graph = model.graph
    if sel.variables is not None:
        chosen = []
        for i, var_name in enumerate(sel.variables):
            vspec = ctx.spec.variables[var_name]
            if not vspec.trainable:
                ctx.fail(f"{key}.variables[{i}]", f"variable '{var_name}' has trainable: "
                                                  "false; a group trains only trainable "
                                                  "variables")
            elif var_name not in chosen:
                chosen.append(var_name)
        return chosen or None
    collection = sel.collection or GraphKeys.TRAINABLE_VARIABLES
    members = [v for v in graph.get_collection(collection) if id(v) in by_var]
    if sel.collection is not None and not members:
        known = sorted({c for v in ctx.spec.variables.values() for c in v.collections}
                       | {GraphKeys.TRAINABLE_VARIABLES, GraphKeys.GLOBAL_VARIABLES})
        ctx.fail(f"{key}.collection", f"no variable is in collection '{sel.collection}'"
                                      f"{did_you_mean(sel.collection, known)}; "
                                      f"collections: {', '.join(known)}")
        return None
    if sel.scope is not None:
        pattern = re.compile(sel.scope)
        members = [v for v in members if pattern.match(v.op.name)]
    chosen = [by_var[id(v)] for v in members if v.trainable]
    if not chosen:
        what = []
        if sel.collection is not None:
            what.append(f"collection '{sel.collection}'")
        if sel.scope is not None:
            what.append(f"scope '{sel.scope}'")
        names = [v.engine_name for v in ctx.spec.variables.values() if v.trainable]
        ctx.fail(key, f"selects no trainable variable ({' and '.join(what)} matched none "
                      f"of: {', '.join(names) or 'no trainable variables'})")
        return None
    return chosen


def build_group(ctx: BuildContext, model: Model, name: str, spec, var_names: list[str]):
    """Group ``name`` over ``var_names``: the gradients of its loss, its optimizer and pipeline
    (not applied yet: ``apply_pipeline``); None after reporting what failed."""
    found = group_losses(ctx, name, spec)
    if found is None:
        return None
    losses, weights, own = found
    variables = [model.variables[v] for v in var_names]
    # Each group differentiates its own loss; all of them read the same forward pass.
    with engine.name_scope(f"{name}"):
        objective = losses[0] if weights is None else weighted_sum(losses, weights)
        grads = engine.gradients(losses, variables,
                                 grad_ys=None if weights is None else
                                 [engine.constant(w) for w in weights])
    missing = [v for v, g in zip(var_names, grads) if g is None]
    if len(missing) == len(var_names):
        loss_names = spec.loss or (ctx.spec.loss,)
        ctx.fail(f"groups.{name}.loss" if spec.loss else f"groups.{name}.select",
                 f"the loss {', '.join(repr(n) for n in loss_names)} reaches none of the "
                 f"group's variables ({', '.join(var_names)}): no gradient flows to them "
                 "(not used, or behind stop_gradient)")
        return None
    if missing:
        ctx.warnings.append(f"group '{name}': no gradient reaches {', '.join(missing)} "
                            "from its loss; they are not updated")
    pairs = [(g, v) for g, v in zip(grads, variables) if g is not None]
    var_names = [n for n, g in zip(var_names, grads) if g is not None]
    with engine.name_scope(f"{name}/"):
        before = len(ctx.errors)
        lr = build_learning_rate(ctx, name, spec.optimizer, model.global_step)
        # A schedule that failed has been reported; the optimizer is not made without it.
        optimizer = (build_optimizer(ctx, name, spec.optimizer, lr, model.global_step)
                     if len(ctx.errors) == before else None)
        pipeline = build_pipeline(ctx, name, spec.pipeline)
    if optimizer is None or pipeline is None:
        return None
    return Group(name, var_names, [v for _, v in pairs], losses, weights, objective, own,
                 [g for g, _ in pairs], [], optimizer, pipeline,
                 learning_rate_tensor(lr, optimizer), None, None, {}, None)


def apply_pipeline(ctx: BuildContext, model: Model, group: Group,
                   incoming: Tensor | None) -> bool:
    """The group's pipeline applied to its gradients (its stages' state changed only where
    ``incoming`` is True): its processed gradients, norms, reports and gate; False after
    reporting what failed."""
    try:
        with engine.name_scope(f"{group.name}/"):
            processed_pairs, reports, gate = group.pipeline.apply(
                list(zip(group.grads, group.variables)), model.global_step,
                gate=incoming if group.pipeline.stateful else None)
    except (ValueError, TypeError, engine.ShapeError) as exc:
        ctx.fail(f"groups.{group.name}.pipeline", engine_message(exc))
        return False
    group.processed = [g for g, _ in processed_pairs]
    group.reports = dict(reports)
    group.grad_norm = group.reports.pop("grad_norm")
    group.grad_norm_processed = group.reports.pop("grad_norm_processed", group.grad_norm)
    group.gate = gate
    return True


def build_train_op(ctx: BuildContext, model: Model, incoming: Tensor | None = None) -> None:
    """Gate, apply every group, then one global_step increment after all updates.

    The gate is: every loss, raw gradient and processed gradient is finite. The processed
    ones too, because a stage's state can carry a NaN from an earlier step (an
    ``accumulate`` window) into gradients that look finite before the pipeline. ``incoming``
    (``build_groups``), when pipelines keep state, is the first half, already made.
    """
    # a sparse gradient's rows: never its dense table-sized sum
    checked = [values_of(t) for group in model.groups
               for t in ([*group.processed] if incoming is not None else
                         [group.objective, *group.grads, *group.processed])]
    with engine.name_scope("finite"):
        finite = all_finite(checked) if checked else engine.constant(True)
        if incoming is not None:
            finite = engine.logical_and(incoming, finite)
    model.finite = finite
    applies = []
    for group in model.groups:
        gate = finite if group.gate is None else engine.logical_and(finite, group.gate)
        pairs = list(zip(group.processed, group.variables))
        try:
            group.apply_op = group.optimizer.apply_gradients(pairs, global_step=None,
                                                             name=f"{group.name}/apply",
                                                             gate=gate)
        except (ValueError, TypeError, engine.ShapeError) as exc:
            ctx.fail(f"groups.{group.name}.optimizer", engine_message(exc))
            continue
        applies.append(group.apply_op)
    ctx.raise_errors()
    # The moving statistics of batch_norm (UPDATE_OPS) move with every training step, as a
    # TF1 program's control_dependencies(get_collection(UPDATE_OPS)) makes them, behind the same
    # gate: a step whose update is skipped (on_nonfinite=skip) leaves them as they were.
    updates = gated_updates(model.graph.get_collection(GraphKeys.UPDATE_OPS), finite)
    with engine.control_dependencies(applies + updates):
        model.train_op = engine.assign_add(model.global_step, 1, name="global_step_increment")


_GATED_WRITES = {"Assign": gated_assign, "AssignAdd": gated_assign_add,
                 "AssignSub": gated_assign_sub}


def gated_updates(updates, gate) -> list:
    """The UPDATE_OPS writes (batch_norm's ``assign_sub`` of each moving statistic) rebuilt to
    write only when ``gate`` is True at run time; the ungated originals stay in the graph, run
    by nothing. Other ops in the collection run as they are."""
    gated = []
    for t in updates:
        op = getattr(t, "op", t)
        write = _GATED_WRITES.get(op.type)
        if write is None or "ref" not in op.attrs:
            gated.append(t)
            continue
        gated.append(write(op.attrs["ref"], op.inputs[0], gate, name=f"{op.name}_gated"))
    return gated
