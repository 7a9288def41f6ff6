"""A TF1 tutorial's CSV input pipeline: a CSV file with a header written with the standard
library, read back with ``TextLineDataset(...).skip(1)`` and ``tf.decode_csv`` (a column with a
default for its empty fields), batched and repeated; linear regression trained with gradient
descent in the ``while True: try sess.run(train) except OutOfRangeError`` loop.

Prints per step ``step N LOSS`` and at the end ``weights W1 W2 B``."""

import csv
import os

import numpy as np

import engine as tf

flags = tf.app.flags
flags.DEFINE_string("data_dir", "/tmp/csv_linear_regression", "where the CSV file is written")
flags.DEFINE_integer("epochs", 4, "passes over the file")
flags.DEFINE_integer("batch_size", 8, "rows per batch")
flags.DEFINE_float("learning_rate", 0.1, "gradient descent step")
FLAGS = flags.FLAGS


def write_csv(path):
    """20 rows of y = 2 x1 - 3 x2 + 0.5 (+ small noise); x2 is empty (default 1.0) in rows
    divisible by 7."""
    rng = np.random.RandomState(0)
    with open(path, "w", newline="") as f:
        out = csv.writer(f)
        out.writerow(["x1", "x2", "y"])
        for i in range(20):
            x1, x2 = rng.uniform(-1, 1, 2).round(3)
            x2_field = "" if i % 7 == 0 else x2
            x2 = 1.0 if i % 7 == 0 else x2
            y = round(2 * x1 - 3 * x2 + 0.5 + rng.normal(0, 0.01), 4)
            out.writerow([x1, x2_field, y])


def main(_):
    os.makedirs(FLAGS.data_dir, exist_ok=True)
    path = os.path.join(FLAGS.data_dir, "train.csv")
    write_csv(path)

    def parse(line):
        x1, x2, y = tf.decode_csv(line, record_defaults=[[0.0], [1.0], [0.0]])
        return tf.stack([x1, x2]), tf.reshape(y, [1])

    dataset = (tf.data.TextLineDataset(path).skip(1).map(parse)
               .batch(FLAGS.batch_size).repeat(FLAGS.epochs))
    features, target = dataset.make_one_shot_iterator().get_next()

    W = tf.Variable(tf.zeros([2, 1]), name="W")
    b = tf.Variable(tf.zeros([1]), name="b")
    loss = tf.reduce_mean(tf.square(tf.matmul(features, W) + b - target))
    train = tf.train.GradientDescentOptimizer(FLAGS.learning_rate).minimize(loss)

    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        step = 0
        try:
            while True:
                _, value = sess.run([train, loss])
                print("step", step, repr(float(value)))
                step += 1
        except tf.errors.OutOfRangeError:
            pass
        w, bias = sess.run([W, b])
        print("weights", *(repr(float(v)) for v in [*w.ravel(), *bias]))


if __name__ == "__main__":
    tf.app.run()
