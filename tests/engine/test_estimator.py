"""tf.estimator: train / evaluate / predict of a model_fn against a numpy re-implementation of
the same SGD over the same batches, checkpoints in model_dir (resume, max_steps), the
numpy_input_fn stream (TF's documented example) and the spec's checks."""

import os

import numpy as np
import pytest

import engine as tf

rng = np.random.default_rng(0)
X = rng.normal(size=(10, 3))
Y = X @ np.array([[1.0], [-2.0], [0.5]]) + 0.3
LR = 0.1
LR_APPLIED = float(np.float32(LR))  # TF casts the float32 learning-rate tensor to float64


def model_fn(features, labels, mode, params):
    W = tf.get_variable("W", [3, 1], tf.float64, initializer=tf.zeros_initializer())
    b = tf.get_variable("b", [1], tf.float64, initializer=tf.zeros_initializer())
    pred = tf.matmul(features["x"], W) + b
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(mode, predictions={"y": pred, "twice": 2.0 * pred})
    loss = tf.reduce_mean(tf.square(pred - labels))
    train_op = tf.train.GradientDescentOptimizer(params["lr"]).minimize(
        loss, global_step=tf.train.get_global_step())
    return tf.estimator.EstimatorSpec(
        mode, loss=loss, train_op=train_op,
        eval_metric_ops={"mae": tf.metrics.mean(tf.abs(pred - labels))})


def batches(batch_size, epochs, x=X, y=Y):
    """The stream numpy_input_fn(shuffle=False) gives: rows in order, batches across epochs."""
    xs, ys = np.concatenate([x] * epochs), np.concatenate([y] * epochs)
    return [(xs[i:i + batch_size], ys[i:i + batch_size]) for i in range(0, len(xs), batch_size)]


def sgd(stream, steps):
    """Plain SGD on mean squared error, as GradientDescentOptimizer computes it."""
    W, b = np.zeros((3, 1)), np.zeros(1)
    for x, y in stream[:steps]:
        err = x @ W + b - y
        W, b = W - LR_APPLIED * 2 * x.T @ err / err.size, b - LR_APPLIED * 2 * err.mean(0)
    return W, b


def estimator(tmp_path, name="model", **config):
    return tf.estimator.Estimator(model_fn, model_dir=str(tmp_path / name), params={"lr": LR},
                                  config=tf.estimator.RunConfig(**config))


def train_input(batch_size=4, epochs=None):
    return tf.estimator.inputs.numpy_input_fn({"x": X}, Y, batch_size=batch_size,
                                              num_epochs=epochs, shuffle=False)


def test_train_evaluate_predict_against_numpy(tmp_path):
    est = estimator(tmp_path)
    assert est.train(train_input(), steps=7) is est
    W, b = sgd(batches(4, 3), 7)
    np.testing.assert_allclose(est.get_variable_value("W"), W, rtol=1e-12)
    np.testing.assert_allclose(est.get_variable_value("b"), b, rtol=1e-12)
    assert est.get_variable_value("global_step") == 7
    assert sorted(est.get_variable_names()) == ["W", "b", "global_step"]

    results = est.evaluate(train_input(batch_size=4, epochs=1))
    errs = [x @ W + b - y for x, y in batches(4, 1)]
    # the loss is the mean of the batches' losses (tf.metrics.mean of a scalar per batch)
    assert results["global_step"] == 7
    np.testing.assert_allclose(results["loss"], np.mean([np.mean(e ** 2) for e in errs]),
                               rtol=1e-6)
    np.testing.assert_allclose(results["mae"], np.mean(np.abs(np.concatenate(errs))), rtol=1e-6)
    assert est.evaluate(train_input(batch_size=4, epochs=None), steps=2)["loss"] == \
        pytest.approx(np.mean([np.mean(e ** 2) for e in errs[:2]]), rel=1e-6)

    predict_fn = tf.estimator.inputs.numpy_input_fn({"x": X[:5]}, batch_size=2, shuffle=False)
    rows = list(est.predict(predict_fn))
    assert len(rows) == 5 and sorted(rows[0]) == ["twice", "y"]
    np.testing.assert_allclose([r["y"] for r in rows], X[:5] @ W + b, rtol=1e-12)
    only = list(est.predict(predict_fn, predict_keys=["twice"], yield_single_examples=False))
    assert [sorted(o) for o in only] == [["twice"]] * 3 and [len(o["twice"]) for o in only] == [
        2, 2, 1]


def test_resuming_from_the_checkpoint_equals_one_run(tmp_path):
    resumed = estimator(tmp_path, "a")
    resumed.train(train_input(), steps=4).train(train_input(), steps=3)
    whole = estimator(tmp_path, "b").train(train_input(), steps=7)
    # the second train restarts the input (a new graph) but continues from model.ckpt-4
    W, b = sgd(batches(4, 2), 4)
    W2, b2 = W.copy(), b.copy()
    for x, y in batches(4, 2)[:3]:
        err = x @ W2 + b2 - y
        W2, b2 = W2 - LR_APPLIED * 2 * x.T @ err / err.size, b2 - LR_APPLIED * 2 * err.mean(0)
    np.testing.assert_allclose(resumed.get_variable_value("W"), W2, rtol=1e-12)
    assert resumed.get_variable_value("global_step") == whole.get_variable_value(
        "global_step") == 7
    assert os.path.basename(resumed.latest_checkpoint()) == "model.ckpt-7"


def test_max_steps_checkpoints_and_the_end_of_the_input(tmp_path):
    est = estimator(tmp_path, save_checkpoints_steps=2, keep_checkpoint_max=2)
    est.train(train_input(), max_steps=5)
    est.train(train_input(), max_steps=5)  # reached already: nothing runs
    assert est.get_variable_value("global_step") == 5
    files = sorted(f for f in os.listdir(est.model_dir) if f.endswith(".index"))
    assert files == ["model.ckpt-4.index", "model.ckpt-5.index"]  # 0, 2 deleted (max 2)
    # one epoch of 10 rows in batches of 4: three steps, then OutOfRangeError ends training
    est.train(train_input(epochs=1), steps=100)
    assert est.get_variable_value("global_step") == 8
    with pytest.raises(ValueError, match="both steps and max_steps"):
        est.train(train_input(), steps=1, max_steps=3)


def test_input_fn_returning_a_dataset_with_params(tmp_path):
    def input_fn(params):
        assert params == {"lr": LR}
        return tf.data.Dataset.from_tensor_slices(({"x": X}, Y)).repeat().batch(4)

    est = estimator(tmp_path)
    est.train(input_fn, steps=5)
    np.testing.assert_allclose(est.get_variable_value("W"), sgd(batches(4, 2), 5)[0],
                               rtol=1e-12)


def test_hooks_see_each_step_and_may_stop(tmp_path):
    class Counter(tf.train.SessionRunHook):
        def __init__(self):
            self.losses = []

        def before_run(self, run_context):
            return tf.train.SessionRunArgs(tf.get_default_graph().get_tensor_by_name("Mean:0"))

        def after_run(self, run_context, run_values):
            self.losses.append(run_values.results)
            if len(self.losses) == 3:
                run_context.request_stop()

    hook = Counter()
    est = estimator(tmp_path)
    est.train(train_input(), steps=10, hooks=[hook])
    assert est.get_variable_value("global_step") == 3
    x, y = batches(4, 1)[0]
    assert hook.losses[0] == pytest.approx(np.mean(y ** 2))


def test_nan_loss_stops_training(tmp_path):
    x = X.copy()
    x[0, 0] = np.nan
    est = estimator(tmp_path)
    with pytest.raises(tf.estimator.NanLossDuringTrainingError, match="NaN loss"):
        est.train(tf.estimator.inputs.numpy_input_fn({"x": x}, Y, batch_size=4, shuffle=False),
                  steps=3)


def test_seeded_config_gives_the_same_initial_values(tmp_path):
    def random_model(features, labels, mode):
        w = tf.get_variable("w", [4], initializer=tf.random_normal_initializer())
        loss = tf.reduce_sum(w) * 0.0 + tf.reduce_mean(features)
        return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=tf.assign_add(
            tf.train.get_global_step(), 1))

    def values(name, seed):
        est = tf.estimator.Estimator(random_model, str(tmp_path / name),
                                     config=tf.estimator.RunConfig(tf_random_seed=seed))
        est.train(lambda: tf.data.Dataset.from_tensors(np.zeros(2, np.float32)), steps=1)
        return est.get_variable_value("w")

    np.testing.assert_array_equal(values("a", 3), values("b", 3))
    assert not np.array_equal(values("c", 3), values("d", 4))


def test_errors_name_what_is_wrong(tmp_path):
    est = estimator(tmp_path)
    with pytest.raises(ValueError, match="Could not find trained model"):
        est.evaluate(train_input(epochs=1))
    with pytest.raises(ValueError, match="Missing train_op"):
        tf.estimator.EstimatorSpec(tf.estimator.ModeKeys.TRAIN, loss=tf.constant(1.0))
    with pytest.raises(ValueError, match="Missing predictions"):
        tf.estimator.EstimatorSpec(tf.estimator.ModeKeys.PREDICT)
    with pytest.raises(ValueError, match="both save_checkpoints_secs and save_checkpoints_steps"):
        tf.estimator.RunConfig(save_checkpoints_steps=1, save_checkpoints_secs=1)
    with pytest.raises(ValueError, match="params"):
        tf.estimator.Estimator(lambda features, labels, mode: None, params={"a": 1})
    with pytest.raises(ValueError, match="shuffle"):
        tf.estimator.inputs.numpy_input_fn({"x": X}, Y)
    with pytest.raises(ValueError, match="mismatched"):
        tf.estimator.inputs.numpy_input_fn({"x": X}, Y[:3], shuffle=False)


def test_numpy_input_fn_documented_example():
    age = np.arange(4) * 1.0
    height = np.arange(32, 36)
    x = {"age": age, "height": height}
    y = np.arange(-32, -28)
    with tf.Graph().as_default(), tf.Session() as session:
        input_fn = tf.estimator.inputs.numpy_input_fn(x, y, batch_size=2, shuffle=False,
                                                      num_epochs=1)
        features, target = input_fn()
        assert features["age"].dtype == tf.float64 and target.dtype == tf.int64
        first = session.run([features, target])
        second = session.run([features, target])
        assert first[0]["age"].tolist() == [0.0, 1.0] and first[0]["height"].tolist() == [32, 33]
        assert first[1].tolist() == [-32, -31]
        assert second[0]["height"].tolist() == [34, 35] and second[1].tolist() == [-30, -29]
        with pytest.raises(tf.errors.OutOfRangeError):
            session.run([features, target])


def test_numpy_input_fn_shuffles_each_epoch_with_the_graph_seed():
    def stream(seed):
        with tf.Graph().as_default():
            tf.set_random_seed(seed)
            y = tf.estimator.inputs.numpy_input_fn(
                np.arange(10.0), np.arange(10), batch_size=5, num_epochs=2, shuffle=True)()[1]
            with tf.Session() as sess:
                return np.concatenate([sess.run(y) for _ in range(4)]).tolist()

    first = stream(1)
    assert sorted(first[:10]) == sorted(first[10:]) == list(range(10))
    assert first[:10] != first[10:] and first == stream(1) and first != stream(2)


def test_train_and_evaluate_evaluates_each_new_checkpoint(tmp_path):
    class Count(tf.train.SessionRunHook):
        evaluations = 0

        def begin(self):
            Count.evaluations += 1

    est = estimator(tmp_path, save_checkpoints_steps=5)
    result, exports = tf.estimator.train_and_evaluate(
        est, tf.estimator.TrainSpec(train_input(), max_steps=12),
        tf.estimator.EvalSpec(train_input(epochs=1), steps=None, hooks=[Count()],
                              throttle_secs=0))
    assert exports == [] and result["global_step"] == 12
    assert Count.evaluations == 3  # checkpoints 5, 10 and 12 (not 0, where training started)
    W, b = sgd(batches(4, 5), 12)
    errs = [x @ W + b - y for x, y in batches(4, 1)]
    assert result["loss"] == pytest.approx(np.mean([np.mean(e ** 2) for e in errs]), rel=1e-6)
    with pytest.raises(TypeError, match="train_spec"):
        tf.estimator.train_and_evaluate(est, None, None)


def test_warm_start_and_the_evaluation_events(tmp_path):
    from tests.engine.test_summary import read_records, scalars_in

    source = estimator(tmp_path, "source").train(train_input(), steps=4)
    warm = tf.estimator.Estimator(model_fn, model_dir=str(tmp_path / "warm"), params={"lr": LR},
                                  warm_start_from=source.model_dir)
    warm.train(train_input(), steps=1)
    W, b = source.get_variable_value("W"), source.get_variable_value("b")
    x, y = batches(4, 1)[0]
    err = x @ W + b - y
    np.testing.assert_allclose(warm.get_variable_value("W"), W - LR_APPLIED * 2 * x.T @ err / 4,
                               rtol=1e-12)
    assert warm.get_variable_value("global_step") == 1  # not warm-started: not trainable

    results = source.evaluate(train_input(epochs=1))
    (events,) = (tmp_path / "source" / "eval").glob("events.out.tfevents.*")
    got = {tag: (step, v) for step, tag, v in scalars_in(read_records(events))}
    assert got["loss"] == (4, pytest.approx(results["loss"], rel=1e-6))
    assert got["mae"] == (4, pytest.approx(results["mae"], rel=1e-6))


def test_tf_hooks_in_train(tmp_path):
    """TF's hooks run in Estimator.train: a CheckpointSaverHook finds the Estimator's saver in
    the SAVERS collection (as TF's scaffold puts it there) and StopAtStepHook stops."""
    est = estimator(tmp_path)
    extra = tmp_path / "extra"
    est.train(train_input(), hooks=[tf.train.CheckpointSaverHook(str(extra), save_steps=2),
                                    tf.train.StopAtStepHook(last_step=5)])
    assert est.get_variable_value("global_step") == 5
    # the hook saves at 0, 2, 4 and 5 with the Estimator's saver, whose max_to_keep=5 also
    # counts the Estimator's own saves (one saver, as in TF): the oldest went
    assert sorted(int(p.name.split("-")[1].split(".")[0]) for p in extra.glob("*.index")) == [
        2, 4, 5]
    W, _ = sgd(batches(4, 3), 5)
    np.testing.assert_allclose(tf.train.load_variable(str(extra), "W"), W, rtol=1e-12)
