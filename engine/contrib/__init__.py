"""The parts of ``tf.contrib`` that TF1 programs use: ``contrib.data``, ``contrib.eager`` (the
eager API), ``contrib.estimator.clip_gradients_by_norm``,
``contrib.opt.AdamWOptimizer``, ``contrib.rnn`` and ``contrib.layers``."""

from . import data, eager, estimator, layers, opt, rnn
