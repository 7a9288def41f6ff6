"""A TF1-style sequence model over padded batches: embeddings of token ids, a position-wise
layer written with einsum, the padding masked with sequence_mask, the last real step of each
sequence picked with gather_nd, a masked mean by cumsum, the real steps' activations with
boolean_mask for an activity penalty, and Adam. Prints the loss of each step, then the final
per-sequence predictions."""

import numpy as np

import engine as tf

VOCAB, DIM, HIDDEN, CLASSES, T = 11, 4, 5, 3, 6
rng = np.random.RandomState(5)
lengths_np = np.array([6, 2, 4, 1, 5, 3], np.int32)
ids_np = rng.randint(1, VOCAB, (6, T)).astype(np.int32)
ids_np[np.arange(T)[None, :] >= lengths_np[:, None]] = 0  # padding id
labels_np = rng.randint(0, CLASSES, 6).astype(np.int32)

ids = tf.placeholder(tf.int32, [None, T])
lengths = tf.placeholder(tf.int32, [None])
labels = tf.placeholder(tf.int32, [None])
emb = tf.Variable(rng.normal(0, 0.5, (VOCAB, DIM)).astype(np.float32))
w = tf.Variable(rng.normal(0, 0.5, (DIM, HIDDEN)).astype(np.float32))
v = tf.Variable(rng.normal(0, 0.5, (2 * HIDDEN, CLASSES)).astype(np.float32))

x = tf.nn.embedding_lookup(emb, ids)                      # [B, T, DIM]
h = tf.tanh(tf.einsum("btd,dh->bth", x, w))               # [B, T, HIDDEN]
mask = tf.sequence_mask(lengths, T, dtype=tf.float32)     # [B, T]
batch = tf.range(tf.shape(ids)[0])
last = tf.gather_nd(h, tf.stack([batch, lengths - 1], axis=1))  # [B, HIDDEN]
running = tf.cumsum(h * mask[:, :, None], axis=1)         # running sums over the real steps
mean = tf.gather_nd(running, tf.stack([batch, lengths - 1], axis=1)) / \
    tf.cast(lengths, tf.float32)[:, None]
logits = tf.matmul(tf.concat([last, mean], 1), v)
real = tf.boolean_mask(h, tf.sequence_mask(lengths, T))   # [sum(lengths), HIDDEN]
penalty = 0.01 * tf.reduce_mean(tf.square(real))
loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
    labels=labels, logits=logits)) + penalty
train = tf.train.AdamOptimizer(0.05).minimize(loss)

feed = {ids: ids_np, lengths: lengths_np, labels: labels_np}
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    print(f"real steps {sess.run(tf.shape(real), feed)[0]}")
    for step in range(12):
        _, value = sess.run([train, loss], feed)
        print(f"loss {step} {value:.6f}")
    print("predictions " + " ".join(str(p) for p in sess.run(tf.argmax(logits, 1), feed)))
