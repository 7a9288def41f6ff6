"""``tf.train``: optimizers with slots, learning-rate schedules, the global step, and the
gradient-processing stages the runner's pipelines are made of.

Registries for configs:

- ``OPTIMIZERS``: config name -> optimizer class (TF1 constructor arguments);
- ``SCHEDULES``: config name -> ``f(global_step, **params)`` (see ``schedules.py``);
- ``STAGES``: config name -> stage class (see ``stages.py``).

``optimizer_params(name)`` lists the keyword arguments an optimizer accepts.
"""

from __future__ import annotations

import inspect

from ..framework.example_protos import (  # noqa: F401  (tf.train.Example and its parts)
    BytesList,
    Example,
    Feature,
    FeatureList,
    FeatureLists,
    Features,
    FloatList,
    Int64List,
    SequenceExample,
)
from ..ops.queue_ops import limit_epochs  # noqa: F401
from ..runtime.server_lib import (  # noqa: F401  (TF's distributed API, one process)
    ClusterSpec,
    Server,
    replica_device_setter,
)
from . import queue_runner, slot_creator  # noqa: F401
from .adadelta import AdadeltaOptimizer
from .adagrad import AdagradDecayOptimizer, AdagradOptimizer
from .adam import AdamOptimizer, AdamWOptimizer, DecoupledWeightDecayExtension, LazyAdamOptimizer
from .basic_session_run_hooks import (  # noqa: F401
    CheckpointSaverHook,
    CheckpointSaverListener,
    FeedFnHook,
    FinalOpsHook,
    LoggingTensorHook,
    NanTensorHook,
    SecondOrStepTimer,
    StepCounterHook,
    StopAtStepHook,
    SummarySaverHook,
)
from .checkpoint_management import (
    CheckpointState,
    checkpoint_exists,
    get_checkpoint_state,
    latest_checkpoint,
    update_checkpoint_state,
)
from .coordinator import Coordinator  # noqa: F401
from .ftrl import FtrlOptimizer
from .global_step import (
    assert_global_step,
    create_global_step,
    get_global_step,
    get_or_create_global_step,
    global_step,
)
from .gradient_descent import GradientDescentOptimizer, MomentumOptimizer
from .input import (  # noqa: F401
    batch,
    batch_join,
    input_producer,
    range_input_producer,
    shuffle_batch,
    shuffle_batch_join,
    slice_input_producer,
    string_input_producer,
)
from .monitored_session import (  # noqa: F401
    ChiefSessionCreator,
    MonitoredSession,
    MonitoredTrainingSession,
    Scaffold,
    SingularMonitoredSession,
    WorkerSessionCreator,
)
from .moving_averages import ExponentialMovingAverage
from .object_checkpoint import Checkpoint  # noqa: F401
from .optimizer import Optimizer
from .queue_runner import QueueRunner, add_queue_runner, start_queue_runners  # noqa: F401
from .rmsprop import RMSPropOptimizer
from .saver import (
    Saver,
    export_meta_graph,
    import_meta_graph,
    list_variables,
    load_variable,
)
from .schedules import (
    SCHEDULES,
    cosine_decay,
    cosine_decay_restarts,
    exponential_decay,
    inverse_time_decay,
    linear_cosine_decay,
    linear_warmup,
    natural_exp_decay,
    piecewise_constant,
    piecewise_constant_decay,
    polynomial_decay,
)
from .session_run_hook import (  # noqa: F401
    NanLossDuringTrainingError,
    SessionRunArgs,
    SessionRunContext,
    SessionRunHook,
    SessionRunValues,
)
from .stages import STAGES, Pipeline, Stage, make_stage
from .supervisor import Supervisor  # noqa: F401

OPTIMIZERS = {
    "sgd": GradientDescentOptimizer,
    "gradient_descent": GradientDescentOptimizer,
    "momentum": MomentumOptimizer,
    "adagrad": AdagradOptimizer,
    "adagrad_decay": AdagradDecayOptimizer,
    "adam": AdamOptimizer,
    "adamw": AdamWOptimizer,
    "lazy_adam": LazyAdamOptimizer,
    "rmsprop": RMSPropOptimizer,
    "adadelta": AdadeltaOptimizer,
    "ftrl": FtrlOptimizer,
}
"""Config name -> optimizer class; construct with TF1's keyword arguments."""


def optimizer_params(name_or_class):
    """The keyword arguments an optimizer's constructor accepts (for "did you mean" messages)."""
    cls = OPTIMIZERS[name_or_class] if isinstance(name_or_class, str) else name_or_class
    return [p for p in inspect.signature(cls.__init__).parameters if p != "self"]
