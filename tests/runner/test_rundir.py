"""Run directories never lose data: one run owns a directory at a time (a lock with its pid, a
dead owner's lock taken over), a fresh run never replaces an earlier one (exit 2, or its files
moved aside with train.overwrite=true), and a run that fails before its first step leaves a
finished run's summary.json, metrics.jsonl, checkpoint.npz and .hydra/ as they were."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from runner_helpers import compose_config, read_summary, run_cli, run_config

from runner import rundir
from runner.app import EXIT_CONFIG

FIRST = ["train.steps=5", "train.log_every=5"]


def snapshot(directory: Path) -> dict[str, bytes]:
    """Every file under ``directory`` (relative path -> bytes)."""
    return {str(p.relative_to(directory)): p.read_bytes()
            for p in sorted(directory.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def finished(tmp_path_factory) -> Path:
    """A finished run made by the command line (so that it has .hydra/ and runner.log)."""
    base = tmp_path_factory.mktemp("finished")
    run_cli(f"hydra.run.dir={base / 'run'}", *FIRST, cwd=base, check_code=0)
    return base / "run"


@pytest.fixture
def used(finished, tmp_path) -> Path:
    """A copy of the finished run to try things on."""
    shutil.copytree(finished, tmp_path / "run")
    return tmp_path / "run"


def assert_one_line_error(proc, *parts: str) -> None:
    assert proc.returncode == EXIT_CONFIG, (proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr + proc.stdout
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    for part in parts:
        assert part in lines[0], lines[0]


def test_a_fresh_run_into_a_directory_holding_a_run_exits_2_and_changes_nothing(used):
    before = snapshot(used)
    proc = run_cli(f"hydra.run.dir={used}", "train.steps=7", cwd=used.parent)
    assert_one_line_error(proc, "hydra.run.dir: ", str(used), "use train.resume=true to continue,"
                          " or another hydra.run.dir")
    assert snapshot(used) == before


def test_a_failed_resume_leaves_the_finished_run_as_it_was(used):
    before = snapshot(used)
    proc = run_cli(f"hydra.run.dir={used}", "train.steps=10", "train.resume=true",
                   "model.variables.W.shape=[1,2]", cwd=used.parent)
    assert_one_line_error(proc, "train.resume: ", "model.variables.W.shape ([1, 1] -> [1, 2])")
    after = snapshot(used)
    # Hydra appended its log lines; everything else, .hydra/ included, is byte for byte the same.
    assert after.pop("runner.log").startswith(before.pop("runner.log"))
    assert after == before


def test_mode_check_in_a_run_directory_keeps_the_runs_hydra_config(used):
    before = snapshot(used)
    run_cli(f"hydra.run.dir={used}", "mode=check", "seed=3", cwd=used.parent, check_code=0)
    after = snapshot(used)
    after.pop("runner.log"), before.pop("runner.log")
    assert after == before


def test_a_resumed_run_records_its_own_config(used):
    run_cli(f"hydra.run.dir={used}", "train.steps=8", "train.resume=true", cwd=used.parent,
            check_code=0)
    assert "train.steps=8" in (used / ".hydra" / "overrides.yaml").read_text()
    assert not (used / ".hydra.previous").exists()
    assert read_summary(used)["steps"] == 8


def test_overwrite_moves_the_earlier_run_aside(used):
    before = snapshot(used)
    run_cli(f"hydra.run.dir={used}", "train.steps=3", "train.overwrite=true", cwd=used.parent,
            check_code=0)
    assert read_summary(used)["steps"] == 3
    (moved,) = used.glob("replaced-*")
    assert snapshot(moved) == before


def test_a_directory_whose_run_failed_at_its_start_can_be_used_again(tmp_path):
    cfg = compose_config("train.steps=5", "model.graph.pred=x @ W3 + b")
    assert run_config(cfg, tmp_path) == EXIT_CONFIG
    assert read_summary(tmp_path)["status"] == "failed"
    assert run_config(compose_config("train.steps=5"), tmp_path) == 0
    assert read_summary(tmp_path)["status"] == "completed"


def test_a_config_error_in_a_run_directory_does_not_replace_its_summary(used, capsys):
    before = snapshot(used)
    cfg = compose_config("train.steps=9", "train.resume=true", "train.log_every=many")
    assert run_config(cfg, used) == EXIT_CONFIG
    assert snapshot(used) == before


HOLDER = textwrap.dedent("""
    import sys
    from runner import rundir
    rundir.lock(sys.argv[1])
    print("locked", flush=True)
    sys.stdin.read()
""")


def test_a_second_run_while_one_runs_exits_2_naming_the_directory_and_pid(used):
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(used)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        before = snapshot(used)
        proc = run_cli(f"hydra.run.dir={used}", "train.steps=8", "train.resume=true",
                       cwd=used.parent)
        assert_one_line_error(proc, f"hydra.run.dir: {used} is in use", f"process {holder.pid}")
        assert snapshot(used) == before  # nothing written: no .hydra/, no log lines
    finally:
        holder.communicate("")
    assert holder.returncode == 0
    # Its owner gone, the directory is free again; the lock file goes with the run.
    assert run_config(compose_config("train.steps=8", "train.resume=true"), used) == 0
    assert not (used / rundir.LOCK).exists()


def test_the_stale_lock_of_a_dead_process_is_taken_over(used):
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    (used / rundir.LOCK).write_text(dead.stdout)
    assert run_config(compose_config("train.steps=8", "train.resume=true"), used) == 0
    assert read_summary(used)["steps"] == 8


def test_the_lock_is_reentrant_within_a_process_and_released(tmp_path):
    assert rundir.lock(tmp_path) is True
    assert rundir.lock(tmp_path) is False
    assert (tmp_path / rundir.LOCK).read_text().strip().isdigit()
    rundir.release(tmp_path)
    assert not (tmp_path / rundir.LOCK).exists()


def test_a_sweep_into_a_sweep_directory_holding_runs_exits_2_and_changes_nothing(tmp_path):
    sweep = tmp_path / "sweep"
    run_cli("-m", f"hydra.sweep.dir={sweep}", "train.steps=3", "seed=0,1", cwd=tmp_path,
            check_code=0)
    before = snapshot(sweep)
    proc = run_cli("-m", f"hydra.sweep.dir={sweep}", "train.steps=3", "seed=0,1", cwd=tmp_path)
    assert_one_line_error(proc, f"hydra.sweep.dir: {sweep} holds runs (0, 1)")
    assert snapshot(sweep) == before


def test_a_sweep_resuming_runs_leaves_them_as_they_were_when_its_jobs_fail_at_the_start(
        tmp_path):
    sweep = tmp_path / "sweep"
    run_cli("-m", f"hydra.sweep.dir={sweep}", "train.steps=3", "seed=0,1", cwd=tmp_path,
            check_code=0)
    before = snapshot(sweep)
    proc = run_cli("-m", f"hydra.sweep.dir={sweep}", "train.steps=6", "train.resume=true",
                   "seed=0,1", "model.variables.W.shape=[1,2]", cwd=tmp_path,
                   check_code=EXIT_CONFIG)
    assert "model.variables.W.shape ([1, 1] -> [1, 2])" in proc.stderr
    after = snapshot(sweep)
    for job in ("0", "1"):
        # Hydra wrote its .hydra/ before the job could refuse: it is put back byte for byte;
        # the finished run's summary, metrics and checkpoint are untouched.
        for name in (".hydra/config.yaml", ".hydra/overrides.yaml", ".hydra/hydra.yaml",
                     "summary.json", "metrics.jsonl", "checkpoint.npz"):
            assert after[f"{job}/{name}"] == before[f"{job}/{name}"], (job, name)
        assert not (sweep / job / ".hydra.previous").exists()
    # The sweep's table and the job records tell of this sweep: both jobs failed at the start.
    assert [r["status"] for r in map(json.loads, (after[f"{j}/job.json"] for j in "01"))] \
        == ["failed", "failed"]
    # A sweep that resumes one of them records its own config there; the other is untouched.
    # Its exit code is its own job's, though job 1's record (in the table) says it failed.
    proc = run_cli("-m", f"hydra.sweep.dir={sweep}", "train.steps=6", "train.resume=true",
                   "seed=0", cwd=tmp_path, check_code=0)
    table = proc.stdout[proc.stdout.index("sweep summary"):]
    assert "completed" in table and "failed" in table
    assert "train.steps=6" in (sweep / "0" / ".hydra" / "overrides.yaml").read_text()
    assert read_summary(sweep / "0")["steps"] == 6
    assert (sweep / "1" / ".hydra" / "overrides.yaml").read_bytes() \
        == before["1/.hydra/overrides.yaml"]
    assert not list(sweep.rglob(".hydra.previous"))


def test_a_sweep_resuming_a_run_that_is_running_exits_2_and_changes_nothing(tmp_path):
    sweep = tmp_path / "sweep"
    run_cli("-m", f"hydra.sweep.dir={sweep}", "train.steps=3", "seed=0", cwd=tmp_path,
            check_code=0)
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(sweep / "0")],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        before = snapshot(sweep)
        proc = run_cli("-m", f"hydra.sweep.dir={sweep}", "train.steps=6", "train.resume=true",
                       "seed=0", cwd=tmp_path)
        assert_one_line_error(proc, f"hydra.sweep.dir: {sweep / '0'} is in use",
                              f"process {holder.pid}")
        assert snapshot(sweep) == before
    finally:
        holder.communicate("")
