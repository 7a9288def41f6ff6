"""Plain and momentum gradient descent (TF1's GradientDescentOptimizer, MomentumOptimizer)."""

from __future__ import annotations

import numpy as np

from ..runtime import compiled
from ..runtime.sparse_update_ops import register_sparse_rows, register_sparse_update
from ..runtime.update_ops import register_update
from .hyperparams import check_bool, check_number
from .optimizer import Optimizer, cast_to


def _apply_gradient_descent(var, grad, lr):
    """training_ops.cc ApplyGradientDescent: var -= grad * lr."""
    var -= grad * lr


def _apply_momentum(var, accum, grad, lr, momentum, scratch, use_nesterov):
    """training_ops.cc ApplyMomentum: accum = accum * momentum + grad; then
    var -= accum * lr, or with Nesterov var -= grad * lr + accum * momentum * lr
    (in place, through scratch buffers; see ``runtime/update_ops.py``)."""
    t, u = scratch
    accum *= momentum
    accum += grad
    if use_nesterov:
        np.multiply(grad, lr, out=t)
        np.multiply(accum, momentum, out=u)
        u *= lr
        t += u
    else:
        np.multiply(accum, lr, out=t)
    var -= t


def _sparse_apply_gradient_descent(var, values, indices, lr):
    """TF1's _apply_sparse_duplicate_indices: scatter_sub(var, indices, values * lr), repeated
    indices each subtracting their rows."""
    np.subtract.at(var, indices, values * lr)


register_update("ApplyGradientDescent", _apply_gradient_descent, refs=("var",), hyper=("lr",),
                flat=True)
register_update("ApplyMomentum", _apply_momentum, refs=("var", "accum"),
                hyper=("lr", "momentum"), static=("use_nesterov",), scratch=2,
                compiled=compiled.momentum)
register_sparse_update("SparseApplyGradientDescent", _sparse_apply_gradient_descent,
                       refs=("var",), hyper=("lr",))
register_sparse_rows("SparseApplyMomentum", "ApplyMomentum")


class GradientDescentOptimizer(Optimizer):
    """var -= learning_rate * grad."""

    def __init__(self, learning_rate, use_locking=False, name="GradientDescent"):
        super().__init__(use_locking, name)
        self._learning_rate = check_number("learning_rate", learning_rate, low=0,
                                           owner=type(self).__name__)
        self._learning_rate_tensor = None

    def _prepare(self):
        self._learning_rate_tensor = self._hyper_tensor(self._learning_rate, "learning_rate")

    def _apply_dense(self, grad, var):
        return self._update("ApplyGradientDescent", grad,
                            [cast_to(self._learning_rate_tensor, var.dtype)], var=var)

    # TF1: no deduplication, repeated rows are each subtracted (scatter_sub)
    _apply_sparse_duplicate_indices = _apply_sparse = _apply_dense


class MomentumOptimizer(Optimizer):
    """Heavy-ball momentum with TF1's accumulator form (slot ``momentum``, zeros), or Nesterov."""

    def __init__(self, learning_rate, momentum, use_locking=False, name="Momentum",
                 use_nesterov=False):
        super().__init__(use_locking, name)
        owner = type(self).__name__
        self._learning_rate = check_number("learning_rate", learning_rate, low=0, owner=owner)
        self._momentum = check_number("momentum", momentum, low=0, owner=owner)
        self._use_nesterov = check_bool("use_nesterov", use_nesterov, owner=owner)

    def _create_slots(self, var_list):
        for v in var_list:
            self._zeros_slot(v, "momentum", self._name)

    def _prepare(self):
        self._learning_rate_tensor = self._hyper_tensor(self._learning_rate, "learning_rate")
        self._momentum_tensor = self._hyper_tensor(self._momentum, "momentum")

    def _apply_dense(self, grad, var):
        mom = self.get_slot(var, "momentum")
        return self._update(
            "ApplyMomentum", grad,
            [cast_to(self._learning_rate_tensor, var.dtype),
             cast_to(self._momentum_tensor, var.dtype)],
            var=var, accum=mom, attrs={"use_nesterov": self._use_nesterov})

    _apply_sparse = _apply_dense  # SparseApplyMomentum: the dense formula on the rows named
