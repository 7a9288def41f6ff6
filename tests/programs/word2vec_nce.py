"""Skip-gram word2vec trained with NCE, as TF1's word2vec tutorials write it, on a synthetic
corpus (synthetic_text.py, with the tutorials' generate_batch): words come in topics of 8, so
words of one topic should end up close. Negative samples come from the unigram distribution to
the power 0.75 (``fixed_unigram_candidate_sampler``, as tutorials/embedding/word2vec.py builds
it) and are fed to ``nce_loss`` as ``sampled_values``. Each step prints its loss, the sampled
ids and their expected counts; the end, the cosine similarities of a few words to the whole
vocabulary."""

import math

import numpy as np
from synthetic_text import VOCAB, batches, corpus

import engine as tf

flags = tf.app.flags
flags.DEFINE_integer("steps", 40, "training steps")
flags.DEFINE_integer("batch_size", 16, "pairs per step")
flags.DEFINE_float("learning_rate", 1.0, "SGD learning rate")
FLAGS = flags.FLAGS

EMBED, NUM_SAMPLED = 8, 6
VALID = [0, 1, 8, 9]


def initial_values(seed=2):
    rng = np.random.RandomState(seed)
    embeddings = rng.uniform(-1.0, 1.0, (VOCAB, EMBED)).astype(np.float32)
    nce_weights = (rng.randn(VOCAB, EMBED) / math.sqrt(EMBED)).astype(np.float32)
    return embeddings, nce_weights


def main(_):
    data = corpus()
    counts = np.bincount(data, minlength=VOCAB)
    init_embeddings, init_weights = initial_values()

    train_inputs = tf.placeholder(tf.int32, shape=[FLAGS.batch_size])
    train_labels = tf.placeholder(tf.int32, shape=[FLAGS.batch_size, 1])
    valid_dataset = tf.constant(VALID, dtype=tf.int32)

    with tf.device("/cpu:0"):
        embeddings = tf.Variable(init_embeddings)
        embed = tf.nn.embedding_lookup(embeddings, train_inputs)
        nce_weights = tf.Variable(init_weights)
        nce_biases = tf.Variable(tf.zeros([VOCAB]))

    sampled_values = tf.nn.fixed_unigram_candidate_sampler(
        true_classes=tf.cast(train_labels, tf.int64), num_true=1, num_sampled=NUM_SAMPLED,
        unique=True, range_max=VOCAB, distortion=0.75, unigrams=counts.tolist(), seed=3)
    loss = tf.reduce_mean(tf.nn.nce_loss(weights=nce_weights, biases=nce_biases,
                                         labels=train_labels, inputs=embed,
                                         num_sampled=NUM_SAMPLED, num_classes=VOCAB,
                                         sampled_values=sampled_values))
    optimizer = tf.train.GradientDescentOptimizer(FLAGS.learning_rate).minimize(loss)

    norm = tf.sqrt(tf.reduce_sum(tf.square(embeddings), 1, keepdims=True))
    normalized_embeddings = embeddings / norm
    valid_embeddings = tf.nn.embedding_lookup(normalized_embeddings, valid_dataset)
    similarity = tf.matmul(valid_embeddings, normalized_embeddings, transpose_b=True)

    with tf.Session() as session:
        tf.global_variables_initializer().run()
        feed_batches = batches(data, FLAGS.batch_size)
        for step in range(FLAGS.steps):
            batch_inputs, batch_labels = next(feed_batches)
            feed_dict = {train_inputs: batch_inputs, train_labels: batch_labels}
            _, loss_val, (sampled, _, counts) = session.run([optimizer, loss, sampled_values],
                                                            feed_dict=feed_dict)
            print(f"step {step} loss {loss_val:.7g} sampled {','.join(map(str, sampled))} "
                  f"counts {','.join(f'{c:.9g}' for c in counts)}")
        sim = similarity.eval()
        for i, word in enumerate(VALID):
            nearest = (-sim[i, :]).argsort()[1:4]
            print(f"nearest {word} {','.join(map(str, nearest))} "
                  f"{' '.join(f'{v:.6g}' for v in sim[i])}")


if __name__ == "__main__":
    tf.app.run()
