"""The bench harness's fresh-process measurements (bench/process.py) run and count what they
claim: start-up of ``python -m runner`` to its first step, and peak memory of the Adam workload
at a small size. No torch or JAX needed (their rows are skipped)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))  # bench/ runs from the checkout; it is not an installed package

from bench import process  # noqa: E402

SIZE = 100_000


def test_startup_times_the_first_step_before_the_exit():
    result = process.startup(runs=1, references=(), bytecode_cache=False)
    first, exit_ = result["gradpipe"], result["gradpipe_exit"]
    assert isinstance(first, float) and isinstance(exit_, float), result
    # metrics.jsonl is written after step 1, before the checkpoint and summary.
    assert 0 < first <= exit_ + 0.02, result


def test_memory_counts_the_numpy_variants_arrays_and_names_the_sites():
    results = process.memory(size=SIZE, steps=2, frameworks=["numpy"], sites=("numpy",))
    by_method = {r["method"]: r for r in results if isinstance(r, dict)}
    assert set(by_method) == {"tracemalloc", "rss", "sites"}, results
    traced = by_method["tracemalloc"]
    assert traced["state_bytes"] == 4 * 4 * SIZE
    # The hand-written numpy Adam (bench/workloads.py) holds five float32 arrays of the
    # parameters' size: parameters, gradients, m, v and one scratch array, so its peak is at
    # least 5/4 of parameters + gradients + slots; its other temporaries are one tensor's size
    # (a tenth of the parameters) at a time.
    assert 1.25 <= traced["ratio"] < 1.25 + 2 * 0.1 * 1.25, traced
    # Those five arrays are the five largest sites, each 1/4 of the state, made in workloads.py.
    total, sites = by_method["sites"]["sites"]["steps"]
    assert total >= traced["state_bytes"] * 5 / 4
    assert all(where.startswith("bench/workloads.py:") for where, _, _ in sites[:5]), sites
    assert all(abs(nbytes - SIZE * 4) < SIZE * 4 * 0.01 for _, nbytes, _ in sites[:5]), sites
    assert by_method["rss"]["peak"] >= 0
    table = process.format_memory(results)
    assert "numpy           tracemalloc" in table and "allocation sites alive" in table


def test_bench_run_names_the_process_workloads_and_refuses_unknown_ones(capsys):
    from bench import run

    with pytest.raises(SystemExit) as exit_info:
        run.main(["startup", "bogus"])
    assert exit_info.value.code == 2
    assert "unknown workload bogus" in capsys.readouterr().err
    assert {"startup", "memory"} <= set(run.PROCESS_WORKLOADS)
