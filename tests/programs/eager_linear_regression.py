"""A TF 1.x eager-execution program (the tf.contrib.eager tutorials' shape) on synthetic data:
``tf.enable_eager_execution()``, ``tfe.Variable``s, a loss whose gradients
``tfe.implicit_value_and_gradients`` takes, a tf.data pipeline iterated in a Python for loop
(``tfe.Iterator``), and a TF1 optimizer's ``apply_gradients``.

Prints ``epoch E LOSS`` (the mean of the epoch's batch losses) and ``weights W0 W1 B``."""

import numpy as np

import engine as tf

tf.enable_eager_execution()
tfe = tf.contrib.eager

rng = np.random.RandomState(0)
features = rng.normal(size=(40, 2)).astype(np.float32)
targets = (features @ np.array([[3.0], [-1.5]], np.float32) + 0.5).astype(np.float32)

W = tfe.Variable(tf.zeros([2, 1]), name="weights")
b = tfe.Variable(0.0, name="bias")


def loss(x, y):
    return tf.reduce_mean(tf.square(tf.matmul(x, W) + b - y))


value_and_gradients = tfe.implicit_value_and_gradients(loss)
optimizer = tf.train.GradientDescentOptimizer(learning_rate=0.1)
dataset = tf.data.Dataset.from_tensor_slices((features, targets)).batch(10)

for epoch in range(5):
    losses = []
    for x, y in tfe.Iterator(dataset):
        value, grads_and_vars = value_and_gradients(x, y)
        optimizer.apply_gradients(grads_and_vars)
        losses.append(value.numpy())
    print(f"epoch {epoch} {np.mean(losses):.7f}")
print("weights", " ".join(f"{v:.7f}" for v in [*W.numpy().ravel(), b.numpy()]))
