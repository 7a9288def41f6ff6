"""Determinism: the same config and seed give bit-identical metrics in separate processes (also
with different string-hash seeds, so no set or dict order of names leaks into the results); other
numexpr and OpenBLAS thread counts stay within the fixtures' tolerance."""

import os
import subprocess
import sys

import numpy as np
import pytest
from runner_helpers import REPO, read_metrics

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


@pytest.mark.parametrize("threads", ["1", "2"])
def test_other_thread_counts_stay_within_the_fixture_tolerance(threads):
    """Every fixture, with numexpr forced onto every fusable chain (GRADPIPE_FUSE_MIN_ELEMENTS=0;
    by default only chains of millions of elements use it), on 1 or 2 numexpr and BLAS threads."""
    env = _env(NUMEXPR_NUM_THREADS=threads, OPENBLAS_NUM_THREADS=threads,
               GRADPIPE_FUSE_MIN_ELEMENTS="0")
    code = ("import sys, numexpr, engine.fusion as fusion\n"
            f"assert numexpr.nthreads == {threads} and fusion.MIN_ELEMENTS == 0\n"
            "from runner.regress import main\n"
            f"sys.exit(main([{str(FIXTURES)!r}]))\n")
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          timeout=300, cwd=REPO)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"{len(list(FIXTURES.glob('*.yaml')))} passed, 0 failed" in proc.stdout
