"""Products cut by rows across the engine's workers at two threads or more (ops/split_gemm.py):
the parts are the products of the rows they hold (a sum over rows: the partial products added in
part order), BLAS runs at one thread inside and at the run's count after, one thread is one
product, and a two-thread session's convolution and matmul are close to one thread's and the
same at every run."""

from __future__ import annotations

import numpy as np
import pytest

import engine as tf
from engine.framework import threads
from engine.ops import split_gemm


@pytest.fixture
def two_threads(monkeypatch):
    """Ops compute on two threads, BLAS at two outside the split products; every product large
    enough to be cut; which BLAS counts the parts ran at, recorded."""
    seen = []
    product_into = split_gemm._product_into

    def recording(a, b, out):
        seen.append(tuple(threads.blas_threads()))
        product_into(a, b, out)

    monkeypatch.setattr(split_gemm, "_product_into", recording)
    monkeypatch.setattr(split_gemm, "MIN_MACS", 1)
    threads.use_blas_threads(2)
    yield seen
    threads.use_blas_threads(1)


def _cuts(rows):
    """The row ranges of a two-thread product."""
    return split_gemm.workers.ranges(rows, 2 * split_gemm.PARTS_PER_THREAD, split_gemm.QUANTUM)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_cut_product_is_its_parts_products_stacked(two_threads, dtype):
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((1000, 75)).astype(dtype), rng.standard_normal((75, 16)).astype(dtype)
    out = split_gemm.product(a, b)
    cuts = _cuts(1000)
    assert len(cuts) == 4 and len(two_threads) == 4 and set(sum(two_threads, ())) == {1}
    assert set(threads.blas_threads()) == {2}  # the run's count again
    threads.use_blas_threads(1)
    for lo, hi in cuts:  # each part's rows: that part's own product (at one BLAS thread)
        np.testing.assert_array_equal(out[lo:hi], a[lo:hi] @ b)
    exact = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(out, exact, rtol=0, atol=1e-4 if dtype == np.float32 else 1e-12)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_sum_over_rows_adds_the_parts_in_order(two_threads, dtype):
    """The filter gradient's product ``rows.T @ dy``: partial products over the parts' rows,
    added first to last; a transposed view (conv1's tap-major windows) as well."""
    rng = np.random.default_rng(1)
    a = rng.standard_normal((25, 3000)).astype(dtype).T  # [rows, 25], not C-contiguous
    b = rng.standard_normal((3000, 6)).astype(dtype)
    out = split_gemm.product_over_rows(a, b)
    again = split_gemm.product_over_rows(a, b)
    threads.use_blas_threads(1)
    expected = None
    for lo, hi in _cuts(3000):
        part = a[lo:hi].T @ b[lo:hi]
        expected = part if expected is None else expected + part
    np.testing.assert_array_equal(out, expected)
    np.testing.assert_array_equal(again, out)
    exact = a.astype(np.float64).T @ b.astype(np.float64)
    np.testing.assert_allclose(out, exact, rtol=0, atol=1e-3 if dtype == np.float32 else 1e-11)


def test_one_thread_is_one_product(monkeypatch):
    monkeypatch.setattr(split_gemm, "MIN_MACS", 1)
    threads.use_blas_threads(1)
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal((512, 40)).astype(np.float32), rng.standard_normal((40, 8)).astype(
        np.float32)
    np.testing.assert_array_equal(split_gemm.product(a, b), a @ b)
    np.testing.assert_array_equal(split_gemm.product_over_rows(a, a[:, :8]), a.T @ a[:, :8])


def test_small_products_run_whole_at_one_blas_thread(monkeypatch):
    """Below MIN_MACS at two threads: one product, on one BLAS thread (OpenBLAS's threads on a
    small product cost more than they save, and stall under load)."""
    seen = []
    enter = threads.OneBlasThread.__enter__

    def entering(self):
        enter(self)
        seen.append(tuple(threads.blas_threads()))
        return self

    monkeypatch.setattr(threads.OneBlasThread, "__enter__", entering)
    threads.use_blas_threads(2)
    try:
        a = np.ones((8, 8), np.float32)
        np.testing.assert_array_equal(split_gemm.product(a, a), np.full((8, 8), 8, np.float32))
        assert len(seen) == 1 and set(seen[0]) == {1} and set(threads.blas_threads()) == {2}
    finally:
        threads.use_blas_threads(1)


def test_a_two_thread_session_cuts_convolutions_and_matmuls(monkeypatch):
    """A conv and a dense layer, forward and gradients, through sessions of one and two
    threads: two threads cut every large product (parts counted), close to one thread's values
    (float64: the same sums in another order) and the same bits at every run."""
    parts_run = []
    run = split_gemm.run
    monkeypatch.setattr(split_gemm, "run",
                        lambda fn, parts: (parts_run.append(len(parts)), run(fn, parts)))
    monkeypatch.setattr(split_gemm, "MIN_MACS", 1000)
    rng = np.random.default_rng(3)
    x = rng.standard_normal((8, 12, 12, 2))
    w1, w2 = rng.standard_normal((3, 3, 2, 4)), rng.standard_normal((5 * 5 * 4, 5))
    with tf.Graph().as_default():
        xp = tf.placeholder(tf.float64, x.shape)
        k1, k2 = tf.Variable(w1), tf.Variable(w2)
        h = tf.nn.max_pool(tf.nn.relu(tf.nn.conv2d(xp, k1, 1, "VALID")), 2, 2, "VALID")
        y = tf.matmul(tf.reshape(h, [8, -1]), k2)
        loss = tf.reduce_sum(tf.sin(y))
        fetches = [y] + tf.gradients(loss, [xp, k1, k2])
        runs = []
        for count in (1, 2, 2):
            with tf.Session(config=tf.ConfigProto(intra_op_parallelism_threads=count)) as sess:
                sess.run(tf.global_variables_initializer())
                parts_run.clear()
                runs.append(sess.run(fetches, {xp: x}))
                # the conv's forward (windows and product), input gradient (product and
                # col2im) and filter gradient cut by batch items, 4 parts each; the dense
                # layer's 8 rows are one part, its weight gradient's 100 rows two
                assert sorted(parts_run) == ([] if count == 1 else [2, 4, 4, 4])
    threads.use_blas_threads(1)
    for one, two in zip(runs[0], runs[1]):
        np.testing.assert_allclose(two, one, rtol=1e-12, atol=1e-12)
    for two, again in zip(runs[1], runs[2]):
        np.testing.assert_array_equal(again, two)


@pytest.mark.parametrize("compiled", [False, True])
@pytest.mark.parametrize("channels", [1, 3])
@pytest.mark.parametrize("padding", ["VALID", "SAME"])
def test_a_convolution_cut_by_batch_items_matches_one_threads_values(monkeypatch, channels,
                                                                    padding, compiled):
    """The forward's windows and products and the input gradient's products and col2im per
    part: the reserve (windows) the same as one thread's im2col, values within float32
    rounding of one thread's (one and several channels, strides, dilations, padding; with
    ``compiled``, one channel's windows made per part by the compiled slab loop)."""
    from engine.ops import conv, windows_compiled

    if compiled:
        pytest.importorskip("numba")
        monkeypatch.setattr(windows_compiled, "WARM_RUNS", -1)
        monkeypatch.setattr(windows_compiled, "_state", {"runs": 0})
    monkeypatch.setattr(split_gemm, "MIN_MACS", 1)
    rng = np.random.default_rng(4)
    x = rng.standard_normal((5, 11, 10, channels)).astype(np.float32)
    w = rng.standard_normal((3, 2, channels, 4)).astype(np.float32)
    attrs = {"kind": "Conv2D", "strides": (2, 1), "padding": padding, "dilations": (1, 2)}
    results = []
    for count in (1, 2):
        threads.use_blas_threads(count)
        y, reserve = conv._conv_forward(x, w, **attrs)
        dy = np.cos(np.arange(y.size, dtype=np.float32)).reshape(y.shape)
        dx = conv._backprop_input_forward(np.array(x.shape), w, dy, **attrs)
        results.append((y, np.array(reserve), dx))
    threads.use_blas_threads(1)
    if compiled and channels == 1:
        assert windows_compiled._state.get("im2col_taps")  # the slab loop was used
    (y1, r1, dx1), (y2, r2, dx2) = results
    np.testing.assert_array_equal(r2, r1)
    np.testing.assert_allclose(y2, y1, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(dx2, dx1, rtol=1e-5, atol=1e-5)
