"""``tf.contrib.layers``' regularizers (TF 1.x ``contrib/layers/python/layers/regularizers.py``):
functions of a weight tensor returning a scalar penalty, as ``get_variable(regularizer=...)`` and
the layers' ``weights_regularizer`` take them, and ``apply_regularization``.

As TF: a scale must be a float (an int is refused, so that ``l2_regularizer(1)`` is not taken
for 1.0 by mistake), not negative; a scale of 0 gives a regularizer returning None (no penalty
is added to REGULARIZATION_LOSSES); the scale may also be a tensor."""

from __future__ import annotations

import numbers

from ..framework.graph import GraphKeys, add_to_collection, get_collection, name_scope
from ..ops.core import constant, convert_to_tensor
from ..ops.math import abs_, add_n, multiply
from ..ops.nn import l2_loss
from ..ops.reduce import reduce_sum
from ..platform import tf_logging


def _check_scale(scale, what="scale"):
    """TF's checks; True when the scale is a Python 0 (the regularizer is then disabled)."""
    if isinstance(scale, numbers.Integral):
        raise ValueError(f"{what} cannot be an integer: {scale}")
    if isinstance(scale, numbers.Real):
        if scale < 0.0:
            raise ValueError(f"Setting a scale less than 0 on a regularizer: {scale:g}")
        if scale == 0.0:
            tf_logging.info("Scale of 0 disables regularizer.")
            return True
    return False


def _penalty(kind, scale, scope, norm):
    def regularizer(weights):
        with name_scope(scope, kind, [weights]) as name:
            my_scale = convert_to_tensor(scale, dtype=weights.dtype.base_dtype, name="scale")
            return multiply(my_scale, norm(weights), name=name)
    return regularizer


def l1_regularizer(scale, scope=None):
    """``scale * sum(|w|)``, in name scope ``l1_regularizer``."""
    if _check_scale(scale):
        return lambda _: None
    return _penalty("l1_regularizer", scale, scope, lambda w: reduce_sum(abs_(w)))


def l2_regularizer(scale, scope=None):
    """``scale * sum(w ** 2) / 2`` (TF's ``nn.l2_loss``), in name scope ``l2_regularizer``."""
    if _check_scale(scale):
        return lambda _: None
    return _penalty("l2_regularizer", scale, scope, l2_loss)


def sum_regularizer(regularizer_list, scope=None):
    """The sum of several regularizers' penalties (those returning None left out); None when
    the list holds no regularizer."""
    regularizer_list = [reg for reg in regularizer_list if reg is not None]
    if not regularizer_list:
        return None

    def sum_reg(weights):
        with name_scope(scope, "sum_regularizer", [weights]) as name:
            tensors = [t for t in (reg(weights) for reg in regularizer_list) if t is not None]
            return add_n(tensors, name=name) if tensors else None
    return sum_reg


def l1_l2_regularizer(scale_l1=1.0, scale_l2=1.0, scope=None):
    """``l1_regularizer(scale_l1)`` plus ``l2_regularizer(scale_l2)`` (one of them alone when the
    other scale is 0), in name scope ``l1_l2_regularizer``."""
    off_l1, off_l2 = _check_scale(scale_l1, "scale_l1"), _check_scale(scale_l2, "scale_l2")
    if off_l1 and off_l2:
        return lambda _: None
    scope = scope or "l1_l2_regularizer"
    if off_l1:
        return l2_regularizer(scale_l2, scope)
    if off_l2:
        return l1_regularizer(scale_l1, scope)
    return sum_regularizer([l1_regularizer(scale_l1), l2_regularizer(scale_l2)], scope=scope)


def apply_regularization(regularizer, weights_list=None):
    """The sum of ``regularizer`` over ``weights_list`` (the WEIGHTS collection by default),
    added to REGULARIZATION_LOSSES; a penalty that is not a scalar is TF's ValueError."""
    if not weights_list:
        weights_list = get_collection(GraphKeys.WEIGHTS)
    if not weights_list:
        raise ValueError("No weights to regularize.")
    with name_scope("get_regularization_penalty", values=weights_list) as scope:
        penalties = [regularizer(w) for w in weights_list]
        penalties = [p if p is not None else constant(0.0) for p in penalties]
        for p in penalties:
            if p.shape.ndims != 0:
                raise ValueError("regularizer must return a scalar Tensor instead of a Tensor "
                                 f"with rank {p.shape.ndims}.")
        summed = add_n(penalties, name=scope)
        add_to_collection(GraphKeys.REGULARIZATION_LOSSES, summed)
        return summed
