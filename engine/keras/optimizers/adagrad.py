"""``keras.optimizers.Adagrad``: Keras 3's form (epsilon inside the square root)."""

from __future__ import annotations

from ...framework.indexed_slices import IndexedSlices
from ...ops.math import sqrt, square
from ...ops.scatter_ops import scatter_add
from ...ops.sparse import gather
from ...train.hyperparams import check_number
from .optimizer import Optimizer, cast_to


class Adagrad(Optimizer):
    """Keras 3's Adagrad (defaults learning_rate=0.001, initial_accumulator_value=0.1,
    epsilon=1e-7). Slot ``accumulator`` from initial_accumulator_value::

        accumulator += g**2
        var -= lr * g / sqrt(accumulator + epsilon)

    With IndexedSlices (TF2 Keras' sparse branch) both on the rows named only.
    """

    def __init__(self, learning_rate=0.001, initial_accumulator_value=0.1, epsilon=1e-7,
                 weight_decay=None, clipnorm=None, clipvalue=None, global_clipnorm=None,
                 loss_scale_factor=None, name=None, **kwargs):
        super().__init__(learning_rate, weight_decay=weight_decay, clipnorm=clipnorm,
                         clipvalue=clipvalue, global_clipnorm=global_clipnorm,
                         loss_scale_factor=loss_scale_factor, name=name, **kwargs)
        self.initial_accumulator_value = check_number(
            "initial_accumulator_value", initial_accumulator_value, low=0, owner="Adagrad")
        self.epsilon = check_number("epsilon", epsilon, low=0, owner="Adagrad")
        self.slots = (("accumulator", initial_accumulator_value),)

    def update_step(self, gradient, variable, learning_rate):
        lr = cast_to(learning_rate, variable.dtype)
        gradient = cast_to(gradient, variable.dtype)
        accumulator = self.get_slot(variable, "accumulator")
        if isinstance(gradient, IndexedSlices):
            values, indices = gradient.values, gradient.indices
            scatter_add(accumulator, indices, values * values)
            denominator = sqrt(gather(accumulator, indices) + self.epsilon)
            scatter_add(variable, indices, -lr * values / denominator)
            return
        accumulator.assign_add(square(gradient))
        variable.assign_sub(lr * gradient / sqrt(accumulator + self.epsilon))
