"""Save and restore without the model's code, as TF1 tutorials do it: ``--mode=train`` builds
a small classifier (tf.layers, Adam, a global step), puts its inputs, logits and training op in
collections, trains --steps and saves; ``--mode=resume`` (another process, no model code)
rebuilds the graph with ``tf.train.import_meta_graph`` from the latest checkpoint's .meta file,
restores the variables, finds the tensors by name and through the collections, and trains
--steps more. Both print each step's loss and the logits of a probe batch at the end."""

import os

import numpy as np

import engine as tf

flags = tf.app.flags
flags.DEFINE_string("mode", "train", "train | resume")
flags.DEFINE_integer("steps", 20, "training steps")
flags.DEFINE_string("logdir", "/tmp/restore_meta_graph", "where the checkpoints go")
FLAGS = flags.FLAGS


def batch(step, size=16):
    rng = np.random.RandomState(step)
    x = rng.randn(size, 4).astype(np.float32)
    return x, (x[:, 0] + x[:, 1] * x[:, 2] > 0).astype(np.int64)


def build():
    x = tf.placeholder(tf.float32, [None, 4], name="x")
    y = tf.placeholder(tf.int64, [None], name="y")
    hidden = tf.layers.dense(x, 16, activation=tf.nn.relu, name="hidden")
    logits = tf.layers.dense(hidden, 2, name="logits")
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y,
                                                                         logits=logits),
                          name="loss")
    step = tf.train.get_or_create_global_step()
    train_op = tf.train.AdamOptimizer(0.01).minimize(loss, global_step=step)
    for name, item in (("inputs", x), ("inputs", y), ("logits", logits), ("train_op", train_op)):
        tf.add_to_collection(name, item)


def train_steps(sess, n):
    graph = tf.get_default_graph()
    x, y = tf.get_collection("inputs")
    loss = graph.get_tensor_by_name("loss:0")
    train_op = tf.get_collection("train_op")[0]
    step = tf.train.get_global_step()
    for _ in range(n):
        i = sess.run(step)
        bx, by = batch(int(i))
        _, value = sess.run([train_op, loss], {x: bx, y: by})
        print(f"step {i + 1} loss {float(value)!r}")


def main(_):
    os.makedirs(FLAGS.logdir, exist_ok=True)
    prefix = os.path.join(FLAGS.logdir, "model.ckpt")
    with tf.Session() as sess:
        if FLAGS.mode == "train":
            tf.set_random_seed(0)
            build()
            saver = tf.train.Saver()
            sess.run(tf.global_variables_initializer())
        else:
            latest = tf.train.latest_checkpoint(FLAGS.logdir)
            saver = tf.train.import_meta_graph(latest + ".meta")
            saver.restore(sess, latest)
        train_steps(sess, FLAGS.steps)
        saver.save(sess, prefix, global_step=tf.train.get_global_step())
        probe, _ = batch(10_000, size=3)
        x = tf.get_default_graph().get_tensor_by_name("x:0")
        print("probe", sess.run(tf.get_collection("logits")[0], {x: probe}).ravel().tolist())


if __name__ == "__main__":
    tf.app.run()
