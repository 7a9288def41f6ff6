"""``keras.optimizers.RMSprop``: Keras 3's form (epsilon inside the square root, the mean square
starting at zero: no TF1 ``rms = 1`` start)."""

from __future__ import annotations

from ...framework.indexed_slices import IndexedSlices
from ...ops.math import rsqrt, sqrt, square
from ...ops.scatter_ops import scatter_add
from ...ops.sparse import gather
from ...train.hyperparams import check_bool, check_number
from .optimizer import Optimizer, cast_to


class RMSprop(Optimizer):
    """Keras 3's RMSprop (defaults learning_rate=0.001, rho=0.9, momentum=0.0, epsilon=1e-7,
    centered=False).

    Slot ``velocity`` (the mean square, from zeros); ``average_gradient`` if centered;
    ``momentum`` if momentum > 0::

        velocity = rho * velocity + (1 - rho) * g**2
        average_gradient = rho * average_gradient + (1 - rho) * g        # centered
        denominator = velocity - average_gradient**2 + epsilon           # centered
        denominator = velocity + epsilon                                 # otherwise
        increment = lr * g / sqrt(denominator)
        momentum = momentum * momentum_slot + increment; var -= momentum # momentum > 0
        var -= increment                                                 # otherwise

    With IndexedSlices (TF2 Keras' sparse branch) velocity (and average_gradient) decay
    everywhere and get the rows' terms scatter-added; the increment is computed for the rows
    named and scatter-added to the momentum slot (which decays everywhere, and var moves by it)
    or subtracted from those rows of var.
    """

    def __init__(self, learning_rate=0.001, rho=0.9, momentum=0.0, epsilon=1e-7, centered=False,
                 weight_decay=None, clipnorm=None, clipvalue=None, global_clipnorm=None,
                 loss_scale_factor=None, name=None, **kwargs):
        super().__init__(learning_rate, weight_decay=weight_decay, clipnorm=clipnorm,
                         clipvalue=clipvalue, global_clipnorm=global_clipnorm,
                         loss_scale_factor=loss_scale_factor, name=name, **kwargs)
        self.rho = check_number("rho", rho, low=0, high=1, owner="RMSprop")
        self.momentum = check_number("momentum", momentum, low=0, owner="RMSprop")
        self.epsilon = check_number("epsilon", epsilon, low=0, owner="RMSprop")
        self.centered = check_bool("centered", centered, owner="RMSprop")
        self.slots = (("velocity", 0.0),) + ((("momentum", 0.0),) if momentum > 0 else ()) + (
            (("average_gradient", 0.0),) if centered else ())

    def update_step(self, gradient, variable, learning_rate):
        lr = cast_to(learning_rate, variable.dtype)
        gradient = cast_to(gradient, variable.dtype)
        rho = self.rho
        velocity = self.get_slot(variable, "velocity")
        if isinstance(gradient, IndexedSlices):
            self._sparse_update_step(gradient, variable, lr, velocity)
            return
        velocity.assign(rho * velocity + (1 - rho) * square(gradient))
        if self.centered:
            average_grad = self.get_slot(variable, "average_gradient")
            average_grad.assign(rho * average_grad + (1 - rho) * gradient)
            denominator = velocity - square(average_grad) + self.epsilon
        else:
            denominator = velocity + self.epsilon
        increment = lr * gradient / sqrt(denominator)
        if self.momentum > 0:
            momentum = self.get_slot(variable, "momentum")
            momentum.assign(self.momentum * momentum + increment)
            variable.assign_sub(momentum)
        else:
            variable.assign_sub(increment)

    def _sparse_update_step(self, gradient, variable, lr, velocity):
        rho, values, indices = self.rho, gradient.values, gradient.indices
        velocity.assign(rho * velocity)
        scatter_add(velocity, indices, square(values) * (1 - rho))
        denominator = gather(velocity, indices)
        if self.centered:
            average_grad = self.get_slot(variable, "average_gradient")
            average_grad.assign(rho * average_grad)
            scatter_add(average_grad, indices, values * (1 - rho))
            denominator = denominator - square(gather(average_grad, indices))
        increment = lr * values * rsqrt(denominator + self.epsilon)
        if self.momentum > 0:
            momentum = self.get_slot(variable, "momentum")
            momentum.assign(self.momentum * momentum)
            scatter_add(momentum, indices, increment)
            variable.assign_add(-momentum)
        else:
            scatter_add(variable, indices, -increment)
