"""A TF1 tutorial's queue-based input: CSV files named to ``tf.train.string_input_producer``
(two epochs), read line by line with a ``tf.TextLineReader`` that skips each file's header,
parsed with ``tf.decode_csv`` and shuffled into batches by ``tf.train.shuffle_batch`` (seeded);
softmax regression trained in the ``Coordinator`` / ``start_queue_runners`` loop of the
tutorials until the input runs out.

Prints per step ``step N LOSS ID ID ...`` (the ids of the batch's rows, so the order can be
replayed) and at the end ``done STEPS``."""

import os

import numpy as np

import engine as tf

flags = tf.app.flags
flags.DEFINE_string("data_dir", "/tmp/queue_csv_softmax", "where the CSV files are written")
flags.DEFINE_integer("epochs", 2, "passes over the files")
flags.DEFINE_integer("batch_size", 6, "rows per batch")
flags.DEFINE_float("learning_rate", 0.5, "gradient descent step")
FLAGS = flags.FLAGS


def write_files(data_dir):
    """Two files of 15 rows: id, three features in [0, 1), the class of the largest."""
    rng = np.random.RandomState(2)
    names = []
    for part in range(2):
        name = os.path.join(data_dir, f"part-{part}.csv")
        with open(name, "w") as f:
            f.write("id,f1,f2,f3,label\n")
            for row in range(15):
                x = rng.rand(3).round(4)
                f.write(f"{part * 15 + row},{x[0]},{x[1]},{x[2]},{int(np.argmax(x))}\n")
        names.append(name)
    return names


def main(_):
    os.makedirs(FLAGS.data_dir, exist_ok=True)
    names = write_files(FLAGS.data_dir)
    tf.set_random_seed(1)
    filename_queue = tf.train.string_input_producer(names, num_epochs=FLAGS.epochs,
                                                    shuffle=False)
    reader = tf.TextLineReader(skip_header_lines=1)
    _, line = reader.read(filename_queue)
    row_id, f1, f2, f3, label = tf.decode_csv(line, [[0], [0.0], [0.0], [0.0], [0]])
    features = tf.stack([f1, f2, f3])
    ids, x, y = tf.train.shuffle_batch([row_id, features, label], batch_size=FLAGS.batch_size,
                                       capacity=30, min_after_dequeue=10, seed=5)

    W = tf.Variable(tf.zeros([3, 3]), name="W")
    b = tf.Variable(tf.zeros([3]), name="b")
    logits = tf.matmul(x, W) + b
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y,
                                                                         logits=logits))
    train = tf.train.GradientDescentOptimizer(FLAGS.learning_rate).minimize(loss)

    with tf.Session() as sess:
        sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess=sess, coord=coord)
        step = 0
        try:
            while not coord.should_stop():
                _, value, batch_ids = sess.run([train, loss, ids])
                print("step", step, repr(float(value)), *batch_ids)
                step += 1
        except tf.errors.OutOfRangeError:
            print("done", step)
        finally:
            coord.request_stop()
        coord.join(threads)


if __name__ == "__main__":
    tf.app.run()
