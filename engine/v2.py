"""``import engine.v2 as tf``: TF2 behaviour, eager execution by default.

The same API as ``import engine as tf`` (one op registry, the same gradient rules and
optimizers), but importing this module turns eager execution on for the process, as importing
TF2 does: ops compute at once, ``tf.GradientTape`` differentiates, ``tf.gradients`` refuses.
``with tf.Graph().as_default():`` still builds a graph, and ``tf.compat.v1`` is the TF1 API
(``tf.compat.v1.disable_eager_execution()`` goes back to graphs for the whole process).

A process that only imports ``engine`` keeps TF1's graph mode. Like TF's own switch, eager
execution here is a process-wide default, so a program uses one of the two import lines.

TF2 names added here: ``tf.function`` (runs the Python function eagerly: the same values as
TF's traced graph, without its tracing), ``tf.optimizers`` (``tf.keras.optimizers``),
``tf.random.set_seed`` / ``normal`` / ``uniform`` and ``tf.compat.v1`` / ``tf.compat.v2``.
"""

from __future__ import annotations

import sys
import types

import engine as _v1
from engine import *  # noqa: F403  (the whole TF1 API: TF2 keeps almost all of its names)
from engine.framework.eager import eager_function as _eager_function
from engine.framework.eager import enable_eager_execution as _enable_eager_execution
from engine.ops.initializers import set_random_seed as _set_random_seed

optimizers = _v1.keras.optimizers
random = types.SimpleNamespace(set_seed=_set_random_seed, normal=_v1.random_normal,
                               uniform=_v1.random_uniform)
compat = types.SimpleNamespace(v1=_v1, v2=sys.modules[__name__])


def function(func=None, input_signature=None, autograph=True, jit_compile=None,
             reduce_retracing=False, experimental_relax_shapes=None, **_unused):
    """``tf.function``: here the function runs eagerly, call by call (the values TF's traced
    graph computes; tracing, retracing and autograph are not emulated)."""
    return _eager_function(func)


_enable_eager_execution()
