"""A GAN as TF1 tutorials write it (aymericdamien's gan.py): a generator and a discriminator of
one hidden ReLU layer each, two Adam optimizers restricted by ``var_list``, both trained by one
``sess.run`` per step (both gradients from the same forward pass, then both updates), on
synthetic 16-pixel "images". Prints both losses of each step."""

import numpy as np

import engine as tf

flags = tf.app.flags
flags.DEFINE_integer("steps", 100, "training steps")
FLAGS = flags.FLAGS

IMAGE_DIM, NOISE_DIM, HIDDEN, BATCH, LEARNING_RATE = 16, 8, 12, 16, 0.002


def data(seed=0):
    """Real images: bright on one half, dark on the other, and noise."""
    rng = np.random.RandomState(seed)
    base = np.where(np.arange(IMAGE_DIM) < IMAGE_DIM // 2, 0.8, 0.2)
    return np.clip(base + 0.05 * rng.randn(512, IMAGE_DIM), 0, 1).astype(np.float32)


def noise(step, seed=1):
    return np.random.RandomState(seed + step).uniform(-1.0, 1.0, [BATCH, NOISE_DIM]) \
        .astype(np.float32)


def glorot(shape, rng):
    return (rng.randn(*shape) / np.sqrt(shape[0] / 2.0)).astype(np.float32)


def initial_weights(seed=2):
    rng = np.random.RandomState(seed)
    return {"gen_hidden1": glorot([NOISE_DIM, HIDDEN], rng),
            "gen_out": glorot([HIDDEN, IMAGE_DIM], rng),
            "disc_hidden1": glorot([IMAGE_DIM, HIDDEN], rng),
            "disc_out": glorot([HIDDEN, 1], rng)}


def main(_):
    images = data()
    weights = {k: tf.Variable(v) for k, v in initial_weights().items()}
    biases = {"gen_hidden1": tf.Variable(tf.zeros([HIDDEN])),
              "gen_out": tf.Variable(tf.zeros([IMAGE_DIM])),
              "disc_hidden1": tf.Variable(tf.zeros([HIDDEN])),
              "disc_out": tf.Variable(tf.zeros([1]))}

    def generator(x):
        hidden_layer = tf.nn.relu(tf.add(tf.matmul(x, weights["gen_hidden1"]),
                                         biases["gen_hidden1"]))
        return tf.nn.sigmoid(tf.add(tf.matmul(hidden_layer, weights["gen_out"]),
                                    biases["gen_out"]))

    def discriminator(x):
        hidden_layer = tf.nn.relu(tf.add(tf.matmul(x, weights["disc_hidden1"]),
                                         biases["disc_hidden1"]))
        return tf.nn.sigmoid(tf.add(tf.matmul(hidden_layer, weights["disc_out"]),
                                    biases["disc_out"]))

    gen_input = tf.placeholder(tf.float32, shape=[None, NOISE_DIM], name="input_noise")
    disc_input = tf.placeholder(tf.float32, shape=[None, IMAGE_DIM], name="disc_input")
    gen_sample = generator(gen_input)
    disc_real = discriminator(disc_input)
    disc_fake = discriminator(gen_sample)
    gen_loss = -tf.reduce_mean(tf.log(disc_fake))
    disc_loss = -tf.reduce_mean(tf.log(disc_real) + tf.log(1. - disc_fake))
    optimizer_gen = tf.train.AdamOptimizer(learning_rate=LEARNING_RATE)
    optimizer_disc = tf.train.AdamOptimizer(learning_rate=LEARNING_RATE)
    gen_vars = [weights["gen_hidden1"], weights["gen_out"], biases["gen_hidden1"],
                biases["gen_out"]]
    disc_vars = [weights["disc_hidden1"], weights["disc_out"], biases["disc_hidden1"],
                 biases["disc_out"]]
    train_gen = optimizer_gen.minimize(gen_loss, var_list=gen_vars)
    train_disc = optimizer_disc.minimize(disc_loss, var_list=disc_vars)

    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for i in range(FLAGS.steps):
            batch_x = images[(i * BATCH) % len(images):][:BATCH]
            feed_dict = {disc_input: batch_x, gen_input: noise(i)}
            _, _, gl, dl = sess.run([train_gen, train_disc, gen_loss, disc_loss],
                                    feed_dict=feed_dict)
            print(f"Step {i + 1}: Generator Loss: {gl:.8g}, Discriminator Loss: {dl:.8g}")
        sample = sess.run(gen_sample, feed_dict={gen_input: noise(10_000)})
        first, second = sample[:, :IMAGE_DIM // 2].mean(), sample[:, IMAGE_DIM // 2:].mean()
        print(f"sample mean first half {first:.6f} second half {second:.6f}")


if __name__ == "__main__":
    tf.app.run()
