"""A TF1 program with a canned estimator on feature columns: a DNNClassifier (one hidden layer
of 4 ReLUs, 3 classes) over a numeric feature of two values and a color from a vocabulary list
shown as an indicator column; trained 10 steps on batches of 8 from numpy_input_fn, evaluated
on the 24 examples, then predicting the first 4. Prints the evaluation and predictions as
JSON."""

import json
import sys

import numpy as np

import engine as tf

rng = np.random.RandomState(3)
X = rng.randn(24, 2).astype(np.float32)
COLOR = np.array(["red", "green", "blue"])[rng.randint(0, 3, 24)]
LABEL = (X[:, 0] > 0).astype(np.int64) + (COLOR == "blue")

columns = [tf.feature_column.numeric_column("x", shape=2),
           tf.feature_column.indicator_column(
               tf.feature_column.categorical_column_with_vocabulary_list(
                   "color", ["red", "green", "blue"]))]
classifier = tf.estimator.DNNClassifier(
    hidden_units=[4], feature_columns=columns, n_classes=3, model_dir=sys.argv[1],
    config=tf.estimator.RunConfig(tf_random_seed=7))
classifier.train(tf.estimator.inputs.numpy_input_fn(
    {"x": X, "color": COLOR}, LABEL, batch_size=8, num_epochs=None, shuffle=False), steps=10)
metrics = classifier.evaluate(tf.estimator.inputs.numpy_input_fn(
    {"x": X, "color": COLOR}, LABEL, batch_size=8, num_epochs=1, shuffle=False))
print(json.dumps({k: float(v) for k, v in metrics.items()}))
for p in classifier.predict(tf.estimator.inputs.numpy_input_fn(
        {"x": X[:4], "color": COLOR[:4]}, shuffle=False)):
    print(json.dumps({"probabilities": p["probabilities"].tolist(),
                      "class_ids": p["class_ids"].tolist(),
                      "classes": [c.decode() for c in p["classes"]]}))
