"""A small TF1-style CNN in the AlexNet manner on synthetic 8x8 images: augmentation with
tf.image (bilinear resize, central crop, mirrored copies, per-image standardization), a
convolution, local response normalization, max pooling, a separable and an atrous convolution,
softmax cross-entropy, plain gradient descent. Prints the loss of each step and the final
predictions' accuracy on the augmented batch."""

import numpy as np

import engine as tf

rng = np.random.RandomState(3)
images = rng.rand(12, 8, 8, 1).astype(np.float32)
labels = rng.randint(0, 3, 12)

x = tf.placeholder(tf.float32, [None, 8, 8, 1])
y = tf.placeholder(tf.int64, [None])
big = tf.image.resize_images(x, [12, 12])                    # bilinear, TF 1.x's sampling
crop = tf.image.central_crop(big, 0.75)                      # 12 -> 10 (start int(3 / 2) = 1)
both = tf.concat([crop, tf.image.flip_left_right(crop)], 0)  # mirrored copies
both_y = tf.concat([y, y], 0)
inputs = tf.image.per_image_standardization(both)

k1 = tf.Variable(rng.normal(0, 0.3, (3, 3, 1, 4)).astype(np.float32))
b1 = tf.Variable(np.zeros(4, np.float32))
h = tf.nn.relu(tf.nn.conv2d(inputs, k1, [1, 1, 1, 1], "SAME") + b1)
h = tf.nn.lrn(h, depth_radius=2, bias=1.0, alpha=0.1, beta=0.75)
h = tf.nn.max_pool(h, [1, 2, 2, 1], [1, 2, 2, 1], "VALID")  # 10 -> 5
dw = tf.Variable(rng.normal(0, 0.3, (2, 2, 4, 2)).astype(np.float32))
pw = tf.Variable(rng.normal(0, 0.3, (1, 1, 8, 6)).astype(np.float32))
h = tf.nn.relu(tf.nn.separable_conv2d(h, dw, pw, [1, 1, 1, 1], "SAME"))
k2 = tf.Variable(rng.normal(0, 0.3, (2, 2, 6, 4)).astype(np.float32))
h = tf.nn.atrous_conv2d(h, k2, rate=2, padding="VALID")      # 5 -> 3
flat = tf.reshape(h, [-1, 3 * 3 * 4])
w = tf.Variable(rng.normal(0, 0.3, (36, 3)).astype(np.float32))
logits = tf.matmul(flat, w)
loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=both_y,
                                                                     logits=logits))
train = tf.train.GradientDescentOptimizer(0.2).minimize(loss)
accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, 1), both_y), tf.float32))

with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for step in range(15):
        _, value = sess.run([train, loss], {x: images, y: labels})
        print(f"loss {step} {value:.6f}")
    print(f"accuracy {sess.run(accuracy, {x: images, y: labels}):.6f}")
