"""TF1's queue-based input: queues and their ops, readers, the input producers and batchers,
QueueRunner / start_queue_runners (filled on demand here) and Coordinator, against TF's
documented behaviour (data_flow_ops.py, input.py, io_ops.py and their tests)."""

from __future__ import annotations

import numpy as np
import pytest

import engine as tf


def drain(sess, fetch):
    out = []
    try:
        while True:
            out.append(sess.run(fetch))
    except tf.errors.OutOfRangeError:
        return out


def test_fifo_queue_ops_and_closing():
    q = tf.FIFOQueue(10, [tf.int32, tf.float32], shapes=[[], [2]])
    x = tf.placeholder(tf.int32, [None])
    enqueue_many = q.enqueue_many([x, tf.tile(tf.cast(tf.expand_dims(x, 1), tf.float32), [1, 2])])
    one = q.dequeue()
    two = q.dequeue_many(2)
    rest = q.dequeue_up_to(5)
    assert two[0].shape.as_list() == [2] and two[1].shape.as_list() == [2, 2]
    with tf.Session() as sess:
        sess.run(enqueue_many, {x: [1, 2, 3, 4]})
        sess.run(q.enqueue([5, [5.0, 5.0]]))
        assert sess.run(q.size()) == 5
        first = sess.run(one)
        assert first[0] == 1 and list(first[1]) == [1.0, 1.0]
        np.testing.assert_array_equal(sess.run(two)[0], [2, 3])
        sess.run(q.close())
        assert sess.run(q.is_closed())
        with pytest.raises(tf.errors.CancelledError, match="closed"):
            sess.run(q.enqueue([6, [6.0, 6.0]]))
        np.testing.assert_array_equal(sess.run(rest)[0], [4, 5])  # what is left of a closed queue
        with pytest.raises(tf.errors.OutOfRangeError, match="is closed and has insufficient "
                                                            r"elements \(requested 1, current "
                                                            r"size 0\)"):
            sess.run(one)


def test_an_empty_queue_nothing_fills_names_the_queue():
    q = tf.FIFOQueue(3, tf.float32, name="lonely")
    with tf.Session() as sess, pytest.raises(tf.errors.FailedPreconditionError,
                                             match="'lonely' holds 0 elements.*start_queue_runners"):
        sess.run(q.dequeue())


def test_random_shuffle_queue_keeps_min_after_dequeue_and_is_seeded():
    def order(seed):
        with tf.Graph().as_default():
            tf.set_random_seed(seed)
            producer = tf.train.range_input_producer(30, num_epochs=1, shuffle=False)
            q = tf.RandomShuffleQueue(12, 5, tf.int32, shapes=[[]], seed=1)
            tf.train.add_queue_runner(tf.train.QueueRunner(q, [q.enqueue(producer.dequeue())]))
            with tf.Session() as sess:
                tf.train.start_queue_runners(sess)
                return [int(v) for v in drain(sess, q.dequeue())]

    first = order(0)
    assert sorted(first) == list(range(30)) and first != list(range(30))
    # the k-th element is taken from a queue that has seen at most k + 5 + 1 elements
    assert all(v <= k + 5 for k, v in enumerate(first))
    assert order(0) == first and order(1) != first


def test_string_input_producer_epochs_and_shuffle(tmp_path):
    names = [str(tmp_path / f"{i}.txt") for i in range(4)]
    plain = tf.train.string_input_producer(names, num_epochs=2, shuffle=False)
    tf.set_random_seed(2)
    mixed = tf.train.string_input_producer(names, num_epochs=3, seed=7)
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        tf.train.start_queue_runners(sess)
        assert [v.decode() for v in drain(sess, plain.dequeue())] == names * 2
        epochs = [v.decode() for v in drain(sess, mixed.dequeue())]
    assert len(epochs) == 12
    assert all(sorted(epochs[i:i + 4]) == names for i in (0, 4, 8))
    assert epochs[:4] != epochs[4:8] or epochs[4:8] != epochs[8:]


def test_slice_input_producer_and_batch_keep_rows_together():
    x = np.arange(10, dtype=np.float32).reshape(5, 2)
    y = np.arange(5) * 10
    tf.set_random_seed(0)
    row_x, row_y = tf.train.slice_input_producer([x, y], num_epochs=2, seed=3)
    batch = tf.train.batch({"x": row_x, "y": row_y}, batch_size=4,
                           allow_smaller_final_batch=True)
    assert batch["x"].shape.as_list() == [None, 2]
    with tf.Session() as sess:
        tf.train.start_queue_runners(sess)
        batches = drain(sess, batch)
    assert [len(b["y"]) for b in batches] == [4, 4, 2]
    ys = np.concatenate([b["y"] for b in batches])
    np.testing.assert_array_equal(np.concatenate([b["x"] for b in batches]), x[ys // 10])
    assert sorted(ys[:5]) == sorted(ys[5:]) == list(y)


def test_readers_keys_values_and_errors(tmp_path):
    (tmp_path / "a.txt").write_bytes(b"head\nl1\r\nl2")
    (tmp_path / "b.bin").write_bytes(b"\x00\x01")
    with tf.python_io.TFRecordWriter(str(tmp_path / "c.tfrecord")) as writer:
        writer.write(b"r0")
        writer.write(b"r1")
    text = tf.TextLineReader(skip_header_lines=1).read(tf.train.string_input_producer(
        [str(tmp_path / "a.txt")], num_epochs=1, shuffle=False))
    whole = tf.WholeFileReader().read(tf.train.string_input_producer(
        [str(tmp_path / "b.bin")], num_epochs=1, shuffle=False))
    reader = tf.TFRecordReader()
    records = reader.read_up_to(tf.train.string_input_producer(
        [str(tmp_path / "c.tfrecord")], num_epochs=1, shuffle=False), 5)
    missing = tf.WholeFileReader().read(tf.train.string_input_producer(
        [str(tmp_path / "nope")], shuffle=False))
    with tf.Session() as sess:
        tf.train.start_queue_runners(sess)
        a = str(tmp_path / "a.txt")
        assert drain(sess, text) == [(f"{a}:2".encode(), b"l1"), (f"{a}:3".encode(), b"l2")]
        assert drain(sess, whole) == [(str(tmp_path / "b.bin").encode(), b"\x00\x01")]
        keys, values = sess.run(records)
        c = str(tmp_path / "c.tfrecord")
        assert list(keys) == [f"{c}:0".encode(), f"{c}:18".encode()]
        assert list(values) == [b"r0", b"r1"]
        assert sess.run(reader.num_records_produced()) == 2
        with pytest.raises(tf.errors.NotFoundError, match="nope"):
            sess.run(missing)


def test_coordinator_reraises_what_was_reported():
    coord = tf.train.Coordinator()
    assert not coord.should_stop()
    with coord.stop_on_exception():
        raise tf.errors.OutOfRangeError("the end")  # a clean stop
    assert coord.should_stop()
    coord.join([])
    coord.clear_stop()
    with coord.stop_on_exception():
        raise ValueError("bad record")
    assert coord.should_stop()
    with pytest.raises(ValueError, match="bad record"):
        coord.join([])


def test_shuffle_batch_of_a_reader_ends_with_its_epochs(tmp_path):
    (tmp_path / "d.csv").write_text("".join(f"{i},{i * i}\n" for i in range(12)))
    files = tf.train.string_input_producer([str(tmp_path / "d.csv")], num_epochs=2)
    _, line = tf.TextLineReader().read(files)
    a, b = tf.decode_csv(line, [[0], [0]])
    tf.set_random_seed(4)
    batch_a, batch_b = tf.train.shuffle_batch([a, b], batch_size=5, capacity=10,
                                              min_after_dequeue=3, seed=2)
    with tf.Session() as sess:
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord=coord)
        batches = drain(sess, [batch_a, batch_b])
        coord.request_stop()
        coord.join(threads)
    assert len(batches) == 4  # 24 rows: 4 full batches, the last 4 rows dropped
    values = np.concatenate([b[0] for b in batches])
    np.testing.assert_array_equal(np.concatenate([b[1] for b in batches]), values ** 2)
    assert len(set(values.tolist())) == 12 and values.tolist() != sorted(values.tolist())


def test_batch_dynamic_pad_and_batch_join():
    lengths = tf.train.range_input_producer(4, num_epochs=1, shuffle=False).dequeue()
    padded = tf.train.batch([tf.range(lengths + 1)], batch_size=2, dynamic_pad=True,
                            shapes=[[None]])
    first = tf.train.range_input_producer(3, num_epochs=1, shuffle=False, name="first")
    second = tf.train.range_input_producer(3, num_epochs=1, shuffle=False, name="second")
    joined = tf.train.batch_join([[first.dequeue()], [second.dequeue() + 10]], batch_size=6)
    with tf.Session() as sess:
        tf.train.start_queue_runners(sess)
        np.testing.assert_array_equal(sess.run(padded), [[0, 0], [0, 1]])
        np.testing.assert_array_equal(sess.run(padded), [[0, 1, 2, 0], [0, 1, 2, 3]])
        np.testing.assert_array_equal(sess.run(joined), [0, 10, 1, 11, 2, 12])  # in turn


def test_monitored_training_session_starts_the_queue_runners(tmp_path):
    """As TF's: the session's queue runners start with it, and the end of their input ends
    the ``with`` block quietly."""
    with tf.Graph().as_default():  # the session finalizes its graph
        producer = tf.train.range_input_producer(10, num_epochs=1, shuffle=False)
        total = tf.Variable(0, name="total")
        add = tf.assign_add(total, producer.dequeue_many(4)[0])
        seen = []
        with tf.train.MonitoredTrainingSession(checkpoint_dir=None) as sess:
            while not sess.should_stop():
                seen.append(int(sess.run(add)))
        assert seen == [0, 4]  # rows 0-3, 4-7; two rows left, fewer than a batch
