"""Multirun: summary.csv built from the file each job wrote, printed at the end of the sweep, with
the basic launcher, joblib (parallel workers), submitit_local and a local Ray instance, also when
jobs fail or the sweep is stopped with Ctrl-C; the sweep's exit code."""

import csv
import importlib.util
import io
import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest
from runner_helpers import read_summary, run_cli

from runner import sweep
from runner.sweep import JOB_FILE, SUMMARY_CSV


def _rows(sweep_dir):
    with open(sweep_dir / SUMMARY_CSV, newline="") as f:
        return list(csv.DictReader(f))


def _has(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        return False


# --------------------------------------------------------------------------------------------
# Through the command line
# --------------------------------------------------------------------------------------------


def test_multirun_writes_one_row_per_job_including_failed_ones(tmp_path):
    sweep_dir = tmp_path / "sweep"
    proc = run_cli("-m", "train.steps=3", "train.on_nonfinite=raise,bogus", "seed=0,1",
                   f"hydra.sweep.dir={sweep_dir}", cwd=tmp_path, check_code=2)
    rows = _rows(sweep_dir)
    assert [r["job"] for r in rows] == ["0", "1", "2", "3"]
    assert [(r["train.on_nonfinite"], r["seed"], r["status"]) for r in rows] == [
        ("raise", "0", "completed"), ("raise", "1", "completed"),
        ("bogus", "0", "failed"), ("bogus", "1", "failed")]
    for job, row in enumerate(rows[:2]):
        summary = read_summary(sweep_dir / str(job))
        assert float(row["loss"]) == summary["final"]["loss"]
        assert float(row["wall_time_s"]) == summary["wall_time_s"]
    assert rows[2]["loss"] == "" and "train.on_nonfinite: must be one of" in rows[2]["error"]
    table = proc.stdout.split("sweep summary")[1]
    assert "bogus" in table and "completed" in table and "failed" in table
    if _has("matplotlib"):
        assert (sweep_dir / "comparison.png").read_bytes()[:4] == b"\x89PNG"
        assert (sweep_dir / "0" / "loss.png").exists()


def test_a_job_that_raises_is_a_failed_row_and_the_sweep_still_ends(tmp_path):
    """An unexpected error (a bug) in one job: its traceback is logged, it is a failed row, the
    other jobs run, the table is printed, and the sweep exits with 1."""
    sweep_dir = tmp_path / "sweep"
    code = textwrap.dedent(f"""
        import sys
        import runner.loop as loop
        plain_run = loop.Trainer.run
        def run(self):
            if self.config.seed == 1:
                raise ZeroDivisionError("simulated bug")
            return plain_run(self)
        loop.Trainer.run = run
        sys.argv = ["runner", "-m", "train.steps=2", "seed=0,1,2", "hydra.sweep.dir={sweep_dir}"]
        from runner.app import main
        main()
    """)
    env = {k: v for k, v in os.environ.items() if k != "HYDRA_FULL_ERROR"}
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert [(r["seed"], r["status"]) for r in _rows(sweep_dir)] == [
        ("0", "completed"), ("1", "failed"), ("2", "completed")]
    assert _rows(sweep_dir)[1]["error"] == "ZeroDivisionError: simulated bug"
    assert "Traceback" in (sweep_dir / "1" / "runner.log").read_text()
    assert "sweep summary" in proc.stdout


def test_ctrl_c_stops_the_sweep_after_the_current_step_and_prints_the_table(tmp_path):
    sweep_dir = tmp_path / "sweep"
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    env.pop("HYDRA_FULL_ERROR", None)
    proc = subprocess.Popen([sys.executable, "-m", "runner", "-m", "train.steps=100000000",
                             "train.log_every=100", "seed=0,1", f"hydra.sweep.dir={sweep_dir}"],
                            cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not (sweep_dir / "0" / "metrics.jsonl").exists():
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, out + err
    assert [(r["job"], r["status"]) for r in _rows(sweep_dir)] == [("0", "interrupted")]
    assert not (sweep_dir / "1").exists()
    assert "sweep summary" in out and "Traceback" not in err
    assert read_summary(sweep_dir / "0")["status"] == "interrupted"


def test_parallel_jobs_with_joblib_all_reach_the_table(tmp_path):
    """Workers in other processes (where Hydra's per-job callbacks run too); one job fails."""
    sweep_dir = tmp_path / "sweep"
    proc = run_cli("-m", "hydra/launcher=joblib", "hydra.launcher.n_jobs=2",
                   "train.steps=2,3,bogus", f"hydra.sweep.dir={sweep_dir}", cwd=tmp_path,
                   check_code=2, timeout=300)
    rows = _rows(sweep_dir)
    assert [(r["train.steps"], r["status"]) for r in rows] == [
        ("2", "completed"), ("3", "completed"), ("bogus", "failed")]
    assert [json.loads((sweep_dir / str(j) / JOB_FILE).read_text())["exit_code"]
            for j in range(3)] == [0, 0, 2]
    assert "sweep summary" in proc.stdout


@pytest.mark.skipif(not _has("hydra_plugins.hydra_submitit_launcher"),
                    reason="hydra-submitit-launcher not installed (extra: launchers)")
def test_submitit_local_launcher(tmp_path):
    """submitit's local executor: the same code path as SLURM (each job a pickled call in its own
    process, results collected by submitit)."""
    sweep_dir = tmp_path / "sweep"
    run_cli("-m", "hydra/launcher=submitit_local", "train.steps=2", "seed=0,1",
            f"hydra.sweep.dir={sweep_dir}", cwd=tmp_path, check_code=0, timeout=300)
    assert [(r["seed"], r["status"]) for r in _rows(sweep_dir)] == [
        ("0", "completed"), ("1", "completed")]


@pytest.mark.skipif(not (_has("ray") and _has("hydra_plugins.hydra_ray_launcher")),
                    reason="ray / hydra-ray-launcher not installed (extra: launchers)")
def test_ray_launcher_on_a_local_ray_instance(tmp_path):
    sweep_dir = tmp_path / "sweep"
    run_cli("-m", "hydra/launcher=ray", "+hydra.launcher.ray.init.num_cpus=2",
            "+hydra.launcher.ray.init.include_dashboard=false", "train.steps=2", "seed=0,1",
            f"hydra.sweep.dir={sweep_dir}", cwd=tmp_path, check_code=0, timeout=300)
    assert [(r["seed"], r["status"]) for r in _rows(sweep_dir)] == [
        ("0", "completed"), ("1", "completed")]


# --------------------------------------------------------------------------------------------
# The table from job records
# --------------------------------------------------------------------------------------------


def _job(sweep_dir, number, overrides, summary=None, code=0):
    """A job directory as a job leaves it (``summary`` None: the job has not ended)."""
    out = sweep_dir / str(number)
    sweep.start_job(out, number, overrides)
    if summary is not None:
        (out / "summary.json").write_text(json.dumps(summary))
        sweep.finish_job(out, code)
    return out


def test_table_is_rebuilt_from_whatever_jobs_have_written(tmp_path):
    """A job still running shows as such; its metrics arrive when it has ended."""
    _job(tmp_path, 0, ["seed=0", "+extra.x=1"],
         {"status": "completed", "final": {"loss": 0.5}, "wall_time_s": 1.0})
    _job(tmp_path, 1, ["seed=1", "+extra.x=1"])
    rows = sweep.refresh(tmp_path)
    assert [(r["job"], r["seed"], r["extra.x"], r["status"]) for r in rows] == [
        (0, "0", "1", "completed"), (1, "1", "1", "running")]
    assert _rows(tmp_path)[0]["loss"] == "0.5" and _rows(tmp_path)[1]["loss"] == ""
    assert sweep.write_summary_csv(tmp_path, final=True)[1]["status"] == "unfinished"


def test_a_job_directory_reused_does_not_report_the_earlier_runs_summary(tmp_path):
    out = _job(tmp_path, 0, ["seed=0"], {"status": "completed", "final": {"loss": 0.5}})
    earlier = (out / "summary.json").read_bytes()
    stamp = sweep.start_job(out, 0, ["seed=0"])
    record = sweep.finish_job(out, 1, "RuntimeError: boom", stamp)
    assert (record["status"], record["final"], record["error"]) == (
        "failed", {}, "RuntimeError: boom")
    # The earlier run's summary stays: a job failing at its start loses no run's files.
    assert (out / "summary.json").read_bytes() == earlier


@pytest.mark.parametrize("codes, expected", [
    ([0, 0], 0), ([0, 3], 3), ([3, 2, 0], 2), ([2, 1, 3], 1), ([1, 130, 0], 130)])
def test_sweep_exit_code_is_the_most_serious_jobs_code(codes, expected):
    assert sweep.exit_code([{"job": i, "exit_code": c} for i, c in enumerate(codes)]) == expected


def test_a_job_that_never_reported_its_end_fails_the_sweep():
    assert sweep.exit_code([{"job": 0, "exit_code": 0}, {"job": 1, "status": "running"}]) == 1


def test_plot_labels_name_only_the_overrides_that_differ(tmp_path):
    records = [{"job": j, "overrides": ["+experiment=clip_adam", f"seed={j}"], "dir": tmp_path}
               for j in range(2)]
    assert list(sweep.plot_labels(records)) == ["seed=0", "seed=1"]
    assert list(sweep.plot_labels(records[:1])) == ["job 0"]


def test_format_table_aligns_columns_and_shortens_numbers():
    text = sweep.format_table([{"job": 0, "lr": "0.1", "loss": 0.123456789},
                               {"job": 1, "lr": "1", "loss": None, "error": "x"}])
    assert text.splitlines() == ["job  lr   loss      error",
                                 "0    0.1  0.123457",
                                 "1    1    nan       x"]


@pytest.mark.parametrize("record, expected", [
    ({"status": "completed", "final": {"loss": 0.5}}, 0.5),
    ({"status": "completed", "final": {"loss": 0.5, "eval/loss": 0.25}}, 0.25),
    ({"status": "diverged", "final": {"loss": 0.5}}, None),
    ({"status": "failed", "final": {}}, None),
    ({}, None)])
def test_a_jobs_objective_is_its_final_eval_loss_else_loss_when_completed(record, expected):
    """What a sweeper (Optuna) optimizes; None makes Optuna record a failed trial."""
    assert sweep.objective(record) == expected


def test_a_sweep_whose_jobs_left_no_record_here_fails_with_a_hint(tmp_path):
    """Remote jobs given a relative hydra.sweep.dir write under their own working directory."""
    out = io.StringIO()
    assert sweep.finish_sweep(tmp_path, stream=out) == 1
    assert "(no jobs)" in out.getvalue() and "absolute hydra.sweep.dir" in out.getvalue()


def test_the_table_says_why_each_job_stopped(tmp_path):
    """stop_reason per job: its steps done, early stopping (at the step it stopped), diverged."""
    sweep_dir = tmp_path / "sweep"
    proc = run_cli("-m", "train.steps=20", "train.eval_every=5", "+data.eval_fraction=0.25",
                   "groups.all.optimizer.learning_rate=1e-9,100",
                   "train.early_stopping=null,{monitor: eval/loss, patience: 1}",
                   f"hydra.sweep.dir={sweep_dir}", cwd=tmp_path, check_code=3)
    rows = _rows(sweep_dir)
    # lr 1e-9 leaves the loss where it is: the second evaluation (step 10) exhausts patience 1
    assert [(r["groups.all.optimizer.learning_rate"], r["status"], r["stop_reason"])
            for r in rows] == [
        ("1e-09", "completed", "20 steps done"), ("1e-09", "completed", "early stopping at step 10"),
        ("100", "diverged", rows[2]["stop_reason"]), ("100", "diverged", rows[2]["stop_reason"])]
    assert rows[2]["stop_reason"].startswith("diverged at step ")
    assert read_summary(sweep_dir / "2")["stop_reason"].startswith(
        rows[2]["stop_reason"] + " (non-finite loss or gradient)")
    assert "early stopping at step 10" in proc.stdout.split("sweep summary")[1]


@pytest.mark.parametrize("record, label", [
    ({"stop_reason": "3 epochs done", "steps": 18}, "3 epochs done"),
    ({"stop_reason": "early stopping: eval/loss did not improve by more than 0 for 2 "
                     "evaluations (best 0.5 at step 4)", "steps": 8}, "early stopping at step 8"),
    ({"stop_reason": "interrupted after step 5", "steps": 5}, "interrupted after step 5"),
    ({"status": "failed"}, "")])
def test_stop_label_is_the_stop_reason_short(record, label):
    assert sweep.stop_label(record) == label
