"""``tf.train.ExponentialMovingAverage``: shadow copies of variables that follow them.

``apply(var_list)`` makes, per variable ``W``, a non-trainable shadow ``W/ExponentialMovingAverage``
starting at W's initial value, and returns an op that moves each shadow toward its variable,
with TF's arithmetic::

    decay = min(decay, (1 + num_updates) / (10 + num_updates))   # only with num_updates
    shadow -= (shadow - W) * (1 - decay)

``var_list`` may hold tensors too (batch statistics, a loss): their shadows start at zero, and
with ``zero_debias=True`` (TF's ``_zero_debias``; only for tensors, as in TF) the shadow is the
Adam-style debiased average: a zero-started ``<shadow>/biased`` average and a
``<shadow>/local_step`` count t give ``shadow = biased / (1 - decay ** t)``.

``average(W)`` is the shadow, ``average_name(W)`` its checkpoint name, and
``variables_to_restore()`` the Saver dict that loads shadows into the variables (evaluation
with averaged weights).
"""

from __future__ import annotations

from ..framework.graph import GraphKeys, get_default_graph
from ..ops.core import convert_to_tensor, group
from ..ops.initializers import zeros_initializer
from ..ops.math import cast, minimum, pow_
from ..ops.variables import Variable, assign, assign_add, assign_sub
from .slot_creator import create_slot_with_initializer, create_zeros_slot


def _is_variable(x):
    return getattr(getattr(x, "op", None), "type", None) == "VariableV2"


def _zero_debias_state(shadow, value):
    """TF's ``biased`` and ``local_step`` variables of a zero-debiased shadow, beside it."""
    graph = shadow.graph
    with graph.as_default(), graph.control_dependencies(None), graph.name_scope(None):
        biased = Variable(zeros_initializer()(tuple(value.shape.as_list()), dtype=shadow.dtype),
                          name=f"{shadow.op.name}/biased", trainable=False)
        local_step = Variable(zeros_initializer()((), dtype=shadow.dtype),
                              name=f"{shadow.op.name}/local_step", trainable=False)
    return biased, local_step


def assign_moving_average(variable, value, decay, zero_debias=True, name=None):
    """TF's ``moving_averages.assign_moving_average``: ``variable -= (variable - value) * (1 -
    decay)``; with ``zero_debias`` (for a zero-started ``variable``) the average is kept in a
    ``biased`` variable beside it and ``variable`` is set to ``biased / (1 - decay ** t)`` at
    the t-th update."""
    with variable.graph.name_scope(name or "AssignMovingAvg"):
        one_minus = convert_to_tensor(1.0 - decay, preferred_dtype=variable.dtype, name="decay")
        if one_minus.dtype != variable.dtype:
            one_minus = cast(one_minus, variable.dtype)
        if not zero_debias:
            return assign_sub(variable, (variable - value) * one_minus)
        if value.shape.dims is None or None in value.shape.dims:
            raise ValueError(f"assign_moving_average(zero_debias=True): the value "
                             f"{getattr(value, 'name', value)} needs a fully known shape for its "
                             f"biased average, got {value.shape}")
        biased, local_step = _zero_debias_state(variable, value)
        update_biased = assign_sub(biased, (biased - value) * one_minus)
        update_local_step = assign_add(local_step, 1.0)
        # TF's form: the debias factor 1 - decay ** t from the ``1 - decay`` it was given
        bias_factor = 1.0 - pow_(1.0 - one_minus, update_local_step)
        return assign(variable, update_biased / bias_factor)


class ExponentialMovingAverage:
    def __init__(self, decay, num_updates=None, zero_debias=False,
                 name="ExponentialMovingAverage"):
        self._decay = decay
        self._zero_debias = zero_debias
        self._num_updates = num_updates
        self._name = name
        self._averages = {}

    @property
    def name(self):
        return self._name

    def apply(self, var_list=None):
        """Make the shadows of ``var_list`` (default: the trainable variables; tensors too) and
        return the op that updates them all."""
        graph = get_default_graph()
        if var_list is None:
            var_list = graph.get_collection(GraphKeys.TRAINABLE_VARIABLES)
        var_list = list(var_list)
        for var in var_list:
            if not var.dtype.is_floating:
                raise TypeError(f"The variables must be half, float, or double: {var.name}")
            if var in self._averages:
                raise ValueError(f"Moving average already computed for: {var.name}")
            if _is_variable(var):
                self._averages[var] = create_slot_with_initializer(
                    var, lambda shape, dtype, v=var: v.initialized_value(), var.shape, var.dtype,
                    self._name)
                graph.add_to_collection(GraphKeys.MOVING_AVERAGE_VARIABLES, var)
            else:
                self._averages[var] = create_zeros_slot(var, self._name)
        with graph.name_scope(self._name):
            decay = convert_to_tensor(self._decay, preferred_dtype="float32", name="decay")
            if self._num_updates is not None:
                n = cast(self._num_updates, "float32", name="num_updates")
                decay = minimum(decay, (1.0 + n) / (10.0 + n))
            updates = [assign_moving_average(
                self._averages[var], var, decay,
                zero_debias=self._zero_debias and not _is_variable(var)) for var in var_list]
            return group(*updates)

    def average(self, var):
        """The shadow of ``var``, or None if ``apply`` did not make one."""
        return self._averages.get(var)

    def average_name(self, var):
        """The name of ``var``'s shadow (its checkpoint key), whether or not it exists yet."""
        if var in self._averages:
            return self._averages[var].op.name
        return f"{var.op.name}/{self._name}"

    def variables_to_restore(self, moving_avg_variables=None):
        """A Saver dict: each moving-averaged variable restored from its shadow's key, every
        other global variable from its own."""
        graph = get_default_graph()
        if moving_avg_variables is None:
            moving_avg_variables = graph.get_collection(GraphKeys.MOVING_AVERAGE_VARIABLES)
            moving_avg_variables += graph.get_collection(GraphKeys.TRAINABLE_VARIABLES)
        averaged = set(moving_avg_variables)
        names = {}
        for var in graph.get_collection(GraphKeys.GLOBAL_VARIABLES):
            if var in self._averages.values():
                continue
            names[self.average_name(var) if var in averaged else var.op.name] = var
        return names
