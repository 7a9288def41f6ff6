"""What the third catalogue of TF1 tutorials needed (issue 18): tf.test, tf.compat,
tf.keras.utils.get_file, contrib.learn's VocabularyProcessor, contrib.legacy_seq2seq, the ops
named as TF names them (a name scope's name, an optimizer's returned op), nn.zero_fraction of a
sparse gradient and tf.newaxis; values worked by hand or in numpy."""

from __future__ import annotations

import tarfile
import unittest

import numpy as np
import pytest

import engine as tf
from engine.contrib import legacy_seq2seq
from engine.contrib.learn import preprocessing

pytestmark = pytest.mark.usefixtures("fresh_default_graph")


# -- tf.test -------------------------------------------------------------------------------
class _Case(tf.test.TestCase):
    __test__ = False  # run by the test below, not collected by pytest itself
    def test_fresh_graph_and_default_session(self):
        assert not tf.get_default_graph().get_operations()
        x = tf.constant([1.0, 2.0])
        with self.test_session() as sess:
            assert tf.get_default_session() is sess
            self.assertAllClose(x, [1.0, 2.0 + 1e-7])
            self.assertAllClose({"a": [x, (3.0,)]}, {"a": [[1.0, 2.0], (3.0,)]})
            self.assertAllEqual(self.evaluate(x * 2), [2.0, 4.0])
            with self.assertRaises(AssertionError):
                self.assertAllEqual(x, [1.0, 2.5])
        with self.cached_session() as first, self.cached_session() as second:
            assert first is second
        self.assertShapeEqual(np.zeros((2,)), x)

    def test_graph_is_fresh_again(self):
        assert not tf.get_default_graph().get_operations()
        assert tf.test.get_temp_dir() and not tf.test.is_gpu_available()


def test_tf_test_case_runs_its_tests_as_tf_does():
    suite = unittest.TestSuite([_Case("test_fresh_graph_and_default_session"),
                                _Case("test_graph_is_fresh_again")])
    with open("/dev/null", "w") as devnull:
        result = unittest.TextTestRunner(stream=devnull).run(suite)
    assert result.testsRun == 2 and result.wasSuccessful(), result.failures + result.errors


# -- tf.compat -----------------------------------------------------------------------------
def test_compat_conversions_and_v1():
    assert tf.compat.as_bytes("é") == b"\xc3\xa9" and tf.compat.as_text(b"\xc3\xa9") == "é"
    assert tf.compat.as_str(b"text8") == "text8" and tf.compat.as_str_any(3) == "3"
    with pytest.raises(TypeError, match="Expected binary or unicode string"):
        tf.compat.as_text(3)
    assert tf.compat.v1 is tf and tf.compat.v1.Session is tf.Session


# -- tf.keras.utils ------------------------------------------------------------------------
def test_get_file_downloads_once_into_the_cache(tmp_path):
    source = tmp_path / "iris.csv"
    source.write_text("1,2\n")
    cache = tmp_path / "cache"
    path = tf.keras.utils.get_file("iris.csv", source.as_uri(), cache_dir=str(cache))
    assert path == str(cache / "datasets" / "iris.csv") and open(path).read() == "1,2\n"
    source.write_text("changed\n")  # cached: not fetched again
    assert open(tf.keras.utils.get_file("iris.csv", source.as_uri(), cache_dir=str(cache))
                ).read() == "1,2\n"
    import hashlib
    digest = hashlib.sha256(b"changed\n").hexdigest()  # a hash the cached file fails: fetched
    tf.keras.utils.get_file("iris.csv", source.as_uri(), file_hash=digest, cache_dir=str(cache))
    assert open(path).read() == "changed\n"
    with pytest.raises(Exception, match="URL fetch failure on file:"):
        tf.keras.utils.get_file("gone.csv", (tmp_path / "gone.csv").as_uri(), cache_dir=str(cache))
    assert not (cache / "datasets" / "gone.csv").exists()


def test_get_file_untars_beside_the_archive(tmp_path):
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "a.txt").write_text("a")
    with tarfile.open(tmp_path / "data.tar.gz", "w:gz") as archive:
        archive.add(tmp_path / "data", arcname="data")
    path = tf.keras.utils.get_file("data", (tmp_path / "data.tar.gz").as_uri(), untar=True,
                                   cache_dir=str(tmp_path / "c"))
    assert open(f"{path}/a.txt").read() == "a"
    np.testing.assert_array_equal(tf.keras.utils.to_categorical([[2], [0]], 3),
                                  [[0, 0, 1], [1, 0, 0]])


# -- contrib.learn.preprocessing -------------------------------------------------------------
def test_vocabulary_processor_ids_padding_and_cut():
    processor = preprocessing.VocabularyProcessor(4)
    rows = np.array(list(processor.fit_transform(["a b c", "a b", "b c d e f g"])))
    np.testing.assert_array_equal(rows, [[1, 2, 3, 0], [1, 2, 0, 0], [2, 3, 4, 5]])
    assert rows.dtype == np.int64 and len(processor.vocabulary_) == 8  # <UNK> and 7 words
    np.testing.assert_array_equal(list(processor.transform(["g zz a"])), [[7, 0, 1, 0]])
    assert list(processor.reverse([[1, 2, 0]])) == ["a b <UNK>"]


def test_vocabulary_processor_trims_rare_words_and_round_trips(tmp_path):
    processor = preprocessing.VocabularyProcessor(3, min_frequency=1)
    processor.fit(["c a a b", "a b d"])  # a: 3, b: 2, c and d once: dropped
    np.testing.assert_array_equal(list(processor.transform(["a b c"])), [[1, 2, 0]])
    processor.save(str(tmp_path / "vocab"))
    restored = preprocessing.VocabularyProcessor.restore(str(tmp_path / "vocab"))
    np.testing.assert_array_equal(list(restored.transform(["b d a"])), [[2, 0, 1]])
    assert list(preprocessing.tokenizer(["HelloWorld ABCdef it's x-y"])) == [
        ["Hello", "World", "AB", "Cdef", "it's", "x-y"]]


# -- contrib.legacy_seq2seq ------------------------------------------------------------------
def _session_values(fetches):
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run(fetches)


def test_rnn_decoder_is_the_cell_unrolled_and_feeds_back_with_a_loop_function():
    rng = np.random.RandomState(0)
    inputs = [tf.constant(rng.randn(2, 3).astype(np.float32)) for _ in range(3)]
    cell = tf.nn.rnn_cell.GRUCell(3)
    state0 = cell.zero_state(2, tf.float32)
    outputs, state = legacy_seq2seq.rnn_decoder(inputs, state0, cell)
    assert [v.name for v in tf.trainable_variables()][0].startswith("rnn_decoder/gru_cell/")
    looped, _ = legacy_seq2seq.rnn_decoder(inputs, state0, cell,
                                           loop_function=lambda prev, i: prev * 2.0,
                                           scope="rnn_decoder")
    with tf.variable_scope("rnn_decoder", reuse=True):  # the same steps by hand
        h, manual, by_hand = state0, [], []
        for x in inputs:
            out, h = cell(x, h)
            manual.append(out)
        h, prev = state0, None
        for x in inputs:
            out, h = cell(x if prev is None else prev * 2.0, h)
            by_hand.append(out)
            prev = out
    got = _session_values([outputs, state, manual, looped, by_hand])
    np.testing.assert_allclose(got[0], got[2], rtol=1e-6)
    np.testing.assert_allclose(got[1], got[2][-1], rtol=1e-6)
    np.testing.assert_allclose(got[3], got[4], rtol=1e-6)
    assert len(tf.trainable_variables()) == 4  # one GRU's variables, shared by every step


def test_sequence_losses_match_numpy():
    rng = np.random.RandomState(1)
    logits = [rng.randn(2, 4).astype(np.float32) for _ in range(3)]
    targets = [np.array([1, 3]), np.array([0, 2]), np.array([3, 3])]
    weights = [np.array([1.0, 0.5], np.float32), np.array([1.0, 0.0], np.float32),
               np.array([2.0, 1.0], np.float32)]

    def xent(z, t):
        z = z.astype(np.float64)
        return np.log(np.exp(z).sum(1)) - z[np.arange(len(t)), t]
    per_example = sum(xent(z, t) * w for z, t, w in zip(logits, targets, weights))
    averaged = per_example / (sum(weights) + 1e-12)
    by_example = legacy_seq2seq.sequence_loss_by_example(
        [tf.constant(z) for z in logits], [tf.constant(t) for t in targets],
        [tf.constant(w) for w in weights])
    summed = legacy_seq2seq.sequence_loss(
        [tf.constant(z) for z in logits], [tf.constant(t) for t in targets],
        [tf.constant(w) for w in weights], average_across_timesteps=False)
    got = _session_values([by_example, summed])
    np.testing.assert_allclose(got[0], averaged, rtol=1e-5)
    np.testing.assert_allclose(got[1], per_example.sum() / 2, rtol=1e-5)
    with pytest.raises(ValueError, match="Lengths of logits, weights, and targets"):
        legacy_seq2seq.sequence_loss_by_example(logits[:2], targets, weights)


# -- names, zero_fraction, newaxis -------------------------------------------------------------
def test_ops_named_as_tf_names_them():
    with tf.name_scope("loss") as scope:
        total = tf.add(tf.constant(1.0), 2.0, name=scope)
    assert total.op.name == "loss"
    w = tf.Variable(1.0)
    loss = w * w
    assert tf.train.GradientDescentOptimizer(0.1).minimize(loss).name == "GradientDescent"
    step = tf.train.get_or_create_global_step()
    adam = tf.train.AdamOptimizer(0.1).minimize(loss, global_step=step)
    assert adam.name == "Adam" and adam.type == "AssignAdd"
    assert tf.get_default_graph().get_operation_by_name("Adam/update").type == "NoOp"
    assert tf.train.AdamOptimizer(0.1).minimize(loss).name == "Adam_1"
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(adam)
        assert sess.run(step) == 1


def test_zero_fraction_of_a_sparse_gradient_and_newaxis():
    table = tf.Variable(np.arange(6, dtype=np.float32).reshape(3, 2))
    grad = tf.gradients(tf.reduce_sum(tf.nn.embedding_lookup(table, [0, 0])), table)[0]
    assert isinstance(grad, tf.IndexedSlices)
    column = tf.constant([1, 2, 3])[:, tf.newaxis]
    got = _session_values([tf.nn.zero_fraction(grad), column])
    assert got[0] == pytest.approx(4 / 6)  # only row 0 of the dense gradient is non-zero
    np.testing.assert_array_equal(got[1], [[1], [2], [3]])


# -- a dequeue's timeout, OutputProjectionWrapper ------------------------------------------------
def test_dequeue_past_the_sessions_timeout_is_deadline_exceeded():
    # handson-ml chapter 12's example, with its printed values
    q = tf.FIFOQueue(capacity=10, dtypes=[tf.float32], shapes=[()])
    v = tf.placeholder(tf.float32)
    enqueue, dequeue = q.enqueue([v]), q.dequeue()
    output = dequeue + 1
    config = tf.ConfigProto()
    config.operation_timeout_in_ms = 1000
    with tf.Session(config=config) as sess:
        for value in (1.0, 2.0, 3.0):
            sess.run(enqueue, feed_dict={v: value})
        assert [sess.run(output), sess.run(output, feed_dict={dequeue: 5}), sess.run(output),
                sess.run(output)] == [2.0, 6.0, 3.0, 4.0]
        with pytest.raises(tf.errors.DeadlineExceededError, match="Timed out waiting"):
            sess.run(output)
    with tf.Session() as sess:
        with pytest.raises(tf.errors.DeadlineExceededError):
            sess.run(output, options=tf.RunOptions(timeout_in_ms=10))
        with pytest.raises(tf.errors.FailedPreconditionError):  # no timeout: TF waits forever
            sess.run(output)


@pytest.mark.parametrize("activation", [None, tf.nn.relu])
def test_output_projection_wrapper_projects_every_output(activation):
    x = np.random.RandomState(2).randn(2, 5, 3).astype(np.float32)
    inner = tf.nn.rnn_cell.BasicRNNCell(4, activation=activation)  # relu: step by step
    cell = tf.contrib.rnn.OutputProjectionWrapper(inner, output_size=2, activation=tf.tanh)
    outputs, state = tf.nn.dynamic_rnn(cell, tf.constant(x), dtype=tf.float32)
    names = sorted(v.name for v in tf.trainable_variables())
    assert names == ["rnn/output_projection_wrapper/basic_rnn_cell/bias:0",
                     "rnn/output_projection_wrapper/basic_rnn_cell/kernel:0",
                     "rnn/output_projection_wrapper/bias:0",
                     "rnn/output_projection_wrapper/kernel:0"]
    with tf.variable_scope("rnn/output_projection_wrapper", reuse=True):
        hidden, hidden_state = tf.nn.dynamic_rnn(inner, tf.constant(x), dtype=tf.float32,
                                                 scope="again")
    by_name = {v.name: v for v in tf.trainable_variables()}
    got = _session_values([outputs, state, hidden, hidden_state,
                           by_name["rnn/output_projection_wrapper/kernel:0"],
                           by_name["rnn/output_projection_wrapper/bias:0"]])
    out, final, h, h_final, k, b = got
    np.testing.assert_allclose(out, np.tanh(h @ k + b), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(final, h_final)
    assert out.shape == (2, 5, 2) and cell.output_size == 2 and cell.state_size == 4


# -- tf.Summary parsed back ------------------------------------------------------------------------
def test_summary_parses_a_summary_ops_value_and_adds_to_it():
    # TF's cifar10_eval: summary.ParseFromString(sess.run(summary_op)); summary.value.add(...)
    tf.summary.scalar("loss", tf.constant(2.5))
    tf.summary.histogram("w", tf.constant([1.0, 2.0, 3.0]))
    merged = tf.summary.merge_all()
    with tf.Session() as sess:
        data = sess.run(merged)
    summary = tf.Summary()
    summary.ParseFromString(data)
    assert [(v.tag, v.simple_value) for v in summary.value] == [("loss", 2.5), ("w", None)]
    assert summary.SerializeToString() == data  # the histogram kept as it came
    summary.value.add(tag="Precision @ 1", simple_value=0.5)
    # what TF 2.21's protobuf serialized for that value alone
    assert tf.Summary(value=[summary.value[-1]]).SerializeToString() == \
        b"\n\x14\n\rPrecision @ 1\x15\x00\x00\x00?"
    again = tf.Summary.FromString(summary.SerializeToString())
    assert [v.tag for v in again.value] == ["loss", "w", "Precision @ 1"]
    assert tf.Summary.FromString(b"\n\x08\n\x01a\x15\x00\x00\xc0?").value[0].simple_value == 1.5
    with pytest.raises(TypeError, match="expects bytes"):
        summary.ParseFromString("text")


# -- legacy_seq2seq.embedding_rnn_seq2seq --------------------------------------------------------
def _ids(values):
    return [tf.constant(np.array(v, np.int32)) for v in values]


def test_embedding_rnn_seq2seq_names_and_greedy_feeding():
    tf.set_random_seed(0)
    encoder = _ids([[1, 2], [3, 4], [0, 5]])  # 3 steps, batch of 2
    decoder = tf.placeholder(tf.int32, [4, 2])
    cell = tf.nn.rnn_cell.BasicLSTMCell(5)
    outputs, state = legacy_seq2seq.embedding_rnn_seq2seq(
        encoder, tf.unstack(decoder), cell, num_encoder_symbols=6, num_decoder_symbols=7,
        embedding_size=3)
    with tf.variable_scope("greedy"):
        greedy, _ = legacy_seq2seq.embedding_rnn_seq2seq(
            encoder, tf.unstack(decoder), tf.nn.rnn_cell.BasicLSTMCell(5), 6, 7, 3,
            feed_previous=True)
    names = sorted(v.name for v in tf.trainable_variables() if not v.name.startswith("greedy"))
    assert names == [  # TF 1.x's variable names
        "embedding_rnn_seq2seq/embedding_rnn_decoder/embedding:0",
        "embedding_rnn_seq2seq/embedding_rnn_decoder/rnn_decoder/output_projection_wrapper/"
        "basic_lstm_cell/bias:0",
        "embedding_rnn_seq2seq/embedding_rnn_decoder/rnn_decoder/output_projection_wrapper/"
        "basic_lstm_cell/kernel:0",
        "embedding_rnn_seq2seq/embedding_rnn_decoder/rnn_decoder/output_projection_wrapper/bias:0",
        "embedding_rnn_seq2seq/embedding_rnn_decoder/rnn_decoder/output_projection_wrapper/"
        "kernel:0",
        "embedding_rnn_seq2seq/rnn/embedding_wrapper/basic_lstm_cell/bias:0",
        "embedding_rnn_seq2seq/rnn/embedding_wrapper/basic_lstm_cell/kernel:0",
        "embedding_rnn_seq2seq/rnn/embedding_wrapper/embedding:0"]
    assert len(outputs) == 4 and outputs[0].shape.as_list() == [2, 7]
    first = np.array([[1, 2], [3, 4], [5, 6], [0, 1]])
    second = first.copy()
    second[1:] = [[6, 6], [2, 2], [4, 0]]  # only the first decoder input is read when greedy
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        a, g_a = sess.run([outputs, greedy], {decoder: first})
        b, g_b = sess.run([outputs, greedy], {decoder: second})
    np.testing.assert_array_equal(g_a, g_b)
    np.testing.assert_array_equal(a[0], b[0])
    assert not np.allclose(a[1], b[1])  # teacher forcing reads every decoder input


# -- a queue runner whose enqueue ops end one by one -------------------------------------------------
def test_queue_runner_closes_its_queue_when_its_last_enqueue_op_ends(tmp_path):
    # handson-ml chapter 12: five readers of one file queue; the first reads the whole file,
    # the other four find the file queue closed and stop: every line still comes out (TF)
    path = tmp_path / "my_test.csv"
    path.write_text("x1, x2 , target\n1.,, 0\n4., 5. , 1\n7., 8. , 0\n")
    filename_queue = tf.FIFOQueue(capacity=10, dtypes=[tf.string], shapes=[()])
    filename = tf.placeholder(tf.string)
    enqueue_filename, close_filename_queue = filename_queue.enqueue([filename]), \
        filename_queue.close()
    instance_queue = tf.RandomShuffleQueue(capacity=10, min_after_dequeue=2,
                                           dtypes=[tf.float32, tf.int32], shapes=[[2], []])

    def read_and_push_instance():
        _, value = tf.TextLineReader(skip_header_lines=1).read(filename_queue)
        x1, x2, target = tf.decode_csv(value, record_defaults=[[-1.], [-1.], [-1]])
        return instance_queue.enqueue([tf.stack([x1, x2]), target])

    runner = tf.train.QueueRunner(instance_queue, [read_and_push_instance() for _ in range(5)])
    batch = instance_queue.dequeue_up_to(2)
    rows = []
    with tf.Session() as sess:
        sess.run(enqueue_filename, feed_dict={filename: str(path)})
        sess.run(close_filename_queue)
        runner.create_threads(sess, coord=tf.train.Coordinator(), start=True)
        with pytest.raises(tf.errors.OutOfRangeError):
            while True:
                features, targets = sess.run(batch)
                rows.extend(zip(features.tolist(), targets.tolist()))
    assert sorted(rows) == [([1.0, -1.0], 0), ([4.0, 5.0], 1), ([7.0, 8.0], 0)]


# -- contrib.slim's model analyzer, FLAGS.__flags ----------------------------------------------------
def test_slim_analyze_vars_prints_tf1s_table(capsys):
    import engine.contrib.slim as slim
    w = tf.get_variable("w", [3, 3, 1, 64])
    b = tf.get_variable("b", [64], dtype=tf.float64)
    assert slim.model_analyzer.analyze_vars([w, b], print_info=True) == (640, 576 * 4 + 64 * 8)
    assert capsys.readouterr().out.splitlines() == [
        "---------", "Variables: name (type shape) [size]", "---------",
        "w:0 (float32 3x3x1x64) [576, bytes: 2304]", "b:0 (float64 64) [64, bytes: 512]",
        "Total size of variables: 640", "Total bytes of variables: 2816"]
    assert slim.arg_scope is tf.contrib.framework.arg_scope


def test_flags_dunder_flags_is_the_dict_of_flags():
    from engine.app.flags import DEFINE_integer, FlagValues
    flags = FlagValues()
    DEFINE_integer("epoch", 25, "Epoch to train", flag_values=flags)
    flags(["prog", "--epoch=3"])
    table = getattr(flags, "__flags")  # what `pp.pprint(FLAGS.__flags)` reads
    assert list(table) == ["epoch"] and table["epoch"].value == 3
