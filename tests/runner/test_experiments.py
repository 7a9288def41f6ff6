"""The shipped experiments (configs/experiment/): each composes with Hydra's compose API, passes
mode=check, runs a few steps, and, run as shipped, reaches the loss its comment promises.

Reference values: the ``minimize`` and ``stop_gradient`` runs are checked against updates
derived here with numpy from the SGD formula; the others against the level a model that learned
nothing would score (a constant prediction), with a margin that a working run clears easily.
"""

from __future__ import annotations

import numpy as np
import pytest
from runner_helpers import (
    EXPERIMENTS,
    compose_config,
    read_metrics,
    read_summary,
    run_cli,
    run_config,
)

from runner.config import validate
from runner.prepare import prepare

SHIPPED = {"adagrad_decay", "clip_adam", "clip_norm", "clip_value", "embedding_adagrad_decay",
           "linear_regression", "minimize", "stop_gradient", "two_optimizers"}


def test_the_shipped_experiments_are_all_there():
    assert SHIPPED <= set(EXPERIMENTS)


@pytest.mark.parametrize("name", EXPERIMENTS)
def test_experiment_composes_builds_and_runs_three_steps(name, tmp_path):
    cfg = compose_config(f"+experiment={name}", "train.steps=3", "train.log_every=1")
    config, model, _ = prepare(cfg, tmp_path)
    assert model.groups and config.mode == "train"
    assert run_config(cfg, tmp_path / "run") == 0
    records = read_metrics(tmp_path / "run")
    assert [r["step"] for r in records] == [1, 2, 3]
    assert all(np.isfinite(r["loss"]) for r in records)


def test_the_default_run_is_the_linear_regression(tmp_path):
    assert validate(compose_config()) == validate(compose_config("+experiment=linear_regression"))


def run_shipped(name: str, tmp_path, *overrides: str) -> dict:
    assert run_config(compose_config(f"+experiment={name}", *overrides), tmp_path) == 0
    summary = read_summary(tmp_path)
    assert summary["status"] == "completed"
    return summary["final"]


def test_linear_regression_reaches_the_noise_floor(tmp_path):
    # y = x W + b + 0.1 N(0, 1): the best mean squared error is the noise variance, 0.01.
    final = run_shipped("linear_regression", tmp_path)
    assert final["loss"] < 0.02


def test_clip_adam_learns_the_adding_problem_with_clipped_gradients(tmp_path):
    # The README's main job, run as the README runs it (python -m runner, in a subprocess).
    run_cli("+experiment=clip_adam", "train.log_every=1", f"hydra.run.dir={tmp_path}", cwd=tmp_path,
            check_code=0)
    summary = read_summary(tmp_path)
    assert summary["status"] == "completed" and summary["steps"] == 2000
    final = summary["final"]
    # Predicting the mean (1.0) scores 1/6; the eval split's loss must be far below it.
    assert final["eval/loss"] < 0.05
    records = read_metrics(tmp_path)
    clipped = [r for r in records if r["encoder/clipped"]]
    assert records[0]["step"] == 1 and records[0]["encoder/clipped"], \
        "the first gradients exceed clip_norm 1.0 (the kernel starts large)"
    for r in clipped:
        assert r["encoder/grad_norm"] > 1.0 and r["encoder/grad_norm_processed"] <= 1.0 + 1e-5


def test_two_optimizers_separates_the_spirals(tmp_path):
    final = run_shipped("two_optimizers", tmp_path)
    assert final["eval/accuracy"] > 0.85
    # The head's SGD rate follows exponential_decay(0.5, step, 1000, 0.5), read before step
    # 2000's increment.
    assert np.isclose(final["head/lr"], 0.5 * 0.5 ** (1999 / 1000), rtol=1e-5)
    assert final["encoder/lr"] == pytest.approx(0.01)


def test_clip_value_solves_xor(tmp_path):
    final = run_shipped("clip_value", tmp_path)
    assert final["eval/accuracy"] > 0.95


def test_clip_norm_fits_the_sine(tmp_path):
    # Target 5 sin(x) with noise 5 * 0.05: variance 12.5 for a constant guess, 0.0625 at best.
    final = run_shipped("clip_norm", tmp_path)
    assert final["eval/loss"] < 0.3


def test_adagrad_decay_fits_the_regression(tmp_path):
    final = run_shipped("adagrad_decay", tmp_path)
    assert final["eval/loss"] < 0.05
    with np.load(tmp_path / "checkpoint.npz") as ckpt:
        assert {"slot/W/accumulator", "slot/W/accumulator_decay_power"} <= set(ckpt.files)


def test_minimize_follows_the_sgd_formula_and_keeps_x_frozen(tmp_path, caplog):
    # y = w * x with w = 4, x = 3: dy/dw = x = 3 is below clip_norm 5, so w_k = 4 - 0.1 * 3 k
    # and the loss of step k (the forward pass before its update) is 3 * w_(k-1).
    with caplog.at_level("INFO", logger="runner"):
        run_shipped("minimize", tmp_path)
    losses = [r["loss"] for r in read_metrics(tmp_path)]
    assert np.allclose(losses, [3.0 * (4.0 - 0.3 * k) for k in range(10)], rtol=1e-6)
    with np.load(tmp_path / "checkpoint.npz") as ckpt:
        assert np.isclose(ckpt["var/w"], 1.0, atol=1e-5)
        assert ckpt["var/x"] == np.float32(3.0)
        assert int(ckpt["step"]) == 10
    frozen = [r.message for r in caplog.records if "frozen" in r.message]
    assert len(frozen) == 1 and "x" in frozen[0]
    assert read_summary(tmp_path)["frozen_variables"] == ["x"]


def test_stop_gradient_first_step_matches_grad_ys_and_stop_gradient_by_hand(tmp_path):
    run_shipped("stop_gradient", tmp_path / "init", "train.steps=0")
    run_shipped("stop_gradient", tmp_path / "one", "train.steps=1")
    with np.load(tmp_path / "init" / "checkpoint.npz") as a, \
            np.load(tmp_path / "one" / "checkpoint.npz") as b:
        w = {k: a[f"var/{k}"].astype(np.float64) for k in ("w1", "w2", "w3", "w4")}
        after = {k: b[f"var/{k}"] for k in w}
    t1, t2 = np.array([1.0, 2.0]), np.array([3.0, 4.0])
    y1, y2 = w["w1"] + w["w2"] + w["w3"], w["w3"] + w["w4"]
    # Group 'weighted': tf.gradients([fit1, fit2], [w1, w2, w4], grad_ys=[[1, 2], [3, 4]]).
    g1 = np.array([1.0, 2.0]) * 2 * (y1 - t1)
    g4 = np.array([3.0, 4.0]) * 2 * (y2 - t2)
    # Group 'anchored': d/dw3 of sum((stop_gradient(w1 + w2) + w3 - t1) ** 2) (y3 == y1).
    g3 = 2 * (y1 - t1)
    expected = {"w1": w["w1"] - 0.05 * g1, "w2": w["w2"] - 0.05 * g1,
                "w3": w["w3"] - 0.1 * g3, "w4": w["w4"] - 0.05 * g4}
    for k in w:
        assert np.allclose(after[k], expected[k], rtol=1e-5, atol=1e-6), k


def test_stop_gradient_converges(tmp_path):
    final = run_shipped("stop_gradient", tmp_path)
    assert final["loss"] < 1e-3 and final["anchor"] < 1e-3


def test_config_group_options_compose_into_a_run(tmp_path):
    """The options of the groups model/, data/ and groups/ combine on the command line."""
    cfg = compose_config("model=mlp", "data=moons", "groups=adam_clip", "train.steps=1000",
                         "train.eval_every=1000")
    assert run_config(cfg, tmp_path) == 0
    # The moons overlap little at noise 0.1; a constant guess scores 0.5.
    assert read_summary(tmp_path)["final"]["eval/accuracy"] > 0.9


def test_embedding_adagrad_decay_learns_the_words_scores(tmp_path):
    """Predicting the mean scores the targets' variance; the run is far below it after 500 of
    its 1000 steps. The table and its int64 decay counters are in the checkpoint."""
    from runner.data_synthetic import bag_of_words

    final = run_shipped("embedding_adagrad_decay", tmp_path, "train.steps=500",
                        "train.eval_every=500")
    # the run's data: seed 3, drawn from the data's generating stream ([0, seed])
    baseline = float(np.var(bag_of_words(np.random.default_rng([0, 3]), n=16384)["y"]))
    assert baseline > 1.0 and final["eval/loss"] < 0.5 * baseline
    with np.load(tmp_path / "checkpoint.npz") as ckpt:
        table = ckpt["var/word_embedding"]
        power = ckpt["slot/word_embedding/accumulator_decay_power"]
    assert table.shape == (100_000, 16) and power.dtype == np.int64
