"""tf.train.Checkpoint / tfe.Checkpoint (object paths, optimizer slots, save counter),
tfe.Saver and tfe.metrics, against TF's documented behaviour and hand-worked values."""

from __future__ import annotations

import numpy as np
import pytest

import engine as tf
from engine.train.saver import list_variables

tfe = tf.contrib.eager


class Model:
    def __init__(self):
        self.dense = {"kernel": tfe.Variable([[1.0], [2.0]], name="kernel"),
                      "bias": tfe.Variable([0.0], name="bias")}

    def __call__(self, x):
        return tf.matmul(x, self.dense["kernel"]) + self.dense["bias"]


def _step(model, optimizer):
    x, y = tf.constant([[1.0, 2.0], [0.5, -1.0]]), tf.constant([[1.0], [0.0]])
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x) - y))
    variables = [model.dense["kernel"], model.dense["bias"]]
    optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables))


def test_adam_resumes_bit_for_bit_from_an_object_checkpoint(tmp_path):
    """Saved after one step and restored into new objects, two more steps give the bits of
    three uninterrupted steps: the Adam slots and beta powers come back (made at restore, before
    the first apply_gradients)."""
    with tf.eager_mode():
        model, optimizer = Model(), tf.train.AdamOptimizer(0.1)
        _step(model, optimizer)
        path = tf.train.Checkpoint(model=model, optimizer=optimizer).save(
            str(tmp_path / "ckpt"))
        _step(model, optimizer)
        _step(model, optimizer)
        want = model.dense["kernel"].numpy()

        fresh, fresh_optimizer = Model(), tf.train.AdamOptimizer(0.1)
        status = tf.train.Checkpoint(model=fresh, optimizer=fresh_optimizer).restore(
            tf.train.latest_checkpoint(str(tmp_path)))
        status.assert_consumed()
        _step(fresh, fresh_optimizer)
        _step(fresh, fresh_optimizer)
        np.testing.assert_array_equal(fresh.dense["kernel"].numpy(), want)
    assert path == str(tmp_path / "ckpt-1")
    assert [name for name, _ in list_variables(path)] == sorted([
        "model/dense/bias/.ATTRIBUTES/VARIABLE_VALUE",
        "model/dense/bias/.OPTIMIZER_SLOT/optimizer/m/.ATTRIBUTES/VARIABLE_VALUE",
        "model/dense/bias/.OPTIMIZER_SLOT/optimizer/v/.ATTRIBUTES/VARIABLE_VALUE",
        "model/dense/kernel/.ATTRIBUTES/VARIABLE_VALUE",
        "model/dense/kernel/.OPTIMIZER_SLOT/optimizer/m/.ATTRIBUTES/VARIABLE_VALUE",
        "model/dense/kernel/.OPTIMIZER_SLOT/optimizer/v/.ATTRIBUTES/VARIABLE_VALUE",
        "optimizer/beta1_power/.ATTRIBUTES/VARIABLE_VALUE",
        "optimizer/beta2_power/.ATTRIBUTES/VARIABLE_VALUE",
        "save_counter/.ATTRIBUTES/VARIABLE_VALUE"])


def test_save_counter_state_file_and_mismatches(tmp_path):
    with tf.eager_mode():
        v = tfe.Variable(1.0, name="v")
        checkpoint = tf.train.Checkpoint(v=v)
        first = checkpoint.save(str(tmp_path / "c"))
        v.assign(5.0)
        second = checkpoint.save(str(tmp_path / "c"))
        assert (first, second) == (str(tmp_path / "c-1"), str(tmp_path / "c-2"))
        assert tf.train.latest_checkpoint(str(tmp_path)) == second
        other = tf.train.Checkpoint(v=tfe.Variable(0.0, name="v"))
        other.restore(first).assert_consumed()
        assert float(other.v.numpy()) == 1.0 and other.save_counter == 1
        assert other.save(str(tmp_path / "c")) == str(tmp_path / "c-2")
        extra = tf.train.Checkpoint(v=tfe.Variable(0.0), w=tfe.Variable(0.0))
        with pytest.raises(AssertionError, match="not in the checkpoint: \\['w/"):
            extra.restore(first).assert_consumed()
        assert tf.train.Checkpoint(v=v).restore(None) is not None  # nothing to restore
    with pytest.raises(ValueError, match="trackable object"):
        tf.train.Checkpoint(v=3)


def test_graph_variables_through_a_session(tmp_path):
    with tf.Graph().as_default():
        w = tf.Variable([1.0, 2.0], name="w")
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            path = tf.train.Checkpoint(w=w).save(str(tmp_path / "g"), session=sess)
            sess.run(tf.assign(w, [0.0, 0.0]))
            tf.train.Checkpoint(w=w).restore(path).run_restore_ops(sess)
            assert sess.run(w).tolist() == [1.0, 2.0]


def test_tfe_saver(tmp_path):
    with tf.eager_mode():
        a, b = tfe.Variable([1.0, 2.0], name="a"), tfe.Variable(3, name="b")
        saver = tfe.Saver([a, b])
        prefix = saver.save(str(tmp_path / "model"), global_step=7)
        a.assign([0.0, 0.0])
        b.assign(0)
        saver.restore(prefix)
        assert a.numpy().tolist() == [1.0, 2.0] and int(b.numpy()) == 3
    assert prefix == str(tmp_path / "model-7")
    assert tf.train.latest_checkpoint(str(tmp_path)) == prefix
    # keyed by the variables' names (eager names are made unique in the process: a, a_1...)
    assert dict(list_variables(prefix)) == {a.op.name: [2], b.op.name: []}


def test_tfe_metrics_by_hand(tmp_path):
    with tf.eager_mode():
        mean = tfe.metrics.Mean("loss")
        assert np.isnan(mean.result().numpy())  # nothing yet: 0 / 0, as TF
        mean([1.0, 2.0])
        mean(6.0, weights=2.0)
        assert mean.result().numpy() == (1 + 2 + 12) / 4 and mean.result().dtype == tf.float64
        accuracy = tfe.metrics.Accuracy()
        accuracy([1, 2, 3], [1, 0, 3])
        accuracy(tf.constant([0]), tf.constant([0], tf.int64))
        assert accuracy.result().numpy() == 3 / 4
        path = tf.train.Checkpoint(metric=accuracy).save(str(tmp_path / "m"))
        accuracy.init_variables()
        assert np.isnan(accuracy.result().numpy())
        tf.train.Checkpoint(metric=accuracy).restore(path).assert_consumed()
        assert accuracy.result().numpy() == 3 / 4
    with tf.Graph().as_default(), pytest.raises(RuntimeError, match="eager execution"):
        tfe.metrics.Mean()
