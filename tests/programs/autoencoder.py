"""An autoencoder as TF1 tutorials write it (aymericdamien's autoencoder.py: two sigmoid
layers each way, RMSProp on the mean squared reconstruction error), on synthetic 8x8 "images"
made of a few prototypes; summaries of the loss and the code layer go to --logdir. Prints the
loss of each step."""

import numpy as np

import engine as tf

flags = tf.app.flags
flags.DEFINE_integer("steps", 30, "training steps")
flags.DEFINE_string("logdir", "", "where the summaries go (none if empty)")
FLAGS = flags.FLAGS

NUM_INPUT, HIDDEN_1, HIDDEN_2, BATCH = 64, 16, 8, 32


def images(seed=0):
    """256 images: one of four prototypes plus noise, in [0, 1]."""
    rng = np.random.RandomState(seed)
    prototypes = rng.rand(4, NUM_INPUT)
    return np.clip(prototypes[rng.randint(0, 4, 256)] + 0.1 * rng.randn(256, NUM_INPUT),
                   0, 1).astype(np.float32)


def initial_weights(seed=1):
    rng = np.random.RandomState(seed)
    sizes = {"encoder_h1": (NUM_INPUT, HIDDEN_1), "encoder_h2": (HIDDEN_1, HIDDEN_2),
             "decoder_h1": (HIDDEN_2, HIDDEN_1), "decoder_h2": (HIDDEN_1, NUM_INPUT)}
    return {k: (rng.randn(*s) * 0.3).astype(np.float32) for k, s in sizes.items()}


def main(_):
    data = images()
    init = initial_weights()
    X = tf.placeholder("float", [None, NUM_INPUT])
    weights = {k: tf.Variable(v, name=k) for k, v in init.items()}
    biases = {
        "encoder_b1": tf.Variable(tf.zeros([HIDDEN_1])),
        "encoder_b2": tf.Variable(tf.zeros([HIDDEN_2])),
        "decoder_b1": tf.Variable(tf.zeros([HIDDEN_1])),
        "decoder_b2": tf.Variable(tf.zeros([NUM_INPUT])),
    }

    def encoder(x):
        layer_1 = tf.nn.sigmoid(tf.add(tf.matmul(x, weights["encoder_h1"]),
                                       biases["encoder_b1"]))
        return tf.nn.sigmoid(tf.add(tf.matmul(layer_1, weights["encoder_h2"]),
                                    biases["encoder_b2"]))

    def decoder(x):
        layer_1 = tf.nn.sigmoid(tf.add(tf.matmul(x, weights["decoder_h1"]),
                                       biases["decoder_b1"]))
        return tf.nn.sigmoid(tf.add(tf.matmul(layer_1, weights["decoder_h2"]),
                                    biases["decoder_b2"]))

    encoder_op = encoder(X)
    decoder_op = decoder(encoder_op)
    y_pred, y_true = decoder_op, X
    loss = tf.reduce_mean(tf.pow(y_true - y_pred, 2))
    optimizer = tf.train.RMSPropOptimizer(0.01).minimize(loss)
    tf.summary.scalar("loss", loss)
    tf.summary.histogram("code", encoder_op)
    merged = tf.summary.merge_all()

    with tf.Session() as sess:
        writer = tf.summary.FileWriter(FLAGS.logdir, sess.graph) if FLAGS.logdir else None
        sess.run(tf.global_variables_initializer())
        for i in range(FLAGS.steps):
            batch_x = data[(i * BATCH) % len(data):][:BATCH]
            _, value, summary = sess.run([optimizer, loss, merged], feed_dict={X: batch_x})
            if writer:
                writer.add_summary(summary, i + 1)
            print(f"Step {i + 1}: Minibatch Loss: {value:.8g}")
        if writer:
            writer.close()


if __name__ == "__main__":
    tf.app.run()
