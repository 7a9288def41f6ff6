"""TF 1.x's SparseTensor functions (sparse_concat, sparse_reorder, sparse_reshape, sparse_add,
sparse_transpose, sparse_retain, sparse_reduce_sum): entries, orders, static shapes, gradients
and errors as TF 2.21 compat.v1 printed them for the same inputs (pinned here)."""

from __future__ import annotations

import numpy as np
import pytest

import engine as tf

A = ([[0, 2], [1, 0], [1, 1]], [1.0, 2.0, 3.0], [2, 3])  # row-major
B = ([[0, 1], [0, 2]], [4.0, 5.0], [2, 4])
C = ([[1, 1], [0, 2], [0, 0]], [10.0, -1.0, 7.0], [2, 3])  # not row-major


def _sparse(parts, values=None):
    return tf.SparseTensor(parts[0], parts[1] if values is None else values, parts[2])


# name -> (build over the SparseTensors a, b, c, TF's (indices, values, dense_shape))
SPARSE_RESULTS = {
    "concat axis 1": (lambda a, b, c: tf.sparse_concat(1, [a, b]),
                      ([[0, 2], [0, 4], [0, 5], [1, 0], [1, 1]], [1, 4, 5, 2, 3], [2, 7])),
    "concat axis 0": (lambda a, b, c: tf.sparse_concat(0, [a, c]),
                      ([[0, 2], [1, 0], [1, 1], [2, 0], [2, 2], [3, 1]], [1, 2, 3, 7, -1, 10],
                       [4, 3])),
    "concat expanded": (lambda a, b, c: tf.sparse_concat(
        1, [a, tf.SparseTensor([[2, 0]], [9.0], [3, 1])], expand_nonconcat_dim=True),
        ([[0, 2], [1, 0], [1, 1], [2, 3]], [1, 2, 3, 9], [3, 4])),
    "reorder": (lambda a, b, c: tf.sparse_reorder(c),
                ([[0, 0], [0, 2], [1, 1]], [7, -1, 10], [2, 3])),
    "reshape -1": (lambda a, b, c: tf.sparse_reshape(a, [3, -1]),
                   ([[1, 0], [1, 1], [2, 0]], [1, 2, 3], [3, 2])),
    "reshape keeps order": (lambda a, b, c: tf.sparse_reshape(c, [1, 6, 1]),
                            ([[0, 4, 0], [0, 2, 0], [0, 0, 0]], [10, -1, 7], [1, 6, 1])),
    "add walks unordered": (lambda a, b, c: tf.sparse_add(a, c),
                            ([[0, 2], [1, 0], [1, 1], [0, 2], [0, 0]], [1, 2, 13, -1, 7],
                             [2, 3])),
    "add thresh": (lambda a, b, c: tf.sparse_add(a, c, 2.5),
                   ([[0, 2], [1, 0], [1, 1], [0, 2], [0, 0]], [1, 2, 13, -1, 7], [2, 3])),
    "transpose": (lambda a, b, c: tf.sparse_transpose(a),
                  ([[0, 1], [1, 1], [2, 0]], [2, 3, 1], [3, 2])),
    "transpose perm": (lambda a, b, c: tf.sparse.transpose(c, [1, 0]),
                       ([[0, 0], [1, 1], [2, 0]], [7, 10, -1], [3, 2])),
    "retain": (lambda a, b, c: tf.sparse_retain(c, [True, False, True]),
               ([[1, 1], [0, 0]], [10, 7], [2, 3])),
}


@pytest.mark.parametrize("name", SPARSE_RESULTS)
def test_sparse_results_are_tfs(name):
    build, (indices, values, shape) = SPARSE_RESULTS[name]
    with tf.Graph().as_default():
        out = build(_sparse(A), _sparse(B), _sparse(C))
        assert out.get_shape().as_list() == shape  # TF's static shape: the dense shape here
        with tf.Session() as sess:
            got = sess.run(out)
    np.testing.assert_array_equal(got.indices, indices)
    np.testing.assert_array_equal(got.values, values)
    np.testing.assert_array_equal(got.dense_shape, shape)


def test_dense_results_are_tfs():
    with tf.Graph().as_default():
        a, c = _sparse(A), _sparse(C)
        ph = tf.sparse_placeholder(tf.float64)
        outs = [tf.sparse_add(a, tf.ones([2, 3])), tf.sparse_add(tf.ones([2, 3]), c),
                tf.sparse_reduce_sum(c), tf.sparse_reduce_sum(c, 0),
                tf.sparse_reduce_sum(c, axis=1, keepdims=True), tf.sparse.reduce_sum(ph, axis=-1)]
        assert [o.shape.as_list() for o in outs[:5]] == [[2, 3], [2, 3], [], [3], [2, 1]]
        assert outs[5].shape.dims is None  # TF: unknown for a placeholder's dense shape
        with tf.Session() as sess:
            got = sess.run(outs, {ph: ([[0, 0, 1], [0, 1, 2], [0, 1, 0]], [1.0, 2.0, 3.0],
                                       [1, 2, 3])})
    expected = [[[1, 1, 2], [3, 4, 1]], [[8, 1, 0], [1, 11, 1]], 16, [7, 10, -1], [[6], [10]],
                [[1, 5]]]
    for g, e in zip(got, expected):
        np.testing.assert_array_equal(g, e)


def test_values_gradients_are_tfs():
    """d/dvalues of sum(w * outputs' values) (w = 1, 2, ...) as TF's gradients give them; the
    sum's walk sends c's [0, 2] to its own output entry (4), not to a's."""
    with tf.Graph().as_default():
        av, cv = tf.constant(A[1]), tf.constant(C[1])
        a, c = _sparse(A, av), _sparse(C, cv)

        def weighted(t):
            return tf.reduce_sum(t.values * tf.cast(tf.range(1, tf.size(t.values) + 1), tf.float32))

        losses = {"add": weighted(tf.sparse_add(a, c, 2.5)),
                  "concat": weighted(tf.sparse_concat(1, [a, c])),
                  "reorder": weighted(tf.sparse_reorder(c)),
                  "transpose": weighted(tf.sparse_transpose(c)),
                  "retain": weighted(tf.sparse_retain(c, [True, False, True])),
                  "reduce_sum": tf.reduce_sum(tf.sparse_reduce_sum(c, 0) * [1.0, 2.0, 3.0]),
                  "dense add": tf.reduce_sum(tf.sparse_add(c, tf.ones([2, 3]))
                                             * tf.reshape(tf.range(6.0), [2, 3]))}
        grads = {k: tf.gradients(v, [av, cv]) for k, v in losses.items()}
        with tf.Session() as sess:
            got = {k: [None if g is None else sess.run(tf.convert_to_tensor(g)).tolist()
                       for g in v] for k, v in grads.items()}
    assert got == {"add": [[1, 2, 3], [3, 4, 5]], "concat": [None, None],
                   "reorder": [None, [3, 2, 1]], "transpose": [None, [2, 3, 1]],
                   "retain": [None, [1, 0, 2]], "reduce_sum": [None, [2, 3, 1]],
                   "dense add": [None, [4, 2, 0]]}


def test_errors_are_tfs():
    with tf.Graph().as_default():
        a, b = _sparse(A), _sparse(B)
        ph = tf.sparse_placeholder(tf.float32)
        with pytest.raises(ValueError, match=r"Cannot reshape a tensor with 6 elements to shape "
                                             r"\[4, None\] \(4 elements\)"):
            tf.sparse_reshape(a, [4, -1])
        with pytest.raises(ValueError, match="At most one dimension can be inferred"):
            tf.sparse_reshape(a, [-1, -1])
        with pytest.raises(ValueError, match=r"Shapes \(2, 3\) and \(2, 4\) are incompatible"):
            tf.sparse_add(a, b)
        with pytest.raises(TypeError, match="At least one input should be SparseTensor"):
            tf.sparse_add(1.0, 2.0)
        with pytest.raises(ValueError, match="Dimensions 3 and 2 are not compatible"):
            tf.sparse_retain(a, [True, False])
        feed = {ph: ([[0, 0], [1, 1]], [1.0, 2.0], [2, 3])}
        with tf.Session() as sess:
            for fetch, message in [
                    (tf.sparse_concat(0, [a, b]).indices,
                     "Input shapes must match: expected 3 for dimension 1 but got 4 at position 1"),
                    (tf.sparse_reduce_sum(a, 2),
                     "Invalid reduction dimension 2, for input with 2 dimensions."),
                    (tf.sparse_reshape(ph, [4, -1]).indices,
                     "Input to reshape is a SparseTensor with 6 dense values, but the requested "
                     "shape requires a multiple of 4. input_shape=[2,3] output_shape=[4,1]"),
                    (tf.sparse_reshape(ph, [-1, -1]).indices,
                     "only one output dimension may be -1, not both 0 and 1")]:
                with pytest.raises(tf.errors.InvalidArgumentError) as info:
                    sess.run(fetch, feed)
                assert str(info.value) == message or message in str(info.value)


def test_sparse_add_of_sorted_inputs_is_the_dense_sum():
    """Row-major inputs (TF's canonical order): the sum's dense form is the dense sum, entries
    row-major, each index once; a sum smaller than thresh is dropped."""
    rng = np.random.default_rng(3)
    dense = [np.where(rng.random((4, 5)) < 0.4, rng.normal(size=(4, 5)), 0.0) for _ in range(2)]
    dense[1][0, 0], dense[0][0, 0] = 1e-3, 1e-3  # a sum of 2e-3 < thresh
    with tf.Graph().as_default():
        sps = [tf.SparseTensor(np.argwhere(d != 0), d[d != 0], d.shape) for d in dense]
        total = tf.sparse_add(*sps, thresh=1e-2)
        with tf.Session() as sess:
            got = sess.run(total)
            as_dense = sess.run(tf.sparse_tensor_to_dense(total))
    expected = dense[0] + dense[1]
    expected[0, 0] = 0.0
    np.testing.assert_array_equal(as_dense, expected)
    order = np.ravel_multi_index(got.indices.T, (4, 5))
    assert (np.diff(order) > 0).all()


def test_concat_expands_dense_shapes_known_only_when_it_runs():
    """expand_nonconcat_dim with a sparse_placeholder: TF's "concat expanded" entries above."""
    with tf.Graph().as_default():
        ph = tf.sparse_placeholder(tf.float32)
        joined = tf.sparse_concat(1, [_sparse(A), ph], expand_nonconcat_dim=True)
        with tf.Session() as sess:
            got = sess.run(joined, {ph: ([[2, 0]], [9.0], [3, 1])})
    np.testing.assert_array_equal(got.indices, [[0, 2], [1, 0], [1, 1], [2, 3]])
    np.testing.assert_array_equal(got.values, [1, 2, 3, 9])
    np.testing.assert_array_equal(got.dense_shape, [3, 4])


def test_sum_of_row_major_inputs_in_one_sort_is_the_walk(monkeypatch):
    """sparse_add of two row-major inputs merges them in one sort: the walk's entries, values
    and each input entry's output position (its gradient's source), on random small inputs
    with and without thresholds (white-box: the walk forced for the comparison)."""
    from engine.ops import sparse_ops

    rng = np.random.default_rng(0)
    cases = []
    for _ in range(200):
        shape = np.array([rng.integers(1, 5), rng.integers(1, 5)])
        parts = []
        for _ in range(2):
            dense = np.where(rng.random(shape) < 0.5, rng.integers(-3, 4, shape), 0).astype(float)
            parts += [np.argwhere(dense != 0), dense[dense != 0], shape]
        assert sparse_ops._strictly_row_major(parts[0]) and sparse_ops._strictly_row_major(parts[3])
        cases.append((parts, float(rng.choice([0.0, 0.5, 2.5]))))
    assert not sparse_ops._strictly_row_major(np.array(C[0]))
    fast = [sparse_ops._add_forward(*parts, thresh) for parts, thresh in cases]
    monkeypatch.setattr(sparse_ops, "_strictly_row_major", lambda indices: False)
    for (parts, thresh), got in zip(cases, fast):
        for f, w in zip(got, sparse_ops._add_forward(*parts, thresh)):
            np.testing.assert_array_equal(f, w)
            assert f.dtype == w.dtype
