"""``keras.optimizers.SGD``: gradient descent, with Keras 3's momentum and Nesterov forms."""

from __future__ import annotations

from ...framework.indexed_slices import IndexedSlices
from ...ops.scatter_ops import scatter_add
from ...train.hyperparams import check_bool, check_number
from .optimizer import Optimizer, cast_to


class SGD(Optimizer):
    """Keras 3's SGD (defaults learning_rate=0.01, momentum=0.0, nesterov=False).

    Without momentum ``var -= lr * g``. With momentum the slot ``momentum`` (m, from zeros) is a
    velocity in parameter units::

        m = momentum * m - lr * g
        var += m                                  # plain
        var += momentum * m - lr * g              # nesterov (with the new m)

    With IndexedSlices (TF2 Keras' sparse branch): the rows ``-lr * g`` are scatter-added to
    var (no momentum), or m decays everywhere and gets them scatter-added, and var moves by
    m (Nesterov: the rows, then ``momentum * m``).
    """

    def __init__(self, learning_rate=0.01, momentum=0.0, nesterov=False, weight_decay=None,
                 clipnorm=None, clipvalue=None, global_clipnorm=None, loss_scale_factor=None,
                 name=None, **kwargs):
        super().__init__(learning_rate, weight_decay=weight_decay, clipnorm=clipnorm,
                         clipvalue=clipvalue, global_clipnorm=global_clipnorm,
                         loss_scale_factor=loss_scale_factor, name=name, **kwargs)
        self.momentum = check_number("momentum", momentum, low=0, high=1, owner="SGD")
        self.nesterov = check_bool("nesterov", nesterov, owner="SGD")
        self.slots = (("momentum", 0.0),) if momentum != 0 else ()

    def update_step(self, gradient, variable, learning_rate):
        lr = cast_to(learning_rate, variable.dtype)
        gradient = cast_to(gradient, variable.dtype)
        if isinstance(gradient, IndexedSlices):
            self._sparse_update_step(gradient, variable, lr)
            return
        if self.momentum == 0:
            variable.assign_sub(gradient * lr)
            return
        m = self.get_slot(variable, "momentum")
        momentum = cast_to(self.momentum, variable.dtype)
        m.assign(m * momentum - gradient * lr)
        if self.nesterov:
            variable.assign_add(m * momentum - gradient * lr)
        else:
            variable.assign_add(m)

    def _sparse_update_step(self, gradient, variable, lr):
        rows, indices = -gradient.values * lr, gradient.indices
        if self.momentum == 0:
            scatter_add(variable, indices, rows)
            return
        m = self.get_slot(variable, "momentum")
        momentum = cast_to(self.momentum, variable.dtype)
        m.assign(m * momentum)
        scatter_add(m, indices, rows)
        if self.nesterov:
            scatter_add(variable, indices, rows)
            variable.assign_add(m * momentum)
        else:
            variable.assign_add(m)
