"""The training loop: which steps are logged and evaluated, what a record holds, what happens at
a NaN/Inf (on_nonfinite raise and skip), the one global step of several groups, gradcheck, and
the progress bar's conditions."""

from __future__ import annotations

import copy
import functools
import io
import math
import re

import numpy as np
import pytest
from runner_helpers import compose_config, read_metrics, read_summary, run_config

from runner import console
from runner.outputs import EXIT_DIVERGED


@pytest.fixture(scope="module")
def base() -> dict:
    return compose_config()


def sqrt_model(base: dict, init: float, on_nonfinite: str, steps: int) -> dict:
    """Minimize sqrt(w) by SGD with rate 1 from w = 1: w_1 = 1 - 1/2 = 0.5,
    w_2 = 0.5 - 1/(2 sqrt(0.5)) = -0.2071, and step 3's forward pass takes sqrt of a negative."""
    cfg = copy.deepcopy(base)
    cfg.pop("data")
    cfg["model"] = {"variables": {"w": {"init": init}},
                    "graph": {"r": "sqrt(w)", "loss": "r * 1.0"}, "loss": "loss"}
    cfg["groups"] = {"g": {"select": {"variables": ["w"]},
                           "optimizer": {"name": "sgd", "learning_rate": 1.0}}}
    cfg["train"].update(steps=steps, log_every=1, checkpoint_every=1, on_nonfinite=on_nonfinite)
    return cfg


W2 = 0.5 - 1.0 / (2.0 * math.sqrt(0.5))


def test_raise_stops_with_status_diverged_naming_step_and_node(base, tmp_path):
    assert run_config(sqrt_model(base, 1.0, "raise", 10), tmp_path) == EXIT_DIVERGED
    summary = read_summary(tmp_path)
    assert summary["status"] == "diverged" and summary["steps"] == 2
    assert "step 3" in summary["error"] and "graph node 'r'" in summary["error"]
    # The last good checkpoint is kept: the state after step 2.
    with np.load(tmp_path / "checkpoint.npz") as ckpt:
        assert int(ckpt["step"]) == 2
        assert np.isclose(ckpt["var/w"], W2, rtol=1e-6)
    assert [r["step"] for r in read_metrics(tmp_path)] == [1, 2]


def test_skip_skips_the_update_and_counts_it(base, tmp_path):
    assert run_config(sqrt_model(base, 1.0, "skip", 5), tmp_path) == 0
    summary = read_summary(tmp_path)
    assert summary["status"] == "completed" and summary["skipped_steps"] == 3
    records = read_metrics(tmp_path)
    assert [r["skipped_steps"] for r in records] == [0, 0, 1, 2, 3]
    assert records[2]["loss"] is None  # NaN is written as null (strict JSON)
    with np.load(tmp_path / "checkpoint.npz") as ckpt:
        assert np.isclose(ckpt["var/w"], W2, rtol=1e-6)   # the skipped updates changed nothing
        assert int(ckpt["step"]) == 5                     # but the steps were taken


def test_a_skipped_step_leaves_the_moving_statistics_unchanged(base, tmp_path):
    """batch_norm's moving mean and variance move only in the steps that update: with momentum
    0.5 towards the batch [1, 3] (mean 2, variance 1) from 0 and 0, after the two good steps of
    the sqrt model (steps 3-5 skipped) they are 2 (1 - 0.5^2) = 1.5 and 1 - 0.5^2 = 0.75; had
    the skipped steps moved them, 2 (1 - 0.5^5) = 1.9375 and 0.96875."""
    cfg = sqrt_model(base, 1.0, "skip", 5)
    cfg["model"] = {
        "constants": {"x": [[1.0], [3.0]]},
        "variables": {"w": {"init": 1.0}, "m": {"init": [0.0], "trainable": False},
                      "v": {"init": [0.0], "trainable": False}},
        "graph": {"h": "batch_norm(x, None, None, m, v, momentum=0.5)", "r": "sqrt(w)",
                  "loss": "r * 1.0 + mean(h) * 0.0"},
        "loss": "loss"}
    assert run_config(cfg, tmp_path) == 0
    assert read_summary(tmp_path)["skipped_steps"] == 3
    with np.load(tmp_path / "checkpoint.npz") as ckpt:
        np.testing.assert_allclose(ckpt["var/m"], [1.5], rtol=1e-6)
        np.testing.assert_allclose(ckpt["var/v"], [0.75], rtol=1e-6)
        assert np.isclose(ckpt["var/w"], W2, rtol=1e-6)


def test_a_nan_gradient_of_a_finite_forward_pass_is_named(base, tmp_path):
    # d/dw sqrt(w * w) at w = 0 is 0/0.
    cfg = sqrt_model(base, 0.0, "raise", 3)
    cfg["model"]["graph"] = {"loss": "sqrt(w * w)"}
    assert run_config(cfg, tmp_path) == EXIT_DIVERGED
    error = read_summary(tmp_path)["error"]
    assert "step 1" in error and "gradient" in error and "'w'" in error


def test_nan_in_the_data_is_named(base, tmp_path):
    x = np.linspace(0, 1, 16)[:, None]
    x[5] = np.nan
    np.savez(tmp_path / "d.npz", x=x, y=x)
    cfg = copy.deepcopy(base)
    cfg["data"] = {"source": "npz", "path": str(tmp_path / "d.npz"), "batch_size": None}
    assert run_config(cfg, tmp_path / "run") == EXIT_DIVERGED
    assert "input 'x'" in read_summary(tmp_path / "run")["error"]


def test_log_and_eval_steps_and_what_a_record_holds(base, tmp_path):
    cfg = copy.deepcopy(base)
    cfg["data"]["eval_fraction"] = 0.25
    cfg["train"].update(steps=25, log_every=10, eval_every=20)
    assert run_config(cfg, tmp_path) == 0
    records = read_metrics(tmp_path)
    assert [r["step"] for r in records] == [10, 20, 25]
    assert ["eval/loss" in r for r in records] == [False, True, True]
    assert set(records[0]) == {"step", "epoch", "loss", "all/lr", "all/grad_norm",
                               "all/grad_norm_processed"}
    assert [r["epoch"] for r in records] == [2, 4, 5]  # 6 batches of 32 per epoch
    assert read_summary(tmp_path)["final"]["eval/loss"] == records[-1]["eval/loss"]


def test_eval_loss_is_the_loss_over_the_held_out_split(base, tmp_path):
    # SGD with rate 0 keeps W = b = 0, so the eval loss is the mean of y^2 over the eval split.
    cfg = copy.deepcopy(base)
    cfg["data"]["eval_fraction"] = 0.25
    cfg["groups"]["all"]["optimizer"]["learning_rate"] = 0.0
    cfg["train"].update(steps=2, eval_every=1)
    assert run_config(cfg, tmp_path) == 0
    from runner.data import load_data

    data = load_data(cfg["data"], {"x": {"shape": [None, 1]}, "y": {"shape": [None, 1]}},
                     cfg["seed"], tmp_path)
    expected = float(np.mean(data.eval["y"].astype(np.float64) ** 2))
    assert np.isclose(read_metrics(tmp_path)[-1]["eval/loss"], expected, rtol=1e-5)


def test_two_groups_make_one_step_and_report_their_own_losses(tmp_path):
    cfg = compose_config("+experiment=stop_gradient", "train.steps=7", "train.log_every=7")
    assert run_config(cfg, tmp_path) == 0
    record = read_metrics(tmp_path)[-1]
    assert {"weighted/loss", "anchored/loss", "weighted/lr", "anchored/lr"} <= set(record)
    # anchored's own loss is the graph node 'anchor', logged also as a metric.
    assert record["anchored/loss"] == record["anchor"]
    with np.load(tmp_path / "checkpoint.npz") as ckpt:
        assert int(ckpt["step"]) == 7


def test_gradcheck_of_the_lstm_passes(tmp_path, capsys):
    cfg = compose_config("+experiment=clip_adam", "mode=gradcheck", "gradcheck.max_entries=3")
    assert run_config(cfg, tmp_path) == 0
    assert "passed" in capsys.readouterr().out


def test_gradcheck_fails_when_the_engine_gradient_is_wrong(tmp_path, monkeypatch, capsys):
    """The check can fail: make the engine's tanh gradient wrong by a factor of 2."""
    from engine.framework import registry

    op = registry.OPS["Tanh"]
    wrong = lambda op_, g: [2.0 * t for t in op.grad(op_, g)]  # noqa: E731
    monkeypatch.setitem(registry.OPS, "Tanh", registry.OpDef(**{**op.__dict__, "grad": wrong}))
    cfg = compose_config("+experiment=clip_value", "mode=gradcheck", "gradcheck.max_entries=3")
    assert run_config(cfg, tmp_path) == 1
    assert "FAILED" in capsys.readouterr().out


def test_no_progress_bar_when_stdout_is_not_a_terminal(monkeypatch):
    monkeypatch.setattr("sys.stdout", io.StringIO())
    assert console.progress_bar(10, 0, enabled=True) is None
    assert console.progress_bar(10, 0, enabled=False) is None


def test_progress_bar_in_a_terminal_shows_steps_per_second_loss_and_time_left(base, tmp_path,
                                                                               monkeypatch,
                                                                               capsys):
    class Terminal(io.StringIO):
        def isatty(self):
            return True

    tqdm = pytest.importorskip("tqdm")
    monkeypatch.setattr("sys.stdout", Terminal())
    # every update drawn (tqdm redraws at most every 0.1 s; the run takes less)
    monkeypatch.setattr(tqdm.tqdm, "__init__", functools.partialmethod(tqdm.tqdm.__init__,
                                                                      mininterval=0))
    cfg = copy.deepcopy(base)
    cfg["train"].update(steps=40, log_every=40)
    assert run_config(cfg, tmp_path) == 0
    states = [s for s in capsys.readouterr().err.split("\r") if "40/40" in s]
    bar = states[-1] if states else ""
    assert re.search(r"40/40 \[\d\d:\d\d<00:00, +[\d.]+ *step/s, loss=[\d.e+-]+\]", bar), bar


def test_plots_false_draws_no_loss_png(base, tmp_path):
    pytest.importorskip("matplotlib")
    cfg = copy.deepcopy(base)
    cfg["train"].update(steps=3, plots=False)
    assert run_config(cfg, tmp_path) == 0
    assert (tmp_path / "summary.json").exists() and not (tmp_path / "loss.png").exists()


def test_a_batch_dependent_engine_error_is_a_config_error_before_step_1(base, tmp_path, capsys):
    # 32 examples per batch cannot be reshaped into 3 rows: known only when a batch arrives, and
    # found by the dry run on the first batch before step 1.
    cfg = copy.deepcopy(base)
    cfg["model"]["graph"]["pred"] = "x @ W + b + mean(reshape(x, [3, -1]))"
    assert run_config(cfg, tmp_path) == 2
    err = capsys.readouterr().err
    assert err.startswith("model.graph.pred: Reshape (op 'pred/Reshape'): cannot reshape array "
                          "of size 32") and "before step 1" in err and "Traceback" not in err
    assert err.count("\n") == 1
    assert read_summary(tmp_path)["status"] == "failed"
    assert not (tmp_path / "metrics.jsonl").exists() and not (tmp_path / "checkpoint.npz").exists()


# Derived with TensorFlow 1 (tensorflow.compat.v1 2.21, TF_ENABLE_ONEDNN_OPTS=0): the same MLP,
# data and initial values; g1 = tf.gradients(loss, [W1, b1]) clipped by tf.clip_by_global_norm
# (.., 0.5) and applied by AdamOptimizer(0.1); g2 = tf.gradients(loss, [W2, b2]) through
# tf.clip_by_value(.., -0.2, 0.2) and GradientDescentOptimizer(exponential_decay(0.3, gs, 2,
# 0.5)); both apply_gradients under tf.control_dependencies(g1c + g2c + [loss]) (without it
# TF1 lets one group's gradient read the other group's already-updated weights, a race), then
# assign_add(gs, 1) under control_dependencies on both. Printed per step: loss, global norm of
# g1, the SGD rate; then the variables and Adam's m slot of W1.
TF_LOSS = [1.735912561416626, 1.5109622478485107, 1.3522365093231201, 1.2313072681427002]
TF_NORM = [0.7811214923858643, 0.6933484673500061, 0.6405357718467712, 0.6140697002410889]
TF_LR = [0.30000001192092896, 0.2121320366859436, 0.15000000596046448, 0.1060660183429718]
TF_VARS = {
    "W1": [[-0.20041191577911377, -0.007450208067893982, 0.19915276765823364],
           [0.39918094873428345, 0.47669875621795654, -0.6803542375564575]],
    "b1": [0.4117714762687683, -0.39037513732910156, 0.47711053490638733],
    "W2": [[0.5617938041687012], [-0.08673480153083801], [0.2570575475692749]],
    "b2": [0.33693546056747437],
}
TF_M_W1 = [[0.1517879068851471, -0.026998410001397133, 0.049589239060878754],
           [0.046042609959840775, -0.009017350152134895, 0.009539978578686714]]


def test_two_groups_match_tensorflow_step_by_step(tmp_path):
    np.savez(tmp_path / "d.npz",
             x=np.array([[0.5, -1.0], [1.5, 0.25], [-0.75, 2.0], [0.1, 0.3]], np.float32),
             y=np.array([[1.0], [-1.0], [0.5], [2.0]], np.float32))
    cfg = compose_config()
    cfg["model"] = {
        "inputs": {"x": {"shape": [None, 2]}, "y": {"shape": [None, 1]}},
        "variables": {"W1": {"init": [[0.2, -0.4, 0.6], [0.8, 0.1, -0.3]]},
                      "b1": {"init": [0.05, -0.05, 0.1]},
                      "W2": {"init": [[0.7], [-0.2], [0.4]]},
                      "b2": {"init": [0.3]}},
        "graph": {"h": "tanh(x @ W1 + b1)", "pred": "h @ W2 + b2",
                  "loss": "mean((pred - y) ** 2)"},
        "loss": "loss"}
    cfg["data"] = {"source": "npz", "path": str(tmp_path / "d.npz"), "batch_size": None}
    cfg["groups"] = {
        "encoder": {"select": {"variables": ["W1", "b1"]},
                    "optimizer": {"name": "adam", "learning_rate": 0.1},
                    "pipeline": {"clip_by_global_norm": {"clip_norm": 0.5}}},
        "head": {"select": {"variables": ["W2", "b2"]},
                 "optimizer": {"name": "sgd", "learning_rate": {
                     "schedule": "exponential_decay", "initial": 0.3, "decay_steps": 2,
                     "decay_rate": 0.5}},
                 "pipeline": {"clip_by_value": {"clip_value_min": -0.2, "clip_value_max": 0.2}}}}
    cfg["train"].update(steps=4, log_every=1)
    assert run_config(cfg, tmp_path / "run") == 0
    records = read_metrics(tmp_path / "run")
    assert np.allclose([r["loss"] for r in records], TF_LOSS, rtol=1e-5)
    assert np.allclose([r["encoder/grad_norm"] for r in records], TF_NORM, rtol=1e-5)
    assert np.allclose([r["head/lr"] for r in records], TF_LR, rtol=1e-6)
    with np.load(tmp_path / "run" / "checkpoint.npz") as ckpt:
        for name, value in TF_VARS.items():
            assert np.allclose(ckpt[f"var/{name}"], value, rtol=1e-5, atol=1e-6), name
        assert np.allclose(ckpt["slot/W1/m"], TF_M_W1, rtol=1e-5, atol=1e-7)
        assert int(ckpt["step"]) == 4


def nan_batch_config(base: dict, tmp_path, rows: int, nan_row: int, k: int) -> dict:
    """y = 2x + 1 on ``rows`` examples in batches of 8, in order, x[nan_row] NaN; SGD with an
    ``accumulate`` stage of k steps; on_nonfinite=skip."""
    x = np.linspace(-1, 1, rows)[:, None]
    y = 2 * x + 1
    x[nan_row] = np.nan
    np.savez(tmp_path / "d.npz", x=x, y=y)
    cfg = copy.deepcopy(base)
    cfg["data"] = {"source": "npz", "path": str(tmp_path / "d.npz"), "batch_size": 8,
                   "shuffle": False}
    cfg["groups"]["all"]["pipeline"] = {"accumulate": {"k": k}}
    cfg["train"].update(on_nonfinite="skip")
    return cfg


def test_skip_with_accumulate_skips_the_nan_step_alone_and_recovers(base, tmp_path):
    """One NaN example per epoch (batch 2 of 8) with accumulate k=4: the NaN step is skipped
    and its gradient never enters the accumulator (the pipelines' state is gated on the raw
    gradients being finite), so the window goes on with its finite steps."""
    cfg = nan_batch_config(base, tmp_path, 64, 10, 4)
    cfg["train"].update(steps=40, log_every=8)
    assert run_config(cfg, tmp_path / "run") == 0
    records = read_metrics(tmp_path / "run")
    assert [r["skipped_steps"] for r in records] == [1, 2, 3, 4, 5]
    losses = [r["loss"] for r in records]
    assert all(np.isfinite(losses)) and losses[-1] < losses[0] / 4


def test_a_skipped_step_leaves_every_stages_state_bit_identical(base, tmp_path):
    """The state after step 1 and after step 2 (its batch holds a NaN, skipped) is the same bit
    for bit: the accumulator and its step count, the variables and the optimizer's state; only
    the step and the data position move on."""
    cfg = nan_batch_config(base, tmp_path, 32, 10, 3)
    states = []
    for steps in (1, 2):
        cfg["train"]["steps"] = steps
        assert run_config(cfg, tmp_path / f"run{steps}") == 0
        with np.load(tmp_path / f"run{steps}" / "checkpoint.npz") as ckpt:
            states.append({k: ckpt[k] for k in ckpt.files if not k.startswith("meta")})
    assert read_summary(tmp_path / "run2")["skipped_steps"] == 1
    after_one, after_two = states
    assert {k for k in after_one if k.startswith("state/")} >= {
        "state/all/pipeline/accumulate/count", "state/W/accumulate", "state/b/accumulate"}
    for key in after_one:
        if key in ("step", "data/position"):
            assert int(after_two[key]) == int(after_one[key]) + 1
        else:
            assert after_two[key].tobytes() == after_one[key].tobytes(), key


def test_dropout_drops_in_training_steps_only(base, tmp_path):
    """The training switch: on in the training steps' forward pass, off in evaluation. With
    W = 0 (SGD at rate 0), kept = dropout(ones) and the loss is mean(kept ** 2): 2 * (kept
    fraction) in training, exactly 1 in evaluation."""
    cfg = copy.deepcopy(base)
    cfg["data"]["eval_fraction"] = 0.25
    cfg["groups"]["all"]["optimizer"]["learning_rate"] = 0.0
    cfg["model"] = {"inputs": {"x": {"shape": [None, 1]}, "y": {"shape": [None, 1]}},
                    "variables": {"W": {"shape": [1, 256], "init": "zeros"}},
                    "graph": {"kept": "dropout(x @ W + 1, rate=0.5)", "loss": "mean(kept ** 2)"},
                    "loss": "loss", "metrics": ["loss"]}
    cfg["train"].update(steps=4, log_every=1, eval_every=2)
    assert run_config(cfg, tmp_path) == 0
    records = read_metrics(tmp_path)
    assert all(1.8 < r["loss"] < 2.2 for r in records)
    assert [r["eval/loss"] for r in records if "eval/loss" in r] == [1.0, 1.0]
