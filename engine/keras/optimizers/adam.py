"""``keras.optimizers.Adam`` and ``AdamW``: Keras 3's Adam (bias correction folded into the step
size, epsilon outside the square root) and its decoupled weight decay form."""

from __future__ import annotations

from ...framework.indexed_slices import IndexedSlices
from ...ops.math import maximum, pow_, sqrt, square
from ...ops.scatter_ops import scatter_add
from ...train.hyperparams import check_bool, check_number
from .optimizer import Optimizer, cast_to


class Adam(Optimizer):
    """Keras 3's Adam (defaults learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7).

    Slots ``momentum`` (m) and ``velocity`` (v) from zeros; at step t (1-based)::

        m += (g - m) * (1 - beta_1)
        v += (g**2 - v) * (1 - beta_2)
        alpha = lr * sqrt(1 - beta_2**t) / (1 - beta_1**t)
        var -= m * alpha / (sqrt(v) + epsilon)

    With ``amsgrad=True`` the slot ``velocity_hat`` keeps the running max of v, used in its place.
    With IndexedSlices (TF2 Keras' sparse branch) m and v decay everywhere
    (``m -= m * (1 - beta_1)``), the rows ``g * (1 - beta_1)`` and ``g**2 * (1 - beta_2)`` are
    scatter-added, and var moves everywhere as in the dense step.
    """

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7,
                 amsgrad=False, weight_decay=None, clipnorm=None, clipvalue=None,
                 global_clipnorm=None, loss_scale_factor=None, name=None, **kwargs):
        super().__init__(learning_rate, weight_decay=weight_decay, clipnorm=clipnorm,
                         clipvalue=clipvalue, global_clipnorm=global_clipnorm,
                         loss_scale_factor=loss_scale_factor, name=name, **kwargs)
        owner = type(self).__name__
        self.beta_1 = check_number("beta_1", beta_1, low=0, high=1, high_open=True, owner=owner)
        self.beta_2 = check_number("beta_2", beta_2, low=0, high=1, high_open=True, owner=owner)
        self.epsilon = check_number("epsilon", epsilon, low=0, owner=owner)
        self.amsgrad = check_bool("amsgrad", amsgrad, owner=owner)
        self.slots = (("momentum", 0.0), ("velocity", 0.0)) + (
            (("velocity_hat", 0.0),) if amsgrad else ())

    def update_step(self, gradient, variable, learning_rate):
        dtype = variable.dtype
        lr = cast_to(learning_rate, dtype)
        gradient = cast_to(gradient, dtype)
        local_step = cast_to(self.iterations + 1, dtype)
        beta_1_power = pow_(cast_to(self.beta_1, dtype), local_step)
        beta_2_power = pow_(cast_to(self.beta_2, dtype), local_step)
        m = self.get_slot(variable, "momentum")
        v = self.get_slot(variable, "velocity")
        alpha = lr * sqrt(1 - beta_2_power) / (1 - beta_1_power)
        if isinstance(gradient, IndexedSlices):
            m.assign_add(-m * (1 - self.beta_1))
            scatter_add(m, gradient.indices, gradient.values * (1 - self.beta_1))
            v.assign_add(-v * (1 - self.beta_2))
            scatter_add(v, gradient.indices, square(gradient.values) * (1 - self.beta_2))
        else:
            m.assign_add((gradient - m) * (1 - self.beta_1))
            v.assign_add((square(gradient) - v) * (1 - self.beta_2))
        if self.amsgrad:
            v_hat = self.get_slot(variable, "velocity_hat")
            v_hat.assign(maximum(v_hat, v))
            v = v_hat
        variable.assign_sub((m * alpha) / (sqrt(v) + self.epsilon))


class AdamW(Adam):
    """Keras 3's AdamW: Adam plus ``var -= var * weight_decay * lr`` before each update
    (weight_decay defaults to 0.004 and is required)."""

    def __init__(self, learning_rate=0.001, weight_decay=0.004, beta_1=0.9, beta_2=0.999,
                 epsilon=1e-7, amsgrad=False, clipnorm=None, clipvalue=None,
                 global_clipnorm=None, loss_scale_factor=None, name=None, **kwargs):
        if weight_decay is None:
            raise ValueError("Argument `weight_decay` must be a float. Received: "
                             "weight_decay=None")
        super().__init__(learning_rate, beta_1=beta_1, beta_2=beta_2, epsilon=epsilon,
                         amsgrad=amsgrad, weight_decay=weight_decay, clipnorm=clipnorm,
                         clipvalue=clipvalue, global_clipnorm=global_clipnorm,
                         loss_scale_factor=loss_scale_factor, name=name, **kwargs)
