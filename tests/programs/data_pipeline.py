"""A TF1 tf.data input pipeline (the tutorials' shape) on synthetic data: placeholders fed to an
initializable iterator, a map that scales the pixels and one-hot encodes the labels, a seeded
shuffle and batches; softmax regression trained for a few epochs with the usual
``while True: try sess.run(...) except tf.errors.OutOfRangeError`` loop, and the same iterator
re-initialized with the validation arrays to count correct predictions.

Prints per step ``step N EPOCH LOSS ID ID ...`` (the ids of the batch's rows, so the order can be
replayed) and per epoch ``valid EPOCH CORRECT TOTAL``."""

import numpy as np

import engine as tf

flags = tf.app.flags
flags.DEFINE_integer("epochs", 3, "passes over the training set")
flags.DEFINE_integer("batch_size", 16, "rows per batch")
flags.DEFINE_float("learning_rate", 0.5, "gradient descent step")
FLAGS = flags.FLAGS

CLASSES = 3


def synthetic(rng, n):
    """Pixel-like features (0..255) whose class is the brightest of three regions."""
    pixels = rng.randint(0, 256, size=(n, 6)).astype(np.float32)
    labels = np.argmax(pixels.reshape(n, 3, 2).sum(2), 1).astype(np.int64)
    return pixels, labels


def main(_):
    rng = np.random.RandomState(0)
    train_x, train_y = synthetic(rng, 60)
    valid_x, valid_y = synthetic(rng, 25)

    tf.set_random_seed(1)
    pixels = tf.placeholder(tf.float32, [None, 6], name="pixels")
    labels = tf.placeholder(tf.int64, [None], name="labels")
    ids = tf.placeholder(tf.int32, [None], name="ids")

    def preprocess(example):
        return {"x": example["x"] / 255.0, "y": tf.one_hot(example["y"], CLASSES),
                "id": example["id"]}

    dataset = (tf.data.Dataset.from_tensor_slices({"x": pixels, "y": labels, "id": ids})
               .map(preprocess)
               .shuffle(buffer_size=20)
               .batch(FLAGS.batch_size)
               .prefetch(1))
    iterator = dataset.make_initializable_iterator()
    batch = iterator.get_next()

    W = tf.Variable(tf.zeros([6, CLASSES]), name="W")
    b = tf.Variable(tf.zeros([CLASSES]), name="b")
    logits = tf.matmul(batch["x"], W) + b
    loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits_v2(labels=batch["y"],
                                                                     logits=logits))
    train_op = tf.train.GradientDescentOptimizer(FLAGS.learning_rate).minimize(loss)
    correct = tf.reduce_sum(tf.cast(tf.equal(tf.argmax(logits, 1), tf.argmax(batch["y"], 1)),
                                    tf.int32))
    rows = tf.shape(batch["id"])[0]

    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        step = 0
        for epoch in range(FLAGS.epochs):
            sess.run(iterator.initializer, feed_dict={pixels: train_x, labels: train_y,
                                                      ids: np.arange(len(train_x))})
            while True:
                try:
                    _, loss_value, batch_ids = sess.run([train_op, loss, batch["id"]])
                except tf.errors.OutOfRangeError:
                    break
                print(f"step {step} {epoch} {loss_value:.7f} " + " ".join(map(str, batch_ids)))
                step += 1
            sess.run(iterator.initializer, feed_dict={pixels: valid_x, labels: valid_y,
                                                      ids: np.arange(len(valid_x))})
            right = total = 0
            while True:
                try:
                    n_right, n = sess.run([correct, rows])
                except tf.errors.OutOfRangeError:
                    break
                right, total = right + n_right, total + n
            print(f"valid {epoch} {right} {total}")


if __name__ == "__main__":
    tf.app.run()
