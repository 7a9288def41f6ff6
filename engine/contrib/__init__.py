"""The parts of ``tf.contrib`` that TF1 programs use: ``contrib.data``, ``contrib.eager`` (the
eager API), ``contrib.estimator.clip_gradients_by_norm``, ``contrib.opt.AdamWOptimizer``,
``contrib.rnn``, ``contrib.layers``, ``contrib.framework`` (``arg_scope``),
``contrib.seq2seq``, ``contrib.legacy_seq2seq``, ``contrib.slim`` (its layers and
``model_analyzer``), ``contrib.learn`` (``RunConfig``,
``preprocessing.VocabularyProcessor``), ``contrib.predictor`` (a SavedModel as a function), and
three libraries of models: ``contrib.factorization`` (k-means), ``contrib.tensor_forest`` (random
forests) and ``contrib.boosted_trees`` (gradient-boosted trees)."""

from . import (
    boosted_trees,
    data,
    eager,
    estimator,
    factorization,
    framework,
    layers,
    learn,
    legacy_seq2seq,
    opt,
    predictor,
    rnn,
    seq2seq,
    slim,
    tensor_forest,
)
