"""The engine owns its BLAS threads: a session computes with its config's count (else
GRADPIPE_BLAS_THREADS, else 1), whatever count the process had, and so do eager ops."""

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

import engine as tf
from engine.framework import threads


def _product_run(config=None):
    graph = tf.Graph()
    with graph.as_default():
        a = tf.constant(np.ones((64, 64), np.float32))
        product = tf.matmul(a, a)
    with threadpool_limits(limits=3, user_api="blas"):  # what someone else left behind
        threads.invalidate()
        with tf.Session(graph=graph, config=config) as sess:
            value = sess.run(product)
        seen = threads.blas_threads()
    threads.invalidate()  # threadpool_limits restored its count behind the engine's back
    np.testing.assert_array_equal(value, np.full((64, 64), 64.0, np.float32))
    return seen


def test_a_session_runs_on_one_blas_thread_by_default(monkeypatch):
    monkeypatch.delenv(threads.ENV, raising=False)
    assert set(_product_run()) == {1}


def test_intra_op_parallelism_threads_chooses_the_count(monkeypatch):
    monkeypatch.delenv(threads.ENV, raising=False)
    assert set(_product_run(tf.ConfigProto(intra_op_parallelism_threads=2))) == {2}
    # 0 is TF's "let the system choose": the engine's default
    assert set(_product_run(tf.ConfigProto(intra_op_parallelism_threads=0))) == {1}


def test_the_environment_variable_sets_the_default(monkeypatch):
    monkeypatch.setenv(threads.ENV, "2")
    assert set(_product_run()) == {2}


@pytest.mark.parametrize("text", ["0", "-1", "two"])
def test_a_bad_count_in_the_environment_is_named(monkeypatch, text):
    monkeypatch.setenv(threads.ENV, text)
    with pytest.raises(ValueError, match=f"GRADPIPE_BLAS_THREADS={text!r}"):
        tf.Session(graph=tf.Graph())


@pytest.mark.parametrize("count", [-1, 1.5, True])
def test_a_bad_intra_op_count_is_named(count):
    with pytest.raises(ValueError, match="intra_op_parallelism_threads"):
        tf.Session(graph=tf.Graph(), config=tf.ConfigProto(intra_op_parallelism_threads=count))


def test_eager_ops_run_on_the_engines_count(monkeypatch):
    monkeypatch.delenv(threads.ENV, raising=False)
    from engine.framework.eager import EAGER

    monkeypatch.setattr(EAGER, "blas_threads", None)
    with threadpool_limits(limits=3, user_api="blas"):
        threads.invalidate()
        with tf.eager_mode():
            value = tf.matmul(np.ones((8, 8), np.float32), np.ones((8, 8), np.float32))
        seen = threads.blas_threads()
    threads.invalidate()
    assert float(value.numpy()[0, 0]) == 8.0 and set(seen) == {1}


def test_a_session_run_from_another_thread_sets_its_count(monkeypatch):
    """OpenBLAS's setter is called directly (threadpoolctl's ignores a thread other than the
    one that first set the count: a session run from a queue runner's thread could not)."""
    import threading

    monkeypatch.delenv(threads.ENV, raising=False)
    threads.use_blas_threads(1)  # this thread set the count first
    seen = []
    worker = threading.Thread(target=lambda: seen.extend(
        _product_run(tf.ConfigProto(intra_op_parallelism_threads=2))))
    worker.start()
    worker.join()
    threads.use_blas_threads(1)
    assert set(seen) == {2}
