"""One job of ``python -m runner``: what its ``mode`` asks of a config.

train (the default) builds the model and trains it (runner/prepare.py, runner/loop.py); check
prints the compiled model and gradcheck compares gradients with finite differences
(runner/check.py); eval and predict load a finished run's checkpoint (runner/inference.py).
Config errors propagate as ConfigErrors, raised before anything runs.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from runner import inference
from runner.check import describe_model, gradcheck
from runner.checkpoint import saved_config
from runner.fingerprint import fingerprint
from runner.loop import Trainer
from runner.outputs import EXIT_OK
from runner.prepare import prepare


def execute(cfg: Mapping, out_dir: Path, base_dir: Path) -> int:
    """Run one job in ``out_dir``; config errors propagate as ConfigErrors; the exit code."""
    if cfg.get("mode") in ("eval", "predict"):
        run = inference.evaluate_run if cfg["mode"] == "eval" else inference.predict_run
        return run(cfg, out_dir, base_dir)
    config, model, dataset = prepare(cfg, base_dir)
    if config.mode == "check":
        print(describe_model(model, dataset))
        return EXIT_OK
    if config.mode == "gradcheck":
        return gradcheck(model, dataset, out_dir)
    return Trainer(model, dataset, out_dir, fingerprint(cfg, dataset), saved_config(cfg)).run()
