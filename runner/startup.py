"""Checks before a run's first step: a resumed checkpoint's config fingerprint against the
config's, and a dry run on the first batch that turns data-dependent engine errors into config
errors."""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping
from pathlib import Path

from runner import checkpoint as ckpt
from runner.errors import ConfigError
from runner.fingerprint import changes
from runner.graph_errors import graph_errors
from runner.model import Model

log = logging.getLogger("runner")


def dry_run(model: Model, session, dataset, eval_fetches: Mapping,
            eval_batches: Iterator | None) -> None:
    """One forward and backward pass on the first batch of the data, before step 1, so that
    mistakes that show only with data (a reshape or slice that does not fit the batch) are
    config errors at their graph entry; then the evaluation's fetches on the first of
    ``eval_batches`` (the held-out split's, None when the run does not evaluate). Nothing is
    updated, and the random generators are left as they were."""
    m = model
    fetches = [*m.nodes.values(), *m.metrics.values(),
               *(g for group in m.groups for g in group.grads)]
    if not fetches:
        return
    batch = None
    if dataset is not None:
        size = dataset.batch_size or dataset.n_train
        batch = {name: array[:size] for name, array in dataset.train.items()}
    feed = m.feed(batch, training=True) if batch is not None else {}
    with ckpt.preserved_rngs(session), \
            graph_errors(m.nodes, "", " (found running the graph on the first batch, before "
                                      "step 1)"):
        session.run(fetches, feed)
    eval_batch = next(eval_batches, None) if eval_batches is not None and eval_fetches else None
    if eval_batch is not None:
        with ckpt.preserved_rngs(session), \
                graph_errors(m.nodes, "", " (found evaluating the first held-out batch, "
                                          "before step 1)"):
            session.run(eval_fetches, m.feed(eval_batch))


def check_fingerprint(arrays: Mapping, fingerprint: Mapping[str, str], out_dir: Path) -> None:
    """Refuse to continue a checkpoint made with another config (runner.fingerprint)."""
    saved = ckpt.saved_fingerprint(arrays)
    if saved is None:
        log.warning("train.resume: the checkpoint records no config fingerprint (an older "
                    "runner's); the config is not compared")
        return
    status = ckpt.read_text(arrays["meta/status"]) if "meta/status" in arrays else ""
    changed = changes(saved, fingerprint, diverged=status == "diverged")
    if changed:
        raise ConfigError("train.resume", f"the checkpoint in {out_dir} was made with "
                                          f"another config; changed: {'; '.join(changed)}. "
                                          "Change them back to continue, or start afresh in "
                                          "another hydra.run.dir")
