"""What a training step fetches, and what it feeds.

One ``session.run`` per step: a light step fetches the finite flag, the train op and the loss;
a full step (one that logs or evaluates) adds the metrics, each group's loss, learning rate,
gradient norms before and after its pipeline and its stages' reports, and, when loggers are
configured, the gradients themselves (under ``HISTOGRAM`` keys: for the loggers, never for the
records). The callables take the inputs' placeholders in the model's order, then the training
switch when the model has one.
"""

from __future__ import annotations

from runner.model import Model

HISTOGRAM = "histogram:"  # fetches of gradient values for the loggers, not for records


def step_fetches(model: Model, histograms: bool) -> tuple[dict, dict]:
    """The light and the full step's fetches, by record key."""
    m = model
    light = {"finite": m.finite, "train": m.train_op}
    if m.loss is not None:
        light["loss"] = m.loss
    full = dict(light)
    full.update({name: t for name, t in m.metrics.items()
                 if name != "loss" and t is not m.loss})
    if m.loss is None:
        full["loss"] = m.groups[0].objective
        light["loss"] = m.groups[0].objective
    for group in m.groups:
        g = group.name
        if group.own_loss:
            full[f"{g}/loss"] = group.objective
        full[f"{g}/lr"] = group.learning_rate
        full[f"{g}/grad_norm"] = group.grad_norm
        full[f"{g}/grad_norm_processed"] = group.grad_norm_processed
        for report, tensor in group.reports.items():
            full[f"{g}/{report}"] = tensor
    if histograms:
        for group in m.groups:
            full[f"{HISTOGRAM}{group.name}/gradients"] = list(group.grads)
            full[f"{HISTOGRAM}{group.name}/gradients_processed"] = list(group.processed)
    return light, full


def placeholders(model: Model) -> list:
    """The placeholders the step's callables take, in the order ``feed_values`` gives."""
    out = list(model.inputs.values())
    if model.training is not None:
        out.append(model.training)
    return out


def feed_values(model: Model, batch) -> list:
    """The training step's feed, in the order of the callables' placeholders."""
    feed = model.feed(batch, training=True) if batch is not None else {}
    values = [feed[p] for p in model.inputs.values()]
    return values if model.training is None else [*values, True]


def eval_fetches(model: Model) -> dict:
    """What an evaluation fetches: the loss and the metrics."""
    evals = {"loss": model.loss} if model.loss is not None else {}
    evals.update({name: t for name, t in model.metrics.items()
                  if name != "loss" and t is not model.loss})
    return evals
