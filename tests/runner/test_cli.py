"""``python -m runner`` as a user runs it: a subprocess with overrides, a few steps, its run
directory set with ``hydra.run.dir``. Checks the outputs DESIGN.md names (metrics.jsonl,
summary.json, checkpoint.npz, runner.log), the exit codes, the error format without a
traceback, ``--config-dir`` experiments written inline after ``override /...: null``, the modes,
and a multirun."""

from __future__ import annotations

import json
import re
import textwrap

import numpy as np
from runner_helpers import read_metrics, read_summary, run_cli


def test_default_run_writes_its_outputs_in_the_run_dir(tmp_path):
    run_dir = tmp_path / "run"
    proc = run_cli(f"hydra.run.dir={run_dir}", "train.steps=20", "train.log_every=10",
                   cwd=tmp_path, check_code=0)
    assert {"metrics.jsonl", "summary.json", "checkpoint.npz", "runner.log"} <= \
        {p.name for p in run_dir.iterdir()}
    records = read_metrics(run_dir)
    assert [r["step"] for r in records] == [10, 20]
    for key in ("loss", "all/lr", "all/grad_norm", "all/grad_norm_processed"):
        assert all(isinstance(r[key], float) for r in records), key
    summary = read_summary(run_dir)
    assert summary["status"] == "completed" and summary["steps"] == 20
    assert summary["final"]["loss"] == records[-1]["loss"]
    assert summary["wall_time_s"] >= 0
    with np.load(run_dir / "checkpoint.npz") as ckpt:
        assert int(ckpt["step"]) == 20
        assert {"var/W", "var/b"} <= set(ckpt.files)
    # Hydra's job log is named after the job, 'runner' (not '__main__'), and holds the log lines.
    assert "step 20/20" in (run_dir / "runner.log").read_text()
    assert "step 20/20" in proc.stdout
    # The run directory is printed at the start and in the summary; numexpr's note is not.
    lines = proc.stdout.splitlines()
    assert lines[0].endswith(f"run directory: {run_dir}")
    assert re.search(rf"^  run directory +{re.escape(str(run_dir))}$", proc.stdout, re.M)
    assert "NumExpr" not in proc.stdout + proc.stderr
    # No chdir: nothing was written into the working directory except the run dir.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]


def test_readme_main_job_logs_grad_norm_before_and_after_clipping(tmp_path):
    run_dir = tmp_path / "run"
    proc = run_cli("+experiment=clip_adam", f"hydra.run.dir={run_dir}", "train.steps=4",
                   "train.log_every=2", "train.eval_every=4", cwd=tmp_path, check_code=0)
    # The LSTM's first gradients are far above clip_norm 1.0: the log shows both norms.
    line = next(line for line in proc.stdout.splitlines() if "step 2/4" in line)
    before, after = map(float, re.search(r"grad_norm ([\d.e+-]+) -> ([\d.e+-]+)", line).groups())
    assert before > 1.0 and abs(after - 1.0) < 1e-5, line
    record = read_metrics(run_dir)[-1]
    assert record["encoder/clipped"] == 1 and "eval/loss" in record


def test_config_errors_exit_2_one_line_each_without_traceback(tmp_path):
    proc = run_cli(f"hydra.run.dir={tmp_path / 'run'}", "train.steps=many",
                   "model.graph.pred=x @ W3 + b", "groups.all.optimizer.name=adamm",
                   cwd=tmp_path, check_code=2)
    assert "Traceback" not in proc.stderr + proc.stdout
    lines = proc.stderr.strip().splitlines()
    assert sorted(line.split(":")[0].split(" ")[0] for line in lines) == \
        ["groups.all.optimizer.name", "model.graph.pred", "train.steps"], proc.stderr
    assert any(line.startswith("model.graph.pred (column 5): unknown name 'W3'")
               for line in lines), proc.stderr
    assert read_summary(tmp_path / "run")["status"] == "failed"


def test_hydra_full_error_shows_the_traceback(tmp_path):
    proc = run_cli(f"hydra.run.dir={tmp_path / 'run'}", "train.steps=many", cwd=tmp_path,
                   env={"HYDRA_FULL_ERROR": "1"})
    assert proc.returncode != 0
    assert "Traceback" in proc.stderr and "train.steps" in proc.stderr


def test_an_override_hydra_cannot_apply_exits_2(tmp_path):
    proc = run_cli(f"hydra.run.dir={tmp_path / 'run'}", "train.stpes=5", cwd=tmp_path,
                   check_code=2)
    assert "stpes" in proc.stderr and "Traceback" not in proc.stderr
    assert "full_key: train.stpes (did you mean 'train.steps'?)" in proc.stderr


def test_a_mistyped_key_inside_an_experiment_gets_the_close_key(tmp_path):
    proc = run_cli(f"hydra.run.dir={tmp_path / 'run'}", "+experiment=clip_adam",
                   "groups.encoder.optimzer.learning_rate=0.1", cwd=tmp_path, check_code=2)
    assert "(did you mean 'groups.encoder.optimizer'?)" in proc.stderr
    proc = run_cli(f"hydra.run.dir={tmp_path / 'run'}", "train.qqqqqq=1", cwd=tmp_path,
                   check_code=2)
    assert "full_key: train.qqqqqq\n" in proc.stderr and "did you mean" not in proc.stderr


def test_user_experiment_from_config_dir_with_inline_model_data_groups(tmp_path):
    """DESIGN's config, written by a user in their own folder, as a whole run."""
    (tmp_path / "my_configs" / "experiment").mkdir(parents=True)
    np.savez(tmp_path / "points.npz", x=np.linspace(-1, 1, 40)[:, None],
             y=3.0 * np.linspace(-1, 1, 40)[:, None] - 1.0)
    (tmp_path / "my_configs" / "experiment" / "mine.yaml").write_text(textwrap.dedent("""\
        # @package _global_
        defaults:
          - override /model: null
          - override /data: null
          - override /groups: null
        seed: 5
        model:
          inputs:     {x: {shape: [null, 1]}, y: {shape: [null, 1]}}
          constants:  {k: [[9.0], [10.0]]}
          variables:
            W1: {shape: [1, 8], init: glorot_uniform, collections: [encoder]}
            b1: {shape: [8],    init: zeros,          collections: [encoder]}
            W2: {shape: [8, 1], init: {name: normal, stddev: 0.1}, collections: [head]}
            b2: {init: [0.0],    collections: [head], trainable: true}
          graph:
            h:    tanh(x @ W1 + b1)
            pred: h @ W2 + b2
            loss: mean((pred - y) ** 2)
          loss: loss
          metrics: [loss]
        data: {source: npz, path: points.npz, batch_size: 8, shuffle: true}
        groups:
          encoder:
            select: {collection: encoder}
            optimizer: {name: adam, learning_rate: 1.0e-2}
            pipeline:
              clip_by_global_norm: {clip_norm: 5.0}
          head:
            select: {collection: head}
            optimizer:
              name: sgd
              learning_rate: {schedule: exponential_decay, initial: 0.1, decay_steps: 100,
                              decay_rate: 0.5}
            pipeline:
              clip_by_value: {clip_value_min: -1.0, clip_value_max: 1.0}
        train: {steps: 10, log_every: 5, checkpoint_every: 0, on_nonfinite: raise}
        """))
    run_dir = tmp_path / "run"
    # --config-dir between the overrides, as users write it (Hydra's parser alone refuses it)
    run_cli("+experiment=mine", "--config-dir", "my_configs", f"hydra.run.dir={run_dir}",
            cwd=tmp_path, check_code=0)
    record = read_metrics(run_dir)[-1]
    assert record["step"] == 10
    assert {"encoder/lr", "encoder/grad_norm", "encoder/clipped", "head/lr",
            "head/grad_norm_processed"} <= set(record)
    # exponential_decay: 0.1 * 0.5 ** (global_step / 100), read before step 10's increment.
    assert np.isclose(record["head/lr"], 0.1 * 0.5 ** (9 / 100), rtol=1e-6)


def test_mode_check_prints_the_compiled_model_without_training(tmp_path):
    run_dir = tmp_path / "run"
    proc = run_cli("+experiment=clip_adam", "mode=check", f"hydra.run.dir={run_dir}",
                   cwd=tmp_path, check_code=0)
    out = proc.stdout
    assert re.search(r"kernel\s+rnn/kernel\s+\[34, 128\]", out), out
    assert re.search(r"h\s+\[40, \?, 32\]", out), out          # each graph node's shape
    assert re.search(r"x\s+\[40, \?, 2\]\s+float32\s+time-major", out), out
    assert "optimizer: adam(learning_rate=0.01)" in out
    assert "pipeline: clip_by_global_norm(clip_norm=1.0)" in out
    assert not (run_dir / "metrics.jsonl").exists()


def test_mode_gradcheck_reports_the_worst_error_per_variable(tmp_path):
    run_dir = tmp_path / "run"
    proc = run_cli("+experiment=two_optimizers", "mode=gradcheck", "gradcheck.max_entries=4",
                   f"hydra.run.dir={run_dir}", cwd=tmp_path, check_code=0)
    assert "passed" in proc.stdout
    report = json.loads((run_dir / "gradcheck.json").read_text())
    assert [v["variable"] for v in report["variables"]] == ["W1", "b1", "W2", "b2"]
    assert all(v["worst_relative_error"] < 1e-6 for v in report["variables"])


def test_multirun_runs_each_job_in_its_own_directory(tmp_path):
    proc = run_cli("-m", f"hydra.sweep.dir={tmp_path / 'sweep'}", "train.steps=5",
                   "groups.all.optimizer.learning_rate=0.1,0.2", cwd=tmp_path, check_code=0)
    summaries = sorted((tmp_path / "sweep").glob("*/summary.json"))
    assert len(summaries) == 2, proc.stdout
    lrs = sorted(read_metrics(s.parent)[-1]["all/lr"] for s in summaries)
    assert np.allclose(lrs, [0.1, 0.2])


def test_a_yaml_syntax_error_in_an_experiment_exits_2_without_traceback(tmp_path):
    (tmp_path / "mine" / "experiment").mkdir(parents=True)
    (tmp_path / "mine" / "experiment" / "bad.yaml").write_text(
        "# @package _global_\nmodel:\n  graph: {pred: [x\n")
    proc = run_cli("--config-dir", "mine", "+experiment=bad", f"hydra.run.dir={tmp_path / 'r'}",
                   cwd=tmp_path, check_code=2)
    assert "Traceback" not in proc.stderr
    assert "bad.yaml" in proc.stderr and "line 3" in proc.stderr


def test_an_unresolvable_interpolation_names_its_key(tmp_path):
    proc = run_cli(f"hydra.run.dir={tmp_path / 'r'}", "train.steps=${nope}", cwd=tmp_path,
                   check_code=2)
    assert proc.stderr.strip() == "train.steps: Interpolation key 'nope' not found"
