"""Sequence classification with an LSTM as TF1 tutorials write it (aymericdamien's
recurrent_network.py: ``tf.unstack`` over time, ``tf.contrib.rnn.BasicLSTMCell`` and
``static_rnn``, a softmax layer on the last output, plain gradient descent), on synthetic
sequences whose class is the feature that is largest at the last quarter of the sequence.
The initial and the trained variables are saved with a Saver (``model.ckpt-0`` and
``model.ckpt-<steps>`` under --logdir); each step prints its loss and batch accuracy."""

import os

import numpy as np

import engine as tf
from engine.contrib import rnn

flags = tf.app.flags
flags.DEFINE_integer("steps", 60, "training steps")
flags.DEFINE_string("logdir", "/tmp/rnn_classifier", "where the checkpoints go")
FLAGS = flags.FLAGS

learning_rate = 0.5
batch_size = 32
num_input, timesteps, num_hidden, num_classes = 3, 8, 10, 3


def sequences(n=512, seed=0):
    rng = np.random.RandomState(seed)
    x = rng.randn(n, timesteps, num_input).astype(np.float32) * 0.5
    labels = rng.randint(0, num_classes, n)
    x[np.arange(n), -timesteps // 4:, labels] += 1.0
    return x, np.eye(num_classes, dtype=np.float32)[labels]


def main(_):
    data_x, data_y = sequences()
    tf.set_random_seed(3)
    X = tf.placeholder("float", [None, timesteps, num_input])
    Y = tf.placeholder("float", [None, num_classes])
    weights = {"out": tf.Variable(tf.random_normal([num_hidden, num_classes]), name="w_out")}
    biases = {"out": tf.Variable(tf.random_normal([num_classes]), name="b_out")}

    def RNN(x, weights, biases):
        x = tf.unstack(x, timesteps, 1)
        lstm_cell = rnn.BasicLSTMCell(num_hidden, forget_bias=1.0)
        outputs, states = rnn.static_rnn(lstm_cell, x, dtype=tf.float32)
        return tf.matmul(outputs[-1], weights["out"]) + biases["out"]

    logits = RNN(X, weights, biases)
    prediction = tf.nn.softmax(logits)
    loss_op = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(logits=logits, labels=Y))
    optimizer = tf.train.GradientDescentOptimizer(learning_rate=learning_rate)
    train_op = optimizer.minimize(loss_op)
    correct_pred = tf.equal(tf.argmax(prediction, 1), tf.argmax(Y, 1))
    accuracy = tf.reduce_mean(tf.cast(correct_pred, tf.float32))
    saver = tf.train.Saver(max_to_keep=None)

    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        saver.save(sess, os.path.join(FLAGS.logdir, "model.ckpt"), global_step=0)
        for step in range(1, FLAGS.steps + 1):
            start = ((step - 1) * batch_size) % len(data_x)
            batch_x, batch_y = data_x[start:start + batch_size], data_y[start:start + batch_size]
            loss, acc = sess.run([loss_op, accuracy], feed_dict={X: batch_x, Y: batch_y})
            sess.run(train_op, feed_dict={X: batch_x, Y: batch_y})
            print(f"Step {step}, Minibatch Loss= {loss:.8g}, Training Accuracy= {acc:.3f}")
        saver.save(sess, os.path.join(FLAGS.logdir, "model.ckpt"), global_step=FLAGS.steps)
        print("Testing Accuracy:", sess.run(accuracy, feed_dict={X: data_x, Y: data_y}))


if __name__ == "__main__":
    tf.app.run()
