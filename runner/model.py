"""The compiled model: what building a run config gives the loop, checkpoints, check and
gradcheck (``runner.model_build.build_model`` makes it). ``Model`` holds the graph, its
placeholders, variables and nodes, the loss and metrics, the groups and the train op; ``Group``
one group's variables, gradients before and after its pipeline, optimizer and learning rate.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

import engine
from engine.framework.graph import Tensor
from runner.config_specs import ModelSpec, RunConfig


@dataclass
class Group:
    """One group as built: its variables, loss, raw and processed gradients, optimizer."""

    name: str
    var_names: list[str]
    variables: list
    losses: list[Tensor]
    grad_loss: list[np.ndarray] | None
    objective: Tensor  # scalar whose gradient the group follows (sum of grad_loss * losses)
    own_loss: bool
    grads: list[Tensor]
    processed: list[Tensor]
    optimizer: object
    pipeline: object
    learning_rate: Tensor
    grad_norm: Tensor
    grad_norm_processed: Tensor
    reports: dict[str, Tensor]
    gate: Tensor | None
    apply_op: object = None


@dataclass
class Model:
    """The compiled model: everything the loop, checkpoints, check and gradcheck need."""

    config: RunConfig
    graph: engine.Graph
    inputs: dict[str, Tensor]
    constants: dict[str, Tensor]
    variables: dict[str, engine.Variable]
    nodes: dict[str, Tensor]
    loss: Tensor | None
    loss_name: str | None
    metrics: dict[str, Tensor]
    groups: list[Group]
    frozen: list[str]
    global_step: engine.Variable
    finite: Tensor | None
    train_op: object
    init_op: object
    warnings: list[str] = field(default_factory=list)
    training: Tensor | None = None  # the training switch, when an expression follows it

    @property
    def spec(self) -> ModelSpec:
        return self.config.model

    def feed(self, batch: Mapping[str, np.ndarray] | None, training: bool = False) -> dict:
        """A feed dict for a data batch (example-major), transposing time-major inputs; in a
        training step the training switch is on (dropout drops, batch norm uses batch
        statistics), otherwise it keeps its default, off."""
        feed = {}
        for name, placeholder in self.inputs.items():
            value = batch[name]
            if self.spec.inputs[name].time_major:
                value = np.swapaxes(value, 0, 1)
            feed[placeholder] = value
        if training and self.training is not None:
            feed[self.training] = True
        return feed

    def state_variables(self) -> list:
        """Every variable of the graph, in creation order: the model's, optimizer slots and
        accumulators, global_step, pipeline stage state (whatever collections they are in)."""
        return [op.outputs[0] for op in self.graph.get_operations() if op.type == "VariableV2"]


def count_parameters(model: Model) -> int:
    return sum(math.prod(v.shape.dims) for v in model.variables.values())
