"""A TF1 Estimator program (the tutorials' shape) on synthetic data: a model_fn with
tf.layers.dense logits, tf.losses.sparse_softmax_cross_entropy, tf.metrics.accuracy and an
EstimatorSpec per mode; numpy_input_fn for train (twice: the second call resumes from
model_dir's checkpoint, with a LoggingTensorHook), evaluate and predict; a RunConfig with
checkpoints every 10 steps.

Prints ``eval LOSS ACCURACY GLOBAL_STEP``, one ``predict CLASS P0 P1 P2`` line per example,
and ``checkpoints`` with the files model_dir keeps."""

import os

import numpy as np

import engine as tf

flags = tf.app.flags
flags.DEFINE_string("model_dir", None, "where the Estimator keeps its checkpoints")
flags.DEFINE_float("learning_rate", 0.5, "gradient descent step")
FLAGS = flags.FLAGS


def synthetic(rng, n):
    features = rng.normal(size=(n, 4)).astype(np.float32)
    labels = (np.argmax(features[:, :3], 1) + (features[:, 3] > 1.5)) % 3
    return features, labels.astype(np.int32)


def model_fn(features, labels, mode, params):
    logits = tf.layers.dense(features["x"], 3, kernel_initializer=tf.zeros_initializer(),
                             name="logits")
    classes = tf.argmax(logits, 1, name="classes")
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(mode, predictions={
            "class": classes, "probabilities": tf.nn.softmax(logits)})
    loss = tf.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
    if mode == tf.estimator.ModeKeys.EVAL:
        return tf.estimator.EstimatorSpec(mode, loss=loss, eval_metric_ops={
            "accuracy": tf.metrics.accuracy(labels=labels, predictions=classes)})
    optimizer = tf.train.GradientDescentOptimizer(params["learning_rate"])
    train_op = optimizer.minimize(loss, global_step=tf.train.get_global_step())
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def main(_):
    tf.logging.set_verbosity(tf.logging.INFO)
    rng = np.random.RandomState(0)
    train_x, train_y = synthetic(rng, 50)
    test_x, test_y = synthetic(rng, 30)

    classifier = tf.estimator.Estimator(
        model_fn=model_fn, model_dir=FLAGS.model_dir,
        params={"learning_rate": FLAGS.learning_rate},
        config=tf.estimator.RunConfig(save_checkpoints_steps=10, keep_checkpoint_max=3,
                                      tf_random_seed=1))
    train_input_fn = tf.estimator.inputs.numpy_input_fn(
        x={"x": train_x}, y=train_y, batch_size=20, num_epochs=None, shuffle=False)
    classifier.train(input_fn=train_input_fn, steps=30)
    logging_hook = tf.train.LoggingTensorHook(tensors={"classes": "classes"}, every_n_iter=10)
    classifier.train(input_fn=train_input_fn, steps=15, hooks=[logging_hook])

    eval_input_fn = tf.estimator.inputs.numpy_input_fn(
        x={"x": test_x}, y=test_y, batch_size=8, num_epochs=1, shuffle=False)
    results = classifier.evaluate(input_fn=eval_input_fn)
    print(f"eval {results['loss']:.7f} {results['accuracy']:.7f} {results['global_step']}")

    predict_input_fn = tf.estimator.inputs.numpy_input_fn(
        x={"x": test_x[:4]}, num_epochs=1, shuffle=False)
    for prediction in classifier.predict(input_fn=predict_input_fn):
        print("predict", prediction["class"],
              " ".join(f"{p:.7f}" for p in prediction["probabilities"]))
    print("checkpoints", " ".join(sorted(f for f in os.listdir(classifier.model_dir)
                                         if f.endswith(".index"))))


if __name__ == "__main__":
    tf.app.run()
