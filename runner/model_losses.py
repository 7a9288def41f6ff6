"""The losses and metrics a config names: the model's default loss, its metrics, and a group's own
loss (one node or a list of them, with optional grad_loss weights as tf.gradients' grad_ys).

A loss is a floating graph node; without grad_loss it must be a scalar, with it the weights take
the loss's (fully known) shape.
"""

from __future__ import annotations

import numpy as np

import engine
from engine.framework.graph import Tensor
from runner.model import Model
from runner.model_context import BuildContext, is_scalar, shape_text


def losses_and_metrics(ctx: BuildContext, model: Model) -> None:
    """The model's default loss (a scalar) and its metrics (scalars), looked up in ``model``."""
    if ctx.spec.loss is not None:
        loss = ctx.node("model.loss", ctx.spec.loss, "loss")
        if loss is not None and not is_scalar(loss):
            ctx.fail("model.loss", f"the loss '{ctx.spec.loss}' has shape "
                                   f"{shape_text(loss.shape)}; a loss must be a scalar "
                                   "(reduce it, e.g. mean(...)), or give a group grad_loss")
        elif loss is not None:
            model.loss, model.loss_name = loss, ctx.spec.loss
    for i, name in enumerate(ctx.spec.metrics):
        metric = ctx.node(f"model.metrics[{i}]", name, "metric")
        if metric is None:
            continue
        if not is_scalar(metric):
            ctx.fail(f"model.metrics[{i}]", f"metric '{name}' has shape "
                                            f"{shape_text(metric.shape)}; metrics are "
                                            "scalars (reduce it, e.g. mean(...))")
            continue
        model.metrics[name] = metric


def group_losses(ctx: BuildContext, name: str, spec):
    """(loss tensors, grad_loss arrays or None, own loss?) of a group, or None on errors."""
    key = f"groups.{name}.loss"
    if spec.loss is None:
        if ctx.model.loss is None:
            if ctx.spec.loss is None:
                ctx.fail(key, "no loss: set model.loss, or this group's loss")
            return None
        return [ctx.model.loss], None, False
    losses = []
    for i, loss_name in enumerate(spec.loss):
        lkey = f"{key}[{i}]" if spec.loss_is_list else key
        tensor = ctx.node(lkey, loss_name, "loss")
        if tensor is None:
            return None
        if not tensor.dtype.is_floating:
            ctx.fail(lkey, f"'{loss_name}' has dtype {tensor.dtype.name}; a loss must be "
                           "floating point")
            return None
        losses.append(tensor)
    if spec.grad_loss is None:
        for i, (loss_name, tensor) in enumerate(zip(spec.loss, losses)):
            if not is_scalar(tensor):
                lkey = f"{key}[{i}]" if spec.loss_is_list else key
                ctx.fail(lkey, f"the loss '{loss_name}' has shape "
                               f"{shape_text(tensor.shape)}; a loss must be a scalar "
                               "(reduce it, e.g. mean(...)), or give grad_loss weights of "
                               "its shape")
                return None
        return losses, None, True
    weights = []
    for i, (loss_name, tensor, array) in enumerate(zip(spec.loss, losses, spec.grad_loss)):
        gkey = f"groups.{name}.grad_loss" + (f"[{i}]" if spec.loss_is_list else "")
        shape = tensor.shape
        if not shape.is_fully_defined():
            ctx.fail(gkey, f"the loss '{loss_name}' has shape {shape_text(shape)}, not "
                           "fully known; grad_loss needs a loss of known shape")
            return None
        if tuple(array.shape) != tuple(shape.dims):
            if array.ndim == 0:
                array = np.full(shape.dims, array)
            else:
                ctx.fail(gkey, f"has shape {list(array.shape)} but the loss '{loss_name}' "
                               f"has shape {shape_text(shape)}; grad_loss is one array of "
                               "the loss's shape")
                return None
        weights.append(array.astype(tensor.dtype.np))
    return losses, weights, True


def weighted_sum(losses, weights) -> Tensor:
    """sum_i sum(weights_i * losses_i): the scalar whose gradient is tf.gradients(ys, grad_ys)."""
    terms = [engine.reduce_sum(t * engine.constant(w)) for t, w in zip(losses, weights)]
    return terms[0] if len(terms) == 1 else engine.add_n(terms)
