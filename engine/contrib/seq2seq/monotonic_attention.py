"""``tf.contrib.seq2seq``'s monotonic attention, as TF 1.15's contrib (``attention_wrapper.py``):
``hardmax``, ``safe_cumprod``, ``monotonic_attention`` and the mechanisms
``BahdanauMonotonicAttention`` / ``LuongMonotonicAttention`` (Raffel et al. 2017, "Online and
Linear-Time Attention by Enforcing Monotonic Alignments").

A monotonic mechanism scores the memory as its non-monotonic sibling does, plus a learned scalar
``attention_score_bias`` (from ``score_bias_init``), optionally with Gaussian noise of
``sigmoid_noise`` before the sigmoid; the sigmoid of a score is the probability ``p_i`` of
stopping at memory row i, scanning from the row attended at the previous step. The alignments are
the expected stop: ``monotonic_attention(p, previous, mode)``, whose initial value attends to the
first row (one-hot at 0).
"""

from __future__ import annotations

import functools

import numpy as np

from ...control_flow.functional_ops import scan
from ...framework.graph import name_scope
from ...ops.array import concat, one_hot, reshape, shape, transpose
from ...ops.clip_ops import clip_by_value
from ...ops.core import convert_to_tensor, ones, zeros
from ...ops.cumulative import cumprod, cumsum
from ...ops.initializers import random_normal
from ...ops.math import cast, exp, log, sigmoid
from ...ops.reduce import argmax
from ...ops.variables import get_variable
from .attention_wrapper import BahdanauAttention, LuongAttention

__all__ = ["BahdanauMonotonicAttention", "LuongMonotonicAttention", "hardmax",
           "monotonic_attention", "safe_cumprod"]


def hardmax(logits, name=None):
    """One-hot of the argmax over the last axis (the first of equal maxima), in logits' dtype."""
    with name_scope(name, "Hardmax"):
        logits = convert_to_tensor(logits, name="logits")
        depth = logits.shape.dims[-1] if logits.shape.ndims else None
        if depth is None:
            depth = shape(logits)[-1]
        return one_hot(argmax(logits, -1), depth, dtype=logits.dtype)


def safe_cumprod(x, *args, **kwargs):
    """``cumprod`` as ``exp(cumsum(log(x)))`` with x clipped to [tiny, 1] (TF's: no underflow
    to 0 for long products of probabilities; ``cumsum``'s axis, exclusive, reverse)."""
    with name_scope(None, "SafeCumprod"):
        x = convert_to_tensor(x, name="x")
        tiny = np.finfo(x.dtype.np).tiny
        return exp(cumsum(log(clip_by_value(x, tiny, 1)), *args, **kwargs))


def monotonic_attention(p_choose_i, previous_attention, mode):
    """The expected monotonic alignments [batch, max_time] from the stopping probabilities and
    the previous step's alignments: ``recursive`` (``q_i = (1 - p_{i-1}) q_{i-1} +
    previous_i``, ``a_i = p_i q_i``, by ``tf.scan``), ``parallel`` (the same in closed form with
    cumulative products and sums, ``cumprod(1 - p)`` clipped at 1e-10 in the division) or
    ``hard`` (p of 0s and 1s, previous one-hot: the first 1 at or after the previous row)."""
    p_choose_i = convert_to_tensor(p_choose_i, name="p_choose_i")
    previous_attention = convert_to_tensor(previous_attention, name="previous_attention")
    if mode == "recursive":
        batch_size = p_choose_i.shape.dims[0] if p_choose_i.shape.ndims else None
        if batch_size is None:
            batch_size = shape(p_choose_i)[0]
        shifted = concat([ones((batch_size, 1), p_choose_i.dtype), 1 - p_choose_i[:, :-1]], 1)
        q = scan(lambda x, yz: reshape(yz[0] * x + yz[1], (batch_size,)),
                 [transpose(shifted), transpose(previous_attention)],
                 zeros((batch_size,), p_choose_i.dtype))
        return p_choose_i * transpose(q)
    if mode == "parallel":
        cumprod_1mp = safe_cumprod(1 - p_choose_i, axis=1, exclusive=True)
        return p_choose_i * cumprod_1mp * cumsum(
            previous_attention / clip_by_value(cumprod_1mp, 1e-10, 1.), axis=1)
    if mode == "hard":
        p_choose_i = p_choose_i * cumsum(previous_attention, axis=1)
        return p_choose_i * cumprod(1 - p_choose_i, axis=1, exclusive=True)
    raise ValueError("mode must be 'recursive', 'parallel', or 'hard'.")


def _monotonic_probability_fn(score, previous_alignments, sigmoid_noise, mode, seed=None):
    if sigmoid_noise > 0:
        score = score + sigmoid_noise * random_normal(shape(score), dtype=score.dtype, seed=seed)
    if mode == "hard":
        p_choose_i = cast(score > 0, score.dtype)
    else:
        p_choose_i = sigmoid(score)
    return monotonic_attention(p_choose_i, previous_alignments, mode)


def _probability_fn(sigmoid_noise, mode, seed):
    if mode not in ("recursive", "parallel", "hard"):
        raise ValueError("mode must be 'recursive', 'parallel', or 'hard'.")
    fn = functools.partial(_monotonic_probability_fn, sigmoid_noise=sigmoid_noise, mode=mode,
                           seed=seed)
    fn.of_previous = True  # called with the previous alignments (attention_wrapper._of_score)
    return fn


class _Monotonic:
    """What both monotonic mechanisms add: the one-hot initial alignments, the score bias."""

    _score_bias = None

    def initial_alignments(self, batch_size, dtype):
        return one_hot(zeros((batch_size,), "int32"), self._alignments_size, dtype=dtype)

    def _score(self, query):
        score = super()._score(query)
        if self._score_bias is None:  # made at the first call, shared by the later ones
            self._score_bias = get_variable(
                "attention_score_bias", dtype=score.dtype,
                initializer=np.array(self._score_bias_init, score.dtype.np))
        return score + self._score_bias


class BahdanauMonotonicAttention(_Monotonic, BahdanauAttention):
    """Bahdanau's score plus ``attention_score_bias``, monotonic alignments (see the module)."""

    _scope_name = "bahdanau_monotonic_attention"

    def __init__(self, num_units, memory, memory_sequence_length=None, normalize=False,
                 score_mask_value=None, sigmoid_noise=0., sigmoid_noise_seed=None,
                 score_bias_init=0., mode="parallel", dtype=None,
                 name="BahdanauMonotonicAttention"):
        super().__init__(num_units, memory, memory_sequence_length=memory_sequence_length,
                         normalize=normalize, score_mask_value=score_mask_value,
                         probability_fn=_probability_fn(sigmoid_noise, mode,
                                                        sigmoid_noise_seed), name=name)
        self._score_bias_init = score_bias_init


class LuongMonotonicAttention(_Monotonic, LuongAttention):
    """Luong's score plus ``attention_score_bias``, monotonic alignments (see the module)."""

    _scope_name = "luong_monotonic_attention"

    def __init__(self, num_units, memory, memory_sequence_length=None, scale=False,
                 score_mask_value=None, sigmoid_noise=0., sigmoid_noise_seed=None,
                 score_bias_init=0., mode="parallel", dtype=None,
                 name="LuongMonotonicAttention"):
        super().__init__(num_units, memory, memory_sequence_length=memory_sequence_length,
                         scale=scale, probability_fn=_probability_fn(sigmoid_noise, mode,
                                                                     sigmoid_noise_seed),
                         score_mask_value=score_mask_value, name=name)
        self._score_bias_init = score_bias_init
