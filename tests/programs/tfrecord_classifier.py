"""A TF1 tutorial's TFRecord pipeline: ``tf.train.Example`` records (a float feature vector, an
int64 label and a variable-length list of tags) written with ``tf.python_io.TFRecordWriter``,
read back with ``tf.data.TFRecordDataset`` and ``tf.parse_single_example``
(``FixedLenFeature`` and ``VarLenFeature``), batched; softmax regression trained for a few
epochs, the reinitializable loop of the tutorials.

Prints ``tags N`` (the number of tags read, a sum over a SparseTensor), per step
``step N LOSS`` and at the end ``accuracy CORRECT``."""

import os

import numpy as np

import engine as tf

flags = tf.app.flags
flags.DEFINE_string("data_dir", "/tmp/tfrecord_classifier", "where the TFRecord file is written")
flags.DEFINE_integer("epochs", 3, "passes over the file")
flags.DEFINE_float("learning_rate", 0.5, "gradient descent step")
FLAGS = flags.FLAGS


def write_records(path):
    """30 examples: 4 features in [0, 1), label = argmax of the first three, 0-2 tags."""
    rng = np.random.RandomState(1)
    with tf.python_io.TFRecordWriter(path) as writer:
        for i in range(30):
            x = rng.rand(4).astype(np.float32)
            example = tf.train.Example(features=tf.train.Features(feature={
                "x": tf.train.Feature(float_list=tf.train.FloatList(value=x)),
                "label": tf.train.Feature(int64_list=tf.train.Int64List(
                    value=[int(np.argmax(x[:3]))])),
                "tags": tf.train.Feature(bytes_list=tf.train.BytesList(
                    value=[b"t%d" % j for j in range(i % 3)])),
            }))
            writer.write(example.SerializeToString())


def main(_):
    os.makedirs(FLAGS.data_dir, exist_ok=True)
    path = os.path.join(FLAGS.data_dir, "train.tfrecord")
    write_records(path)

    def parse(record):
        parsed = tf.parse_single_example(record, {
            "x": tf.FixedLenFeature([4], tf.float32),
            "label": tf.FixedLenFeature([], tf.int64),
            "tags": tf.VarLenFeature(tf.string)})
        return parsed["x"], parsed["label"], tf.size(parsed["tags"].values)

    dataset = tf.data.TFRecordDataset([path]).map(parse).batch(10)
    iterator = dataset.make_initializable_iterator()
    x, label, tags = iterator.get_next()

    W = tf.Variable(tf.zeros([4, 3]), name="W")
    b = tf.Variable(tf.zeros([3]), name="b")
    logits = tf.matmul(x, W) + b
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=label,
                                                                         logits=logits))
    train = tf.train.GradientDescentOptimizer(FLAGS.learning_rate).minimize(loss)
    correct = tf.reduce_sum(tf.cast(tf.equal(tf.argmax(logits, 1), label), tf.int32))
    batch_tags = tf.reduce_sum(tags)

    def epoch(sess, fetches):
        """The results of running ``fetches`` over one pass of the file."""
        sess.run(iterator.initializer)
        out = []
        try:
            while True:
                out.append(sess.run(fetches))
        except tf.errors.OutOfRangeError:
            return out

    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        print("tags", sum(epoch(sess, batch_tags)))
        step = 0
        for _ in range(FLAGS.epochs):
            for _, value in epoch(sess, [train, loss]):
                print("step", step, repr(float(value)))
                step += 1
        print("accuracy", sum(epoch(sess, correct)))

if __name__ == "__main__":
    tf.app.run()
