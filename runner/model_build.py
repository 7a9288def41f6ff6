"""A checked run config -> one engine graph: placeholders, constants, variables, the graph's
nodes, and for every group its gradients, pipeline and optimizer, joined in one train op.

All groups' gradients come from the same forward pass (one ``sess.run``), every group is then
applied, and ``global_step`` is incremented once, after all the updates. The updates are gated on
every loss and gradient (before and after the pipelines) being finite, so a step that meets
NaN/Inf leaves the variables and optimizer slots as they were: the loop then either stops
(``on_nonfinite: raise``) or goes on (``skip``). Every problem found while building is a
ConfigError naming its config key; all of them are raised together as ConfigErrors, before
anything runs.

The steps, each in the module named for it: the leaves (``model_variables``), the graph's
expressions (``expr_build``), the loss and metrics (``model_losses``), the groups and the train
op (``model_groups``, with their optimizers and pipelines from ``model_optimizers``).
"""

from __future__ import annotations

import engine
from engine.ops import learning_phase
from engine.train import get_or_create_global_step
from runner.config_specs import RunConfig
from runner.errors import ConfigErrors
from runner.expr_build import compile_graph
from runner.model import Model
from runner.model_context import BuildContext
from runner.model_groups import build_groups, build_train_op
from runner.model_losses import losses_and_metrics
from runner.model_optimizers import check_groups_alone
from runner.model_variables import build_constants, build_inputs, build_variables


def build_model(config: RunConfig, float_dtype: str | None = None) -> Model:
    """The Model of a validated config; ConfigErrors lists every problem found building it.

    ``float_dtype='float64'`` builds the same model with every float replaced (gradcheck's twin).
    """
    ctx = BuildContext(config, float_dtype)
    graph = engine.Graph()
    with graph.as_default():
        engine.set_random_seed(config.seed)
        # First, so that the name 'global_step' is the step's even if a variable wants it.
        global_step = get_or_create_global_step()
        inputs = build_inputs(ctx)
        constants = build_constants(ctx)
        variables = build_variables(ctx)
        ctx.raise_errors()
        try:
            nodes = compile_graph(ctx.spec.graph, {**inputs, **constants, **variables})
        except ConfigErrors as errors:
            ctx.errors.extend(errors.errors)
            check_groups_alone(ctx)
        ctx.raise_errors()
        model = Model(config, graph, inputs, constants, variables, nodes, None, None,
                      {}, [], [], None, None, None, None)
        ctx.model = model
        losses_and_metrics(ctx, model)
        model.global_step = global_step
        incoming = build_groups(ctx, model)
        ctx.raise_errors()
        build_train_op(ctx, model, incoming)
        model.init_op = engine.global_variables_initializer()
        model.warnings = ctx.warnings
        switch = graph.get_collection(learning_phase.COLLECTION)
        if switch and switch[0].op.type == "PlaceholderWithDefault":
            model.training = switch[0]
    return model
