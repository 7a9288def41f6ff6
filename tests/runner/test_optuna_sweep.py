"""The Optuna sweeper (optional extra ``optuna``): each trial is a multirun job that returns its
objective, so the study's best value is the smallest objective among the jobs' own records, and
the sweep still gets its summary.csv. Skipped where hydra-optuna-sweeper is not installed."""

import csv
import importlib.util
import json

import pytest
import yaml
from runner_helpers import run_cli

from runner.sweep import JOB_FILE, SUMMARY_CSV


def _has(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        return False


pytestmark = pytest.mark.skipif(not _has("hydra_plugins.hydra_optuna_sweeper"),
                                reason="hydra-optuna-sweeper not installed (extra: optuna)")


def _study(sweep_dir):
    """The sweep's rows, each job's record, and what the plugin reported as best."""
    with open(sweep_dir / SUMMARY_CSV, newline="") as f:
        rows = list(csv.DictReader(f))
    records = [json.loads((sweep_dir / r["job"] / JOB_FILE).read_text()) for r in rows]
    best = yaml.safe_load((sweep_dir / "optimization_results.yaml").read_text())
    return rows, records, best


def _best_job(records, metric):
    return min(records, key=lambda r: r["final"][metric])


def test_two_trials_minimize_the_final_loss(tmp_path):
    """Without held-out data the objective is the final training loss: the study's best value
    and parameters are those of the job whose summary has the smallest loss."""
    sweep_dir = tmp_path / "sweep"
    run_cli("-m", "hydra/sweeper=optuna", "hydra.sweeper.n_trials=2", "hydra.sweeper.n_jobs=1",
            "hydra.sweeper.sampler.seed=0", "hydra.sweeper.direction=minimize",
            "groups=adam_clip", "train.steps=5",
            "groups.all.optimizer.learning_rate=tag(log, interval(0.001, 0.5))",
            "groups.all.pipeline.clip_by_global_norm.clip_norm=interval(0.1, 10.0)",
            f"hydra.sweep.dir={sweep_dir}", cwd=tmp_path, check_code=0, timeout=300)
    rows, records, best = _study(sweep_dir)
    assert [r["status"] for r in rows] == ["completed", "completed"]
    assert all("eval/loss" not in r["final"] for r in records)
    losses = [r["final"]["loss"] for r in records]
    assert losses[0] != losses[1]  # the trials differ, so picking the best means something
    winner = _best_job(records, "loss")
    assert best["best_value"] == pytest.approx(winner["final"]["loss"], rel=1e-12)
    chosen = dict(o.split("=", 1) for o in winner["overrides"])
    assert {k: float(chosen[k]) for k in best["best_params"]} == pytest.approx(
        best["best_params"], rel=1e-12)


def test_shipped_study_config_minimizes_the_final_eval_loss(tmp_path):
    """configs/hydra/sweeper/clip_adam_optuna.yaml, cut to two trials of three steps: the
    clip_adam run evaluates at its last step, so the objective is eval/loss, not loss."""
    sweep_dir = tmp_path / "sweep"
    proc = run_cli("-m", "hydra/sweeper=clip_adam_optuna", "hydra.sweeper.n_trials=2",
                   "+experiment=clip_adam", "train.steps=3", f"hydra.sweep.dir={sweep_dir}",
                   cwd=tmp_path, check_code=0, timeout=300)
    rows, records, best = _study(sweep_dir)
    assert len(rows) == 2 and {r["status"] for r in rows} == {"completed"}
    assert set(best["best_params"]) == {"groups.encoder.optimizer.learning_rate",
                                        "groups.encoder.pipeline.clip_by_global_norm.clip_norm"}
    winner = _best_job(records, "eval/loss")
    assert best["best_value"] == pytest.approx(winner["final"]["eval/loss"], rel=1e-12)
    assert best["best_value"] not in [r["final"]["loss"] for r in records]
    assert "sweep summary" in proc.stdout
