"""A TF1 program training with tf.train.MonitoredTrainingSession: a linear model y = 3x - 1 on
mini-batches picked by the global step, momentum SGD, a StopAtStepHook, a NanTensorHook, a
LoggingTensorHook and a hook of its own printing each step's loss, checkpoints every 4 steps in
--checkpoint_dir. Run it again with a larger --last_step and it continues from its checkpoint
(the momentum slots included)."""

import numpy as np

import engine as tf

flags = tf.app.flags
flags.DEFINE_string("checkpoint_dir", "/tmp/monitored_training", "checkpoints and events")
flags.DEFINE_integer("last_step", 10, "train until this global step")
FLAGS = flags.FLAGS

XS = np.linspace(-1, 1, 16, dtype=np.float32).reshape(-1, 1)
YS = 3 * XS - 1


class PrintLoss(tf.train.SessionRunHook):
    """Prints "step <global step after the update> loss <loss before it>"."""

    def __init__(self, loss):
        self._loss = loss

    def after_create_session(self, session, coord):
        self._step = session.run(tf.train.get_global_step())

    def before_run(self, run_context):
        return tf.train.SessionRunArgs(self._loss)

    def after_run(self, run_context, run_values):
        self._step += 1
        print("step", self._step, "loss", repr(float(run_values.results)))


def main(argv):
    x = tf.placeholder(tf.float32, [None, 1], name="x")
    y = tf.placeholder(tf.float32, [None, 1], name="y")
    w = tf.Variable([[0.0]], name="w")
    b = tf.Variable([0.0], name="b")
    loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y))
    step = tf.train.get_or_create_global_step()
    train = tf.train.MomentumOptimizer(0.1, 0.9).minimize(loss, global_step=step)
    tf.summary.scalar("loss", loss)
    hooks = [tf.train.StopAtStepHook(last_step=FLAGS.last_step), tf.train.NanTensorHook(loss),
             tf.train.LoggingTensorHook({"loss": loss}, every_n_iter=5), PrintLoss(loss)]
    with tf.train.MonitoredTrainingSession(checkpoint_dir=FLAGS.checkpoint_dir, hooks=hooks,
                                           save_checkpoint_steps=4,
                                           save_summaries_steps=2) as sess:
        while not sess.should_stop():
            i = sess.run_step_fn(lambda ctx: ctx.session.run(step)) % 4
            sess.run(train, {x: XS[4 * i:4 * i + 4], y: YS[4 * i:4 * i + 4]})
    print("checkpoint", tf.train.latest_checkpoint(FLAGS.checkpoint_dir))


if __name__ == "__main__":
    tf.app.run()
