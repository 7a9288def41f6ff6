"""The engine's worker pool (engine/framework/workers.py): ``run_parts`` runs every part once,
returns only when all have finished, leaves the parts of a worker that starts late to the
caller, and raises a part's exception in the caller."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from engine.framework import workers


def test_ranges_cut_evenly_at_multiples_of_the_quantum():
    assert workers.ranges(5, 2) == [(0, 2), (2, 5)]
    assert workers.ranges(10, 4) == [(0, 2), (2, 5), (5, 8), (8, 10)]
    assert workers.ranges(3, 8) == [(0, 1), (1, 2), (2, 3)]  # no empty range
    assert workers.ranges(60, 4, quantum=16) == [(0, 16), (16, 32), (32, 48), (48, 60)]
    assert workers.ranges(0, 2) == []


def test_every_part_runs_once_and_all_have_finished_at_return():
    out = np.zeros(64)

    def part(lo, hi):
        time.sleep(0.001)
        out[lo:hi] += 1

    workers.run_parts(part, workers.ranges(64, 16), 3)
    np.testing.assert_array_equal(out, 1)


def test_a_worker_that_does_not_start_leaves_its_parts_to_the_caller():
    """Both crew threads busy with another caller's parts: the caller takes every part and
    returns without waiting; once free, the crew takes parts again."""
    release, started = threading.Event(), []

    def blocking(k):
        started.append(threading.get_ident())
        release.wait(10)

    other = threading.Thread(target=workers.run_parts,
                             args=(blocking, [(k,) for k in range(workers.SIZE + 1)],
                                   workers.SIZE + 1))
    other.start()
    try:
        deadline = time.monotonic() + 10
        while len(started) < workers.SIZE + 1 and time.monotonic() < deadline:
            time.sleep(0.001)
        assert len(set(started)) == workers.SIZE + 1  # the other caller and both crew threads
        ran = []
        workers.run_parts(lambda k: ran.append((k, threading.get_ident())), [(k,) for k in range(6)],
                          3)
        assert sorted(k for k, _ in ran) == list(range(6))
        assert {t for _, t in ran} == {threading.get_ident()}
    finally:
        release.set()
        other.join()
    crew = set()

    def part(k):
        time.sleep(0.005)
        crew.add(threading.get_ident())

    workers.run_parts(part, [(k,) for k in range(12)], 3)
    assert len(crew) > 1


def test_a_parts_exception_is_raised_in_the_caller_after_the_others_finished():
    done = []

    def part(k):
        if k == 2:
            raise ValueError("part 2")
        time.sleep(0.002)
        done.append(k)

    with pytest.raises(ValueError, match="part 2"):
        workers.run_parts(part, [(k,) for k in range(5)], 2)
    assert sorted(done) == [0, 1, 3, 4]


def test_parts_run_under_the_callers_numpy_error_state():
    seen = []

    def part(k):
        time.sleep(0.002)
        seen.append(np.geterr()["divide"])

    with np.errstate(divide="raise"):
        workers.run_parts(part, [(k,) for k in range(4)], 2)
    assert seen == ["raise"] * 4
