"""IndexedSlices gradients, gather / embedding lookups, segment, partition and scatter ops.

Expected values come from TF's documented examples, numpy loops written here, and central finite
differences of the looked-up values.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import engine as tf
from tests.engine.numeric import numeric_grad


def _run(fetches, feed=None):
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run(fetches, feed)


def test_gather_gradient_is_indexed_slices_of_the_rows_looked_up():
    """TF's documented example: the gradient of gather(v, [1, 3]) has indices [1, 3], rows 1."""
    with tf.Graph().as_default():
        v = tf.Variable([[0., 1, 2], [2, 3, 4], [4, 5, 6], [6, 7, 8]])
        g, = tf.gradients(tf.gather(v, [1, 3]), [v])
        assert isinstance(g, tf.IndexedSlices) and g.shape == [4, 3]
        value = _run(g)
    assert isinstance(value, tf.IndexedSlicesValue)
    np.testing.assert_array_equal(value.indices, [1, 3])
    np.testing.assert_array_equal(value.values, np.ones((2, 3)))
    np.testing.assert_array_equal(value.dense_shape, [4, 3])


def test_contributions_of_several_lookups_are_concatenated():
    """_AggregateIndexedSlicesGradients: slices concatenated in order; a dense contribution
    becomes slices over all rows (TF 1.14+), so the gradient stays an IndexedSlices."""
    with tf.Graph().as_default():
        w = tf.Variable(np.arange(8.0).reshape(4, 2))
        loss = (tf.reduce_sum(tf.gather(w, [1, 1]) * 3.0) + tf.reduce_sum(tf.gather(w, [0]))
                + tf.reduce_sum(w * w))
        g, = tf.gradients(loss, [w])
        assert isinstance(g, tf.IndexedSlices)
        value, dense = _run([g, tf.convert_to_tensor(g)])
    # w * w contributes two dense gradients (one per operand): 2 x 4 rows, plus 3 looked up
    np.testing.assert_array_equal(np.sort(value.indices), [0, 0, 0, 1, 1, 1, 1, 2, 2, 3, 3])
    assert value.indices.dtype == np.int64  # int32 lookups and int64 dense rows: all int64
    expected = 2 * np.arange(8.0).reshape(4, 2)
    expected[1] += 6.0
    expected[0] += 1.0
    np.testing.assert_array_equal(dense, expected)


def test_an_op_that_needs_a_dense_gradient_gets_the_sum_and_warns_when_huge():
    with tf.Graph().as_default():
        big = tf.placeholder(tf.float32, [100_000, 1000])
        scaled = big * 2.0
        with pytest.warns(UserWarning, match="100000000 elements"):
            g, = tf.gradients(tf.reduce_sum(tf.gather(scaled, [3])), [big])
        assert isinstance(g, tf.Tensor) and g.shape == [100_000, 1000]
        small = tf.placeholder(tf.float32, [10, 4])
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            tf.gradients(tf.reduce_sum(tf.gather(small * 2.0, [3])), [small])
        unknown = tf.placeholder(tf.float32, [None, 4])
        with pytest.warns(UserWarning, match="unknown shape"):
            tf.gradients(tf.reduce_sum(tf.gather(unknown * 2.0, [3])), [unknown])


def test_gather_rejects_ids_out_of_range_naming_the_op():
    with tf.Graph().as_default():
        ids = tf.placeholder(tf.int32, [None])
        out = tf.gather(tf.constant([[1.0], [2.0]]), ids)
        with pytest.raises(tf.InvalidArgumentError, match=r"GatherV2.*indices\[1\] = -1"):
            _run(out, {ids: [0, -1]})
        with pytest.raises(tf.InvalidArgumentError, match=r"indices\[0\] = 2 is not in \[0, 2\)"):
            _run(out, {ids: [2]})


@pytest.mark.parametrize("strategy", ["mod", "div"])
@pytest.mark.parametrize("max_norm", [None, 2.0])
def test_embedding_lookup_over_parts_matches_a_numpy_lookup_and_finite_differences(strategy,
                                                                                  max_norm):
    rng = np.random.default_rng(3)
    sizes = [4, 3, 3]  # "div" with 10 ids over 3 parts: 4, 3, 3
    table = rng.uniform(-1, 1, (10, 3))
    ids = np.array([[9, 0, 4], [4, 7, 1]])
    if strategy == "mod":
        parts = [table[p::3] for p in range(3)]
    else:
        parts = np.split(table, np.cumsum(sizes)[:-1])
    weights = rng.uniform(0.5, 1.5, (2, 3, 3))
    rows = table[ids]
    if max_norm is not None:
        norms = np.linalg.norm(rows, axis=-1, keepdims=True)
        rows = rows * max_norm / np.maximum(norms, max_norm)
    with tf.Graph().as_default():
        ps = [tf.placeholder(tf.float64, p.shape) for p in parts]
        out = tf.nn.embedding_lookup(ps, ids, partition_strategy=strategy, max_norm=max_norm)
        loss = tf.reduce_sum(out * weights)
        grads = tf.gradients(loss, ps)
        assert all(isinstance(g, tf.IndexedSlices) for g in grads)
        feed = dict(zip(ps, parts))
        with tf.Session() as sess:
            np.testing.assert_allclose(sess.run(out, feed), rows, rtol=1e-12)
            dense = sess.run([tf.convert_to_tensor(g) for g in grads], feed)
            for k, part in enumerate(parts):
                def f(x, k=k):
                    return sess.run(loss, {**feed, ps[k]: x})

                np.testing.assert_allclose(dense[k], numeric_grad(f, part), atol=1e-7)


def test_embedding_lookup_of_one_variable_is_a_gather():
    with tf.Graph().as_default():
        w = tf.Variable(np.arange(6.0).reshape(3, 2))
        out = tf.nn.embedding_lookup(w, [[2], [0]])
        assert out.shape == [2, 1, 2]
        np.testing.assert_array_equal(_run(out), [[[4.0, 5.0]], [[0.0, 1.0]]])


def test_unique_keeps_the_order_of_first_occurrence():
    """TF's documented example."""
    with tf.Graph().as_default():
        y, idx = tf.unique([1, 1, 2, 4, 4, 4, 7, 8, 8])
        y, idx = _run([y, idx])
    np.testing.assert_array_equal(y, [1, 2, 4, 7, 8])
    np.testing.assert_array_equal(idx, [0, 0, 1, 2, 2, 2, 3, 4, 4])


def test_unsorted_segment_sum_drops_negative_ids_and_adds_repeated_ones():
    """TF's documented example, plus a dropped id."""
    with tf.Graph().as_default():
        c = tf.constant([[1, 2, 3, 4], [5, 6, 7, 8], [4, 3, 2, 1], [9, 9, 9, 9]])
        out = _run(tf.unsorted_segment_sum(c, [0, 1, 0, -1], num_segments=2))
    np.testing.assert_array_equal(out, [[5, 5, 5, 5], [5, 6, 7, 8]])


def test_dynamic_partition_and_stitch_documented_examples():
    with tf.Graph().as_default():
        parts = _run(tf.dynamic_partition([10, 20, 30, 40, 50], [0, 0, 1, 1, 0], 2))
        merged = _run(tf.dynamic_stitch(
            [6, [4, 1], [[5, 2], [0, 3]]],
            [[61, 62], [[41, 42], [11, 12]], [[[51, 52], [21, 22]], [[1, 2], [31, 32]]]]))
    np.testing.assert_array_equal(parts[0], [10, 20, 50])
    np.testing.assert_array_equal(parts[1], [30, 40])
    np.testing.assert_array_equal(merged, [[1, 2], [11, 12], [21, 22], [31, 32], [41, 42],
                                           [51, 52], [61, 62]])


@pytest.mark.parametrize("combiner", ["sum", "mean", "sqrtn"])
@pytest.mark.parametrize("weighted", [False, True])
def test_embedding_lookup_sparse_pools_each_row(combiner, weighted):
    table = np.arange(12.0).reshape(4, 3)
    # rows: 0 -> ids [1, 3, 1], 1 -> none, 2 -> id [0]
    indices, ids, w = [[0, 0], [0, 1], [0, 2], [2, 0]], [1, 3, 1], [2.0, 0.5, 1.0, 3.0]
    ids = ids + [0]
    w = np.array(w) if weighted else np.ones(4)
    expected, expected_grad = np.zeros((3, 3)), np.zeros((4, 3))
    for i, k in [(0, [0, 1, 2]), (2, [3])]:
        total = sum(w[j] * table[ids[j]] for j in k)
        scale = {"sum": 1.0, "mean": 1 / w[k].sum(), "sqrtn": 1 / np.sqrt((w[k] ** 2).sum())}
        expected[i] = total * scale[combiner]
        for j in k:
            expected_grad[ids[j]] += w[j] * scale[combiner]
    with tf.Graph().as_default():
        v = tf.Variable(table)
        sp_ids = tf.SparseTensor(indices, ids, [3, 3])
        sp_w = tf.SparseTensor(indices, w, [3, 3]) if weighted else None
        out = tf.nn.embedding_lookup_sparse(v, sp_ids, sp_w, combiner=combiner)
        with warnings.catch_warnings():  # weighted: rows of unknown count densified, as in TF
            warnings.simplefilter("ignore")
            g, = tf.gradients(tf.reduce_sum(out), [v])
        assert isinstance(g, tf.IndexedSlices)
        got, grad = _run([out, tf.convert_to_tensor(g)])
    if weighted or combiner == "sum":
        np.testing.assert_allclose(got[[0, 2]], expected[[0, 2]], rtol=1e-12)
    else:
        np.testing.assert_allclose(got, expected, rtol=1e-12)
    np.testing.assert_allclose(grad, expected_grad, rtol=1e-12)  # row 2 never looked up: 0


@pytest.mark.parametrize(("fn", "ufunc"), [
    (tf.scatter_add, np.add), (tf.scatter_sub, np.subtract), (tf.scatter_mul, np.multiply),
    (tf.scatter_div, np.divide), (tf.scatter_min, np.minimum), (tf.scatter_max, np.maximum),
    (tf.scatter_update, None)])
def test_scatter_ops_write_rows_in_place_with_repeated_indices(fn, ufunc):
    start = np.arange(1.0, 9.0).reshape(4, 2)
    indices = [2, 0, 2]
    updates = np.array([[2.0, 3.0], [4.0, 0.5], [5.0, 2.0]])
    expected = start.copy()
    for i, u in zip(indices, updates):
        expected[i] = u if ufunc is None else ufunc(expected[i], u)
    with tf.Graph().as_default():
        v = tf.Variable(start)
        op = fn(v, indices, updates)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            storage = sess._state.variables[v.op]
            np.testing.assert_array_equal(sess.run(op), expected)
            np.testing.assert_array_equal(sess.run(v), expected)
            assert sess._state.variables[v.op] is storage  # written in place


def test_variable_scatter_sub_takes_indexed_slices():
    with tf.Graph().as_default():
        v = tf.Variable(np.zeros((3, 2), np.float32))
        op = v.scatter_sub(tf.IndexedSlices(tf.constant([[1.0, 2.0]]), tf.constant([1])))
        np.testing.assert_array_equal(_run(op), [[0, 0], [-1, -2], [0, 0]])
