"""tf.train.Saver, the checkpoint state file, ExponentialMovingAverage and tf.metrics.

File names, state-file contents, the EMA's numbers and the metrics' values are TF's, checked
with tensorflow.compat.v1 (TF 2.21) on the same programs; the EMA's are also recomputed here
with TF's formula in numpy.
"""

from __future__ import annotations

import glob
import os

import numpy as np
import pytest

import engine as tf

pytestmark = pytest.mark.usefixtures("fresh_default_graph")


def _model():
    w = tf.Variable([[1.0, 2.0], [3.0, 4.0]], name="layer1/kernel")
    b = tf.Variable([0.5, -0.5], name="layer1/bias")
    step = tf.train.get_or_create_global_step()
    return w, b, step


def test_save_and_restore_round_trip_with_tfs_file_names(tmp_path):
    w, b, step = _model()
    saver = tf.train.Saver()
    prefix = str(tmp_path / "model.ckpt")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(tf.assign(step, 100))
        path = saver.save(sess, prefix, global_step=step)
        assert path == prefix + "-100"
        sess.run([tf.assign(w, tf.zeros([2, 2])), tf.assign(b, [9.0, 9.0])])
        saver.restore(sess, tf.train.latest_checkpoint(str(tmp_path)))
        np.testing.assert_array_equal(sess.run(w), [[1.0, 2.0], [3.0, 4.0]])
        np.testing.assert_array_equal(sess.run(b), [0.5, -0.5])
        assert sess.run(step) == 100
    assert sorted(os.listdir(tmp_path)) == ["checkpoint", "model.ckpt-100.data-00000-of-00001",
                                            "model.ckpt-100.index", "model.ckpt-100.meta"]
    assert (tmp_path / "checkpoint").read_text() == (
        f'model_checkpoint_path: "{prefix}-100"\n'
        f'all_model_checkpoint_paths: "{prefix}-100"\n')
    assert glob.glob(str(tmp_path / "*.index")) == [prefix + "-100.index"]
    assert tf.train.list_variables(str(tmp_path)) == [
        ("global_step", []), ("layer1/bias", [2]), ("layer1/kernel", [2, 2])]
    np.testing.assert_array_equal(tf.train.load_variable(path, "layer1/bias"), [0.5, -0.5])


def test_max_to_keep_deletes_the_oldest(tmp_path):
    _model()
    saver = tf.train.Saver(max_to_keep=2)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        paths = [saver.save(sess, str(tmp_path / "model.ckpt"), global_step=s)
                 for s in (100, 200, 300)]
    assert saver.last_checkpoints == paths[1:]
    assert sorted(os.listdir(tmp_path)) == [
        "checkpoint", "model.ckpt-200.data-00000-of-00001", "model.ckpt-200.index",
        "model.ckpt-200.meta", "model.ckpt-300.data-00000-of-00001", "model.ckpt-300.index",
        "model.ckpt-300.meta"]
    state = tf.train.get_checkpoint_state(str(tmp_path))
    assert state.model_checkpoint_path == paths[2]
    assert state.all_model_checkpoint_paths == paths[1:]


def test_relative_paths_are_kept_relative_to_the_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    os.mkdir("run")
    _model()
    saver = tf.train.Saver()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        saver.save(sess, "run/model.ckpt", global_step=7)
    assert (tmp_path / "run" / "checkpoint").read_text().startswith(
        'model_checkpoint_path: "model.ckpt-7"\n')
    assert tf.train.latest_checkpoint("run") == os.path.join("run", "model.ckpt-7")


def test_state_file_reading(tmp_path):
    assert tf.train.get_checkpoint_state(str(tmp_path)) is None
    assert tf.train.latest_checkpoint(str(tmp_path)) is None
    (tmp_path / "checkpoint").write_text(
        'model_checkpoint_path: "/abs/model.ckpt-3"\n'
        'all_model_checkpoint_paths: "model.ckpt-2"\n'
        'all_model_checkpoint_paths: "/abs/model.ckpt-3"\n')
    state = tf.train.get_checkpoint_state(str(tmp_path))
    assert state.model_checkpoint_path == "/abs/model.ckpt-3"
    assert state.all_model_checkpoint_paths == [str(tmp_path / "model.ckpt-2"),
                                                "/abs/model.ckpt-3"]
    assert tf.train.latest_checkpoint(str(tmp_path)) is None  # its files do not exist
    (tmp_path / "checkpoint").write_text("model_checkpoint_path: model.ckpt-3\n")
    with pytest.warns(UserWarning, match="line 1"):
        assert tf.train.get_checkpoint_state(str(tmp_path)) is None


def test_dict_var_list_and_restoring_into_another_graph(tmp_path):
    w, b, _ = _model()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        path = tf.train.Saver({"weights": w}).save(sess, str(tmp_path / "m"))
    tf.reset_default_graph()
    v = tf.Variable(tf.zeros([2, 2]), name="other")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        tf.train.Saver({"weights": v}).restore(sess, path)
        np.testing.assert_array_equal(sess.run(v), [[1.0, 2.0], [3.0, 4.0]])


def test_restore_checks_everything_before_changing_anything(tmp_path):
    w, b, step = _model()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        path = tf.train.Saver([w, b]).save(sess, str(tmp_path / "m"))
    tf.reset_default_graph()
    w2 = tf.Variable(tf.zeros([2, 2]), name="layer1/kernel")
    b3 = tf.Variable(tf.zeros([3]), name="layer1/bias")
    extra = tf.Variable(0.0, name="extra")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        with pytest.raises(tf.errors.NotFoundError, match="Key extra not found in checkpoint"):
            tf.train.Saver([w2, extra]).restore(sess, path)
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"layer1/bias.*\[3\].*\[2\]"):
            tf.train.Saver([w2, b3]).restore(sess, path)
        np.testing.assert_array_equal(sess.run(w2), np.zeros((2, 2)))  # untouched
        with pytest.raises(ValueError, match="not a valid checkpoint"):
            tf.train.Saver([w2]).restore(sess, str(tmp_path / "nothing"))
        with pytest.raises(ValueError, match="None"):
            tf.train.Saver([w2]).restore(sess, None)
        data = tmp_path / "m.data-00000-of-00001"
        raw = bytearray(data.read_bytes())
        raw[raw.find(np.float32([1.0, 2.0, 3.0, 4.0]).tobytes()) + 5] ^= 0xFF  # in the kernel
        data.write_bytes(bytes(raw))
        with pytest.raises(tf.errors.DataLossError, match="m.data-00000-of-00001"):
            tf.train.Saver([w2]).restore(sess, path)
        (tmp_path / "m.index").write_text("{not json")
        with pytest.raises(tf.errors.DataLossError, match=r"m\.index"):
            tf.train.Saver([w2]).restore(sess, path)


def test_saving_into_a_missing_directory_is_refused(tmp_path):
    _model()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        with pytest.raises(ValueError, match="Parent directory of .* doesn't exist"):
            tf.train.Saver().save(sess, str(tmp_path / "no" / "model.ckpt"))
    with pytest.raises(ValueError, match="No variables to save"):
        tf.train.Saver([])


def test_exponential_moving_average_matches_tf():
    w = tf.Variable(1.0, name="w")
    v = tf.Variable([0.0, 2.0], name="v")
    moved = tf.group(tf.assign(w, 3.0), tf.assign(v, [1.0, 1.0]))
    ema = tf.train.ExponentialMovingAverage(0.9, num_updates=tf.constant(3))
    with tf.control_dependencies([moved]):
        update = ema.apply([w, v])
    assert ema.average(w).name == "w/ExponentialMovingAverage:0"
    assert ema.average_name(v) == "v/ExponentialMovingAverage"
    assert ema.average(w) not in tf.trainable_variables()
    restore = ema.variables_to_restore()
    assert restore == {"w/ExponentialMovingAverage": w, "v/ExponentialMovingAverage": v}
    # TF's formula: decay = min(0.9, (1 + 3) / (10 + 3)); shadow -= (shadow - var) * (1 - decay)
    decay = np.float32(min(0.9, np.float32(4.0) / np.float32(13.0)))
    rate = np.float32(1.0) - decay
    shadow_w = np.float32(1.0)
    shadow_v = np.array([0.0, 2.0], np.float32)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(2):
            sess.run(update)
            shadow_w = shadow_w - (shadow_w - np.float32(3.0)) * rate
            shadow_v = shadow_v - (shadow_v - np.float32(1.0)) * rate
            np.testing.assert_allclose(sess.run(ema.average(w)), shadow_w, rtol=1e-6)
            np.testing.assert_allclose(sess.run(ema.average(v)), shadow_v, rtol=1e-6)
    np.testing.assert_allclose(shadow_w, 2.8106508, rtol=1e-6)  # TF's value after two updates


def test_metrics_accuracy_streams_over_batches():
    labels = tf.placeholder(tf.int64, [None])
    predictions = tf.placeholder(tf.int64, [None])
    acc, update = tf.metrics.accuracy(labels, predictions)
    assert [v.name for v in tf.local_variables()] == ["accuracy/total:0", "accuracy/count:0"]
    assert not tf.global_variables()
    assert (acc.name, update.name) == ("accuracy/value:0", "accuracy/update_op:0")
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        assert sess.run(acc) == 0.0  # nothing added yet: 0, not NaN
        assert sess.run(update, {labels: [1, 2, 3, 4], predictions: [1, 0, 3, 3]}) == 0.5
        assert sess.run(update, {labels: [5, 6], predictions: [5, 6]}) == pytest.approx(4 / 6)
        assert sess.run(acc) == pytest.approx(4 / 6)
        sess.run(tf.local_variables_initializer())
        assert sess.run(acc) == 0.0


def test_metrics_mean_with_weights():
    values = tf.constant([1.0, 2.0, 3.0])
    mean, update = tf.metrics.mean(values, weights=tf.constant([1.0, 0.0, 3.0]))
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        assert sess.run(update) == pytest.approx((1.0 + 9.0) / 4.0)


def test_moving_average_of_tensors_starts_at_zero_and_zero_debias_weights_the_seen_values():
    """Tensors' shadows start at zero; with zero_debias the shadow after t updates is TF's
    biased / (1 - decay^t) = sum_i (1 - d) d^(t-i) x_i / (1 - d^t): a constant input is
    tracked exactly from the first update. Variables are not debiased (TF: tensors only)."""
    x = tf.placeholder(tf.float32, [2])
    w = tf.Variable([4.0, 4.0], name="w")
    debiased = tf.train.ExponentialMovingAverage(0.8, zero_debias=True, name="deb")
    plain = tf.train.ExponentialMovingAverage(0.8)
    stat = x * 2.0
    updates = tf.group(debiased.apply([stat, w]), plain.apply([stat]))
    names = {v.op.name for v in tf.global_variables()}
    assert {"mul/deb", "mul/deb/biased", "mul/deb/local_step", "w/deb",
            "mul/ExponentialMovingAverage"} <= names
    assert tf.get_collection(tf.GraphKeys.MOVING_AVERAGE_VARIABLES) == [w]
    seen = []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for value in ([1.0, 2.0], [1.0, 2.0], [3.0, -1.0]):
            sess.run(updates, {x: value})
            seen.append(2 * np.array(value))
            t = len(seen)
            weights = np.array([0.2 * 0.8 ** (t - 1 - i) for i in range(t)])
            want = weights @ np.array(seen)
            np.testing.assert_allclose(sess.run(plain.average(stat)), want, rtol=1e-6)
            np.testing.assert_allclose(sess.run(debiased.average(stat)), want / (1 - 0.8 ** t),
                                       rtol=1e-6)
            if t < 3:
                np.testing.assert_allclose(sess.run(debiased.average(stat)), 2 * np.array(value),
                                           rtol=1e-6)
            np.testing.assert_allclose(sess.run(debiased.average(w)), [4.0, 4.0])
