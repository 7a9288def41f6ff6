"""A TF1 program of two things the catalogue's tutorials stopped at:

- tf.estimator.BoostedTreesRegressor on bucketized feature columns (the cookbook's random-forest
  tutorial's kind), on the five examples TF's own estimator tests use: one tree of depth 5,
  trained through numpy_input_fn until the estimator stops by itself; prints the predictions
  and the evaluation's average loss;
- an in-process cluster (the cookbook's "parallelizing" tutorial's kind): two tf.train.Server
  tasks of one job, the data on one task, a linear regression's gradient steps on the other,
  run by a session on a server's target; prints the loss after each step."""

import json
import sys
import tempfile

import numpy as np

import engine as tf

features = np.array([[12.5, 1.0, -2.001, -2.0001, -1.999],
                     [2.0, -3.0, 0.5, 0.0, 0.4995],
                     [3.0, 20.0, 50.0, -100.0, 102.75]], np.float32)
feature_dict = {f"f_{i}": features[i] for i in range(3)}
targets = np.array([[1.5], [0.3], [0.2], [2.0], [5.0]], np.float32)
columns = [tf.feature_column.bucketized_column(tf.feature_column.numeric_column(f"f_{i}"),
                                               [-2.0, 0.5, 12.0]) for i in range(3)]
model_dir = sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp()
regressor = tf.estimator.BoostedTreesRegressor(columns, n_batches_per_layer=1, n_trees=1,
                                               max_depth=5, model_dir=model_dir)
train_fn = tf.estimator.inputs.numpy_input_fn(feature_dict, targets, batch_size=5,
                                              num_epochs=None, shuffle=False)
regressor.train(train_fn, steps=100)  # stops after 5 steps: the tree is finished
predict_fn = tf.estimator.inputs.numpy_input_fn(feature_dict, batch_size=5, num_epochs=1,
                                                shuffle=False)
predictions = [float(p["predictions"][0]) for p in regressor.predict(predict_fn)]
eval_fn = tf.estimator.inputs.numpy_input_fn(feature_dict, targets, batch_size=5,
                                             num_epochs=1, shuffle=False)
loss = regressor.evaluate(eval_fn)["average_loss"]
print(json.dumps({"predictions": predictions, "average_loss": float(loss),
                  "global_step": int(regressor.get_variable_value("global_step"))}))

tf.reset_default_graph()
cluster = tf.train.ClusterSpec({"local": ["localhost:2322", "localhost:2323"]})
servers = [tf.train.Server(cluster, job_name="local", task_index=i) for i in range(2)]
with tf.device("/job:local/task:0"):
    x = tf.constant([[1.0], [2.0], [3.0], [4.0]])
    y = tf.constant([[3.0], [5.0], [7.0], [9.0]])
with tf.device("/job:local/task:1"):
    w = tf.Variable([[0.0]])
    b = tf.Variable([0.0])
    loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y))
    train = tf.train.GradientDescentOptimizer(0.05).minimize(loss)
with tf.Session(servers[1].target) as sess:
    sess.run(tf.global_variables_initializer())
    for step in range(5):
        _, value = sess.run([train, loss])
        print(json.dumps({"step": step, "loss": float(value)}))
