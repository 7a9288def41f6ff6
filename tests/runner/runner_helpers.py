"""Helpers for the runner's tests (imported as ``runner_helpers``): compose configs with Hydra's
(``runner.app.run``) or as ``python -m runner`` subprocesses, read a run's outputs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from hydra import compose
from omegaconf import OmegaConf

from runner.app import initialize_compose, run

REPO = Path(__file__).resolve().parents[2]
EXPERIMENTS = sorted(p.stem for p in (REPO / "configs" / "experiment").glob("*.yaml"))


def compose_config(*overrides: str, config_dir: str | Path | None = None) -> dict:
    """The config ``python -m runner OVERRIDES`` would run, as plain containers.

    ``config_dir`` stands for ``--config-dir``: a folder of the user's own configs added to the
    search path (through ``hydra.searchpath``, which is what --config-dir sets).
    """
    overrides = list(overrides)
    if config_dir is not None:
        overrides.insert(0, f"hydra.searchpath=[file://{Path(config_dir).resolve()}]")
    with initialize_compose():
        cfg = compose("config", overrides=overrides)
    return OmegaConf.to_container(cfg, resolve=True)


def run_config(cfg: dict, out_dir: Path) -> int:
    """Run a composed config in-process in ``out_dir``; the exit code."""
    return run(cfg, out_dir)


def run_cli(*args: str, cwd: Path, timeout: float = 120, env: dict | None = None,
            check_code: int | None = None) -> subprocess.CompletedProcess:
    """``python -m runner ARGS`` in ``cwd``; output captured as text."""
    full_env = {**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})}
    if "HYDRA_FULL_ERROR" not in (env or {}):
        full_env.pop("HYDRA_FULL_ERROR", None)
    proc = subprocess.run([sys.executable, "-m", "runner", *args], cwd=cwd, env=full_env,
                          capture_output=True, text=True, timeout=timeout)
    if check_code is not None:
        assert proc.returncode == check_code, (proc.returncode, proc.stdout, proc.stderr)
    return proc


def read_metrics(run_dir: Path) -> list[dict]:
    path = Path(run_dir) / "metrics.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def read_summary(run_dir: Path) -> dict:
    return json.loads((Path(run_dir) / "summary.json").read_text())
