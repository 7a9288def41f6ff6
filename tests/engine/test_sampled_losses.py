"""nce_loss, sampled_softmax_loss, the candidate samplers and compute_accidental_hits.

The losses are checked with fixed sampled candidates fed through ``sampled_values`` against a
numpy re-implementation of TF's formulas written here (true logits minus log Q, sampled logits
minus log Q, -FLT_MAX on accidental hits), and their gradients against central finite
differences of that numpy loss. The samplers' expected counts are checked against TF's
formulas: p * num_sampled without ``unique``, 1 - (1 - p)^num_tries with it.
"""

from __future__ import annotations

import numpy as np
import pytest

import engine as tf
from tests.engine.numeric import numeric_grad

FLT_MAX = np.finfo(np.float32).max


def _log_uniform_p(k, range_max):
    return (np.log(k + 2.0) - np.log(k + 1.0)) / np.log(range_max + 1.0)


def _sampled_logits_np(w, b, labels, x, sampled, true_q, sampled_q, remove_hits):
    """TF's _compute_sampled_logits in numpy (labels [batch, num_true])."""
    true_logits = np.einsum("bd,btd->bt", x, w[labels]) + b[labels]
    sampled_logits = x @ w[sampled].T + b[sampled]
    if remove_hits:
        for i, row in enumerate(labels):
            for k, c in enumerate(sampled):
                if c in row:
                    sampled_logits[i, k] += -FLT_MAX
    true_logits = true_logits - np.log(true_q)
    sampled_logits = sampled_logits - np.log(sampled_q)
    num_true = labels.shape[1]
    out_labels = np.concatenate([np.full(true_logits.shape, 1.0 / num_true),
                                 np.zeros(sampled_logits.shape)], 1)
    return np.concatenate([true_logits, sampled_logits], 1), out_labels


def _nce_np(*args, remove_hits=False):
    z, y = _sampled_logits_np(*args, remove_hits)
    return (np.maximum(z, 0) - z * y + np.log1p(np.exp(-np.abs(z)))).sum(1)


def _sampled_softmax_np(*args, remove_hits=True):
    z, y = _sampled_logits_np(*args, remove_hits)
    z = z - z.max(1, keepdims=True)
    return -(y * (z - np.log(np.exp(z).sum(1, keepdims=True)))).sum(1)


def _case(num_true=1, seed=0):
    rng = np.random.RandomState(seed)
    num_classes, dim, batch = 7, 3, 4
    w = rng.randn(num_classes, dim)
    b = rng.randn(num_classes)
    x = rng.randn(batch, dim)
    labels = rng.randint(0, num_classes, (batch, num_true))
    sampled = np.array([5, 0, 3, 6, 2])  # 0 and 3 and others hit some rows' true classes
    true_q = _log_uniform_p(labels, num_classes) * len(sampled)
    sampled_q = _log_uniform_p(sampled, num_classes) * len(sampled)
    return w, b, labels, x, sampled, true_q, sampled_q


def _tf_loss(loss_fn, w, b, labels, x, sampled, true_q, sampled_q, **kw):
    weights, biases = tf.constant(w), tf.constant(b)
    inputs = tf.constant(x)
    sampled_values = (tf.constant(sampled, dtype=tf.int64), tf.constant(true_q, tf.float32),
                      tf.constant(sampled_q, tf.float32))
    loss = loss_fn(weights=weights, biases=biases, labels=tf.constant(labels, tf.int64),
                   inputs=inputs, num_sampled=len(sampled), num_classes=len(w),
                   num_true=labels.shape[1], sampled_values=sampled_values, **kw)
    return loss, weights, biases, inputs


@pytest.mark.parametrize("num_true", [1, 2])
@pytest.mark.parametrize("remove_hits", [False, True])
def test_nce_loss_matches_numpy(num_true, remove_hits):
    case = _case(num_true)
    with tf.Graph().as_default():
        loss, *_ = _tf_loss(tf.nn.nce_loss, *case, remove_accidental_hits=remove_hits)
        assert loss.shape.as_list() == [4]
        got = tf.Session().run(loss)
    q = [c.astype(np.float32).astype(np.float64) for c in case[5:]]  # the fed float32 counts
    np.testing.assert_allclose(got, _nce_np(*case[:5], *q, remove_hits=remove_hits), rtol=1e-6)


@pytest.mark.parametrize("num_true", [1, 2])
@pytest.mark.parametrize("remove_hits", [False, True])
def test_sampled_softmax_loss_matches_numpy(num_true, remove_hits):
    case = _case(num_true, seed=1)
    with tf.Graph().as_default():
        loss, *_ = _tf_loss(tf.nn.sampled_softmax_loss, *case,
                            remove_accidental_hits=remove_hits)
        got = tf.Session().run(loss)
    q = [c.astype(np.float32).astype(np.float64) for c in case[5:]]
    want = _sampled_softmax_np(*case[:5], *q, remove_hits=remove_hits)
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_accidental_hits_change_the_loss_only_where_a_sample_is_a_true_class():
    w, b, labels, x, sampled, tq, sq = _case(1, seed=1)
    hit_rows = [i for i, row in enumerate(labels) if set(row) & set(sampled)]
    assert hit_rows and len(hit_rows) < len(labels)  # the case has both kinds of rows
    with tf.Graph().as_default():
        on, *_ = _tf_loss(tf.nn.sampled_softmax_loss, w, b, labels, x, sampled, tq, sq)
        off, *_ = _tf_loss(tf.nn.sampled_softmax_loss, w, b, labels, x, sampled, tq, sq,
                           remove_accidental_hits=False)
        on, off = tf.Session().run([on, off])
    differ = np.flatnonzero(~np.isclose(on, off, rtol=1e-12))
    np.testing.assert_array_equal(differ, hit_rows)


@pytest.mark.parametrize("loss_fn,remove_hits", [(tf.nn.nce_loss, False),
                                                 (tf.nn.nce_loss, True),
                                                 (tf.nn.sampled_softmax_loss, True)])
def test_gradients_match_finite_differences_and_weights_get_indexed_slices(loss_fn, remove_hits):
    case = _case(2, seed=2)
    w, b, labels, x, sampled, tq, sq = case
    np_loss = _nce_np if loss_fn is tf.nn.nce_loss else _sampled_softmax_np
    with tf.Graph().as_default():
        loss, weights, biases, inputs = _tf_loss(loss_fn, *case,
                                                 remove_accidental_hits=remove_hits)
        gw, gb, gx = tf.gradients(tf.reduce_sum(loss), [weights, biases, inputs])
        assert isinstance(gw, tf.IndexedSlices) and isinstance(gb, tf.IndexedSlices)
        gw_dense, gb, gx = tf.Session().run([tf.convert_to_tensor(gw),
                                             tf.convert_to_tensor(gb), gx])
    q = [c.astype(np.float32).astype(np.float64) for c in (tq, sq)]
    total = lambda **kv: np_loss(*[kv.get(k, v) for k, v in  # noqa: E731
                                   zip("wblxs", (w, b, labels, x, sampled))], *q,
                                 remove_hits=remove_hits).sum()
    np.testing.assert_allclose(gw_dense, numeric_grad(lambda v: total(w=v), w), atol=1e-6)
    np.testing.assert_allclose(gb, numeric_grad(lambda v: total(b=v), b), atol=1e-6)
    np.testing.assert_allclose(gx, numeric_grad(lambda v: total(x=v), x), atol=1e-6)
    untouched = sorted(set(range(len(w))) - set(labels.ravel()) - set(sampled))
    assert untouched and not gw_dense[untouched].any()


@pytest.mark.parametrize("strategy", ["mod", "div"])
def test_partitioned_weights_give_the_loss_of_the_whole_table(strategy):
    """A list of weights is one table split by partition_strategy (embedding_lookup's rules)."""
    w, b, labels, x, sampled, tq, sq = case = _case(1, seed=3)
    rows = np.arange(len(w))
    parts = ([rows[rows % 3 == p] for p in range(3)] if strategy == "mod"
             else np.array_split(rows, 3))
    with tf.Graph().as_default():
        whole, *_ = _tf_loss(tf.nn.nce_loss, *case)
        shards = [tf.Variable(w[p]) for p in parts]
        split = tf.nn.nce_loss(shards, tf.constant(b), tf.constant(labels), tf.constant(x),
                               len(sampled), len(w), sampled_values=(
                                   tf.constant(sampled), tf.constant(tq, tf.float32),
                                   tf.constant(sq, tf.float32)), partition_strategy=strategy)
        grads = tf.gradients(tf.reduce_sum(split), shards)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            whole, split, grads = sess.run([whole, split, [tf.convert_to_tensor(g)
                                                           for g in grads]])
    np.testing.assert_allclose(split, whole, rtol=1e-12)
    q = [c.astype(np.float32).astype(np.float64) for c in (tq, sq)]
    dense = numeric_grad(lambda v: _nce_np(v, b, labels, x, sampled, *q).sum(), w)
    for p, g in zip(parts, grads):
        np.testing.assert_allclose(g, dense[p], atol=1e-6)


def test_compute_accidental_hits_lists_row_position_and_minus_flt_max():
    with tf.Graph().as_default():
        hits = tf.nn.compute_accidental_hits(
            tf.constant([[1, 4], [2, 2], [7, 0]], tf.int64), tf.constant([4, 2, 9, 0], tf.int64),
            num_true=2)
        indices, ids, weights = tf.Session().run(hits)
    np.testing.assert_array_equal(indices, [0, 1, 1, 2])
    np.testing.assert_array_equal(ids, [0, 1, 1, 3])
    assert indices.dtype == np.int32 and ids.dtype == np.int64
    np.testing.assert_array_equal(weights, np.full(4, -FLT_MAX, np.float32))


def _sample(sampler, **kw):
    with tf.Graph().as_default():
        out = sampler(true_classes=tf.constant([[0], [3]], tf.int64), num_true=1, seed=7, **kw)
        with tf.Session() as sess:
            return sess.run(out), sess.run(out)


def test_log_uniform_sampler_expected_counts_without_unique():
    (ids, true_q, sampled_q), (again, *_) = _sample(
        tf.nn.log_uniform_candidate_sampler, num_sampled=20000, unique=False, range_max=10)
    assert ids.dtype == np.int64 and ids.min() >= 0 and ids.max() < 10
    assert not np.array_equal(ids, again)  # a new draw per run
    np.testing.assert_allclose(true_q, _log_uniform_p(np.array([[0], [3]]), 10) * 20000,
                               rtol=1e-6)
    np.testing.assert_allclose(sampled_q, _log_uniform_p(ids, 10) * 20000, rtol=1e-6)
    # the draws follow the distribution: frequencies within 4 standard errors
    p = _log_uniform_p(np.arange(10), 10)
    freq = np.bincount(ids, minlength=10) / 20000
    assert np.all(np.abs(freq - p) < 4 * np.sqrt(p * (1 - p) / 20000))


def test_unique_sampler_counts_the_tries():
    (ids, true_q, sampled_q), _ = _sample(tf.nn.log_uniform_candidate_sampler, num_sampled=6,
                                          unique=True, range_max=10)
    assert len(set(ids)) == 6
    p = _log_uniform_p(ids, 10)
    tries = np.log1p(-sampled_q.astype(np.float64)) / np.log1p(-p)  # 1 - (1 - p)^tries
    assert tries.min() >= 6
    np.testing.assert_allclose(tries, np.round(tries[0]), rtol=1e-4)
    np.testing.assert_allclose(true_q[:, 0], -np.expm1(np.round(tries[0])
                                                       * np.log1p(-_log_uniform_p(
                                                           np.array([0, 3]), 10))), rtol=1e-5)


def test_uniform_and_fixed_unigram_samplers(tmp_path):
    (ids, true_q, sampled_q), _ = _sample(tf.nn.uniform_candidate_sampler, num_sampled=4,
                                          unique=False, range_max=8)
    np.testing.assert_allclose(sampled_q, np.full(4, 4 / 8))
    vocab = tmp_path / "vocab.csv"
    vocab.write_text("the,9\nof,4\n\ncat,1\n")
    for kw in ({"vocab_file": str(vocab)}, {"unigrams": [9, 4, 1]}):
        (ids, true_q, sampled_q), _ = _sample(
            tf.nn.fixed_unigram_candidate_sampler, num_sampled=3000, unique=False, range_max=4,
            num_reserved_ids=1, distortion=0.5, **kw)
        weights = np.array([0, 3, 2, 1]) / 6  # reserved id 0, then counts ** 0.5
        assert 0 not in ids
        np.testing.assert_allclose(true_q[:, 0], weights[[0, 3]] * 3000, rtol=1e-6)
        np.testing.assert_allclose(sampled_q, weights[ids] * 3000, rtol=1e-6)
    with pytest.raises(tf.errors.InvalidArgumentError, match="range_max = 5 but 4 ids"):
        tf.nn.fixed_unigram_candidate_sampler([[0]], 1, 2, False, 5, unigrams=[9, 4, 1],
                                              num_reserved_ids=1)
    vocab.write_text("the,9\nof\n")
    with pytest.raises(tf.errors.InvalidArgumentError, match="vocab.csv:2"):
        tf.nn.fixed_unigram_candidate_sampler([[0]], 1, 2, False, 2, vocab_file=str(vocab))


def test_default_sampler_is_seeded_log_uniform_and_trains_only_touched_rows():
    rng = np.random.RandomState(4)
    with tf.Graph().as_default():
        tf.set_random_seed(1)
        w = tf.Variable(rng.randn(50, 4).astype(np.float32))
        b = tf.Variable(np.zeros(50, np.float32))
        x = tf.constant(rng.randn(8, 4).astype(np.float32))
        labels = tf.constant(rng.randint(0, 50, (8, 1)))
        loss = tf.reduce_mean(tf.nn.sampled_softmax_loss(w, b, labels, x, 5, 50))
        step = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            before = sess.run(w)
            first, _ = sess.run([loss, step])
            changed = np.flatnonzero(np.any(sess.run(w) != before, axis=1))
    assert np.isfinite(first) and first > 0
    assert 0 < len(changed) <= 8 + 5  # the true classes' and the 5 sampled rows only


def test_sparse_to_dense_and_its_gradient():
    with tf.Graph().as_default():
        values = tf.constant([1.0, 2.0])
        default = tf.constant(-1.0)
        dense = tf.sparse_to_dense([[0, 1], [2, 0]], [3, 2], values, default)
        weights = tf.constant(np.arange(6.0, dtype=np.float32).reshape(3, 2))
        gv, gd = tf.gradients(tf.reduce_sum(dense * weights), [values, default])
        dense, gv, gd = tf.Session().run([dense, gv, gd])
        np.testing.assert_array_equal(dense, [[-1, 1], [-1, -1], [2, -1]])
        np.testing.assert_array_equal(gv, [1.0, 4.0])
        assert gd == 15 - 5
        with pytest.raises(ValueError, match="lexicographic"):
            tf.Session().run(tf.sparse_to_dense([[2, 0], [0, 1]], [3, 2], values))
