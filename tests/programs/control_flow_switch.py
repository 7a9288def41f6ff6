"""A TF1-style program with control flow: rows centred by ``tf.map_fn``, a hidden layer whose
activations go through a training switch (``tf.cond`` on a ``placeholder_with_default``: a fixed
inverted-dropout mask when training, the activations as they are when evaluating) and a
recurrent refinement of the output by ``tf.while_loop`` (three steps of z + 0.5 tanh(z U)),
trained by gradient descent through all three. Prints the training loss of each step, then the
evaluation loss and the number of refinement steps."""

import numpy as np

import engine as tf

rng = np.random.RandomState(7)
data = rng.normal(size=(16, 3))
target = np.sin(data.sum(axis=1))
mask = (rng.rand(16, 4) < 0.75) / 0.75

x = tf.placeholder(tf.float64, [None, 3], name="x")
y = tf.placeholder(tf.float64, [None], name="y")
is_training = tf.placeholder_with_default(False, [], name="is_training")
W1 = tf.Variable(rng.normal(size=(3, 4)) * 0.5)
b1 = tf.Variable(np.zeros(4))
W2 = tf.Variable(rng.normal(size=(4, 2)) * 0.5)
U = tf.Variable(rng.normal(size=(2, 2)) * 0.5)

centred = tf.map_fn(lambda row: row - tf.reduce_mean(row), x)
hidden = tf.tanh(tf.matmul(centred, W1) + b1)
hidden = tf.cond(is_training, lambda: hidden * mask, lambda: hidden)
z0 = tf.matmul(hidden, W2)
steps, z = tf.while_loop(lambda i, z: i < 3,
                         lambda i, z: (i + 1, z + 0.5 * tf.tanh(tf.matmul(z, U))), (0, z0))
loss = tf.reduce_mean(tf.square(z[:, 0] - y))
train = tf.train.GradientDescentOptimizer(0.2).minimize(loss)

with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for step in range(10):
        _, value = sess.run([train, loss], {x: data, y: target, is_training: True})
        print(f"loss {step} {value:.12f}")
    value, n = sess.run([loss, steps], {x: data, y: target})
    print(f"eval {value:.12f} {n}")
