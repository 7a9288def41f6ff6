"""``tf.estimator``: ``Estimator`` with ``model_fn`` / ``EstimatorSpec``, ``RunConfig``,
``ModeKeys`` and ``inputs.numpy_input_fn``.

- ``model_fn``: ``ModeKeys`` and ``EstimatorSpec``;
- ``run_config``: ``RunConfig``;
- ``estimator``: ``Estimator`` (train, evaluate, predict; checkpoints through ``tf.train.Saver``);
- ``inputs``: ``numpy_input_fn`` on ``tf.data``;
- ``export``: what ``Estimator.export_savedmodel`` serves (receivers, outputs);
- ``training``: ``train_and_evaluate`` with ``TrainSpec`` and ``EvalSpec``;
- ``canned``: ``DNNClassifier``, ``DNNRegressor``, ``LinearClassifier``, ``LinearRegressor`` on
  feature columns, with the heads of ``head``;
- ``boosted_trees``: ``BoostedTreesClassifier``, ``BoostedTreesRegressor`` (TF's kernels in
  ``ops/boosted_trees``).
"""

import types as _types

from . import export  # noqa: F401  (tf.estimator.export)
from .boosted_trees import BoostedTreesClassifier, BoostedTreesRegressor  # noqa: F401
from .canned import DNNClassifier, DNNRegressor, LinearClassifier, LinearRegressor  # noqa: F401
from .estimator import Estimator, NanLossDuringTrainingError  # noqa: F401
from .inputs import numpy_input_fn
from .model_fn import EstimatorSpec, ModeKeys  # noqa: F401
from .run_config import RunConfig  # noqa: F401
from .training import EvalSpec, TrainSpec, train_and_evaluate  # noqa: F401

#: ``tf.estimator.inputs``
inputs = _types.SimpleNamespace(numpy_input_fn=numpy_input_fn)
