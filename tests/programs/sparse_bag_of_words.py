"""A TF1-style bag-of-words classifier over padded id batches: the batch cropped to its longest
sequence with a tensor bound (ids[:, :max_len]), the words as a SparseTensor of (row, id)
entries, reordered, its counts made dense by sparse + dense add, a second feature group (each
sequence's last word) joined by sparse_concat, a retain that drops the padding id, lengths
from sparse_reduce_sum, the bias tiled and broadcast to the batch with tensor sizes, gradient
descent; prints the losses, then one example's probabilities picked with a scalar tensor
index."""

import numpy as np

import engine as tf

B, T, V, CLASSES = 6, 8, 10, 3
rng = np.random.RandomState(7)
lengths_np = np.array([3, 5, 2, 6, 4, 5], np.int32)
ids_np = rng.randint(1, V, (B, T)).astype(np.int32)
ids_np[np.arange(T)[None, :] >= lengths_np[:, None]] = 0  # padding id 0, two steps never used
labels_np = np.array([0, 1, 2, 1, 0, 2], np.int32)

ids = tf.placeholder(tf.int32, [None, None])
lengths = tf.placeholder(tf.int32, [None])
labels = tf.placeholder(tf.int32, [None])
pick = tf.placeholder(tf.int32, [])

cropped = ids[:, :tf.reduce_max(lengths)]
batch = tf.shape(cropped)[0]
rows = tf.tile(tf.range(batch)[:, None], tf.stack([1, tf.shape(cropped)[1]]))
entries = tf.stack([tf.reshape(rows, [-1]), tf.reshape(cropped, [-1])], axis=1)
dense_shape = tf.cast(tf.stack([batch, V]), tf.int64)
words = tf.SparseTensor(tf.cast(entries, tf.int64), tf.ones(tf.shape(entries)[:1]), dense_shape)
words = tf.sparse_retain(words, tf.not_equal(entries[:, 1], 0))  # the padding is no word
words = tf.sparse_reorder(tf.sparse_transpose(tf.sparse_transpose(words)))
last = tf.SparseTensor(
    tf.cast(tf.stack([tf.range(batch), tf.reduce_sum(tf.one_hot(lengths - 1, T, dtype=tf.int32)
                                                     * ids, axis=1)], axis=1), tf.int64),
    tf.ones(tf.shape(lengths)), dense_shape)
features = tf.sparse_concat(1, [words, last])             # [batch, 2 V]
counts = tf.sparse_add(tf.zeros(tf.stack([batch, 2 * V])), features)
seen = tf.sparse_reduce_sum(words, axis=1)                # each sequence's length

w = tf.Variable(np.zeros((2 * V, CLASSES), np.float32))
b = tf.Variable(np.array([0.1, -0.2, 0.05], np.float32))
logits = tf.matmul(counts, w) + tf.tile(b[None], tf.stack([batch, 1])) \
    + tf.broadcast_to(b * 0.5, tf.stack([batch, CLASSES]))
loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels,
                                                                     logits=logits))
train = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
probs = tf.nn.softmax(logits)[pick]

feed = {ids: ids_np, lengths: lengths_np, labels: labels_np, pick: 3}
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    print("seen", " ".join(str(int(n)) for n in sess.run(seen, feed)))
    print("cropped", sess.run(tf.shape(cropped), feed).tolist())
    for step in range(8):
        value, _ = sess.run([loss, train], feed)
        print(f"loss {step} {value:.6f}")
    print("probs", " ".join(f"{p:.6f}" for p in sess.run(probs, feed)))
