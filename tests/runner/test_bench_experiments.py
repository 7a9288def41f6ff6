"""bench/experiments.py: the hand-written loops train what the runner trains."""

import numpy as np
import pytest

from bench import experiments


@pytest.mark.parametrize("framework", ["torch", "jax"])
@pytest.mark.parametrize("experiment", ["minimize", "stop_gradient"])
def test_hand_written_loops_take_the_runners_steps(experiment, framework):
    """Five steps of the hand-written loop and of the runner from the same initial values give
    the same variables (data-free experiments: no batch order to match)."""
    pytest.importorskip(framework)
    experiments._runner.cache_clear()
    try:
        trainer, init, _ = experiments._runner(experiment)
        step = experiments.make(framework, experiment)
        runner_step = experiments.make("gradpipe", experiment)
        for _ in range(5):
            step()
            runner_step()
        want = trainer.session.run(trainer.model.variables)
        got = step.values()
        assert set(got) == set(init)
        for name, value in got.items():
            assert not np.allclose(value, init[name]) or name == "x"  # it trained (x: frozen)
            np.testing.assert_allclose(value, want[name], rtol=1e-5, atol=1e-6,
                                       err_msg=f"{experiment} {framework} {name}")
    finally:
        experiments._runner.cache_clear()


@pytest.mark.parametrize("framework", ["torch", "jax"])
def test_sparse_adagrad_decay_by_hand_takes_the_runners_steps(monkeypatch, framework):
    """embedding_adagrad_decay: torch's sparse embedding gradient (JAX: the looked-up rows'
    gradient, summed per id) and SparseApplyAdagradDecay by hand take the runner's steps on
    the runner's batches, past the first decay of the accumulators (step 100)."""
    pytest.importorskip(framework)
    queue = []

    class RunnersBatches:
        def __init__(self, arrays, size):
            pass

        def next(self):
            return queue.pop(0)

    monkeypatch.setattr(experiments, "_Batches", RunnersBatches)
    experiments._runner.cache_clear()
    try:
        trainer, init, _ = experiments._runner("embedding_adagrad_decay")
        step = experiments.make(framework, "embedding_adagrad_decay")
        for _ in range(105):
            batch, _ = trainer.run_step(full=False)
            queue.append(batch)
            step()
        want = trainer.session.run(trainer.model.variables)
        got = step.values()
        for name, value in got.items():
            assert not np.array_equal(value, init[name])
            np.testing.assert_allclose(value, want[name], rtol=1e-4, atol=1e-6, err_msg=name)
    finally:
        experiments._runner.cache_clear()
