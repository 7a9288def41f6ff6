"""Determinism: the same config and seed give bit-identical metrics in separate processes (also
with different string-hash seeds, so no set or dict order of names leaks into the results) and in
process, whatever the thread variables of the environment; the shipped fixtures pass under other
BLAS kernel families, thread settings and numexpr."""

import os
import subprocess
import sys

import numpy as np
import pytest
from runner_helpers import REPO, compose_config, read_metrics, run_cli, run_config

FIXTURES = REPO / "tests" / "fixtures"
# Shuffled data, random initializers, two groups, an LSTM, clipping: what could vary does here
# (a shorter sequence than the experiment's, for speed).
JOB = ["+experiment=clip_adam", "data.length=20", "model.inputs.x.shape=[null,20,2]",
       "train.steps=12", "train.log_every=1"]


def _env(**extra) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "HYDRA_FULL_ERROR"}
    return {**env, **extra}


def test_same_config_and_seed_give_identical_metrics_in_separate_processes(tmp_path):
    runs = []
    for hash_seed in ("1", "2"):
        out = tmp_path / f"hash{hash_seed}"
        proc = subprocess.run([sys.executable, "-m", "runner", *JOB, f"hydra.run.dir={out}"],
                              cwd=tmp_path, capture_output=True, text=True, timeout=300,
                              env=_env(PYTHONHASHSEED=hash_seed))
        assert proc.returncode == 0, proc.stdout + proc.stderr
        runs.append(out)
    first, second = runs
    assert len(read_metrics(first)) == 12
    assert read_metrics(first) == read_metrics(second)
    with np.load(first / "checkpoint.npz") as a, np.load(second / "checkpoint.npz") as b:
        variables = [key for key in a.files if key.startswith(("var/", "slot/"))]
        assert variables
        for key in variables:
            assert np.array_equal(a[key], b[key]), key


def test_an_in_process_run_equals_the_command_line_whatever_the_thread_environment(tmp_path):
    """The engine sets the BLAS threads itself: runner.app.run under 2 BLAS threads (pytest's
    environment may have left any count) gives the bits of `python -m runner` started with 1 or
    2 threads in OPENBLAS_NUM_THREADS / OMP_NUM_THREADS / MKL_NUM_THREADS."""
    from threadpoolctl import threadpool_limits

    from engine.framework.threads import blas_threads

    in_process = tmp_path / "in_process"
    with threadpool_limits(limits=2, user_api="blas"):
        assert run_config(compose_config(*JOB), in_process) == 0
        assert set(blas_threads()) <= {1}  # what the engine set for its run
    runs = []
    for threads in ("1", "2"):
        out = tmp_path / f"cli{threads}"
        run_cli(*JOB, f"hydra.run.dir={out}", cwd=tmp_path, check_code=0,
                env={"OPENBLAS_NUM_THREADS": threads, "OMP_NUM_THREADS": threads,
                     "MKL_NUM_THREADS": threads})
        runs.append(out)
    for out in runs:
        assert read_metrics(out) == read_metrics(in_process)
        with np.load(out / "checkpoint.npz") as a, np.load(in_process / "checkpoint.npz") as b:
            for key in [k for k in a.files if k.startswith(("var/", "slot/"))]:
                assert np.array_equal(a[key], b[key]), key


# Other machines' arithmetic as this one can imitate it: OpenBLAS's kernel families (forced;
# one this CPU cannot run falls back), thread variables in the environment, and numexpr forced onto
# every fusable chain on 1 or 2 of its threads (by default only chains of millions of elements).
ENVIRONMENTS = {
    **{f"OPENBLAS_CORETYPE={core}": {"OPENBLAS_CORETYPE": core}
       for core in ("Haswell", "SkylakeX", "Zen", "Sandybridge")},
    **{f"OPENBLAS_NUM_THREADS={n}": {"OPENBLAS_NUM_THREADS": n, "OMP_NUM_THREADS": n}
       for n in ("1", "2")},
    **{f"numexpr on {n} threads": {"NUMEXPR_NUM_THREADS": n, "GRADPIPE_FUSE_MIN_ELEMENTS": "0"}
       for n in ("1", "2")},
}


@pytest.mark.parametrize("name", list(ENVIRONMENTS))
def test_the_shipped_fixtures_pass_under_other_kernels_and_thread_settings(name):
    env = _env(**ENVIRONMENTS[name])
    proc = subprocess.run([sys.executable, "-m", "runner.regress", str(FIXTURES)], env=env,
                          capture_output=True, text=True, timeout=300, cwd=REPO)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"{len(list(FIXTURES.glob('*.yaml')))} passed, 0 failed" in proc.stdout


def test_the_rnn_ops_compiled_loops_give_the_numpy_loops_bits_over_a_run(tmp_path, monkeypatch):
    """The shipped clip_adam with the rnn op's compiled loops (numba, the ``fast`` extra) taken
    from its 10th run on, against the numpy loops only: the same metrics at every step and the
    same variables and slots. The op's outputs equal, a layout differed (the kernel's and bias's
    gradients column-major views in the numpy loop), and L2Loss's strided dot rounds otherwise:
    the grad norms moved from step 45."""
    from engine.ops import rnn as rnn_module
    from engine.ops import rnn_compiled

    if rnn_compiled.kernels() is None:
        pytest.skip("no compiled loops here (numba, the 'fast' extra, is not installed)")
    job = ["+experiment=clip_adam", "train.steps=50", "train.log_every=1", "train.eval_every=0",
           "train.plots=false"]
    runs = {}
    for name, warm_runs in (("numpy", 10 ** 9), ("compiled", 10)):
        monkeypatch.setattr(rnn_module, "WARM_RUNS", warm_runs)
        monkeypatch.setattr(rnn_module, "_runs", [0])
        assert run_config(compose_config(*job), tmp_path / name) == 0
        runs[name] = tmp_path / name
    assert rnn_module._runs[0] > 10  # the compiled loops ran in the second run
    assert read_metrics(runs["numpy"]) == read_metrics(runs["compiled"])
    with np.load(runs["numpy"] / "checkpoint.npz") as a, \
            np.load(runs["compiled"] / "checkpoint.npz") as b:
        for key in [k for k in a.files if k.startswith(("var/", "slot/"))]:
            assert np.array_equal(a[key], b[key]), key
