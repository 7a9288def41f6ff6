"""``nn.nce_loss`` and ``nn.sampled_softmax_loss``: losses over a large number of classes that
score each example's true classes against a few sampled ones, built op for op as TF1's
``nn_impl.py`` builds them.

``_compute_sampled_logits`` looks the true and the sampled classes' rows of ``weights`` and
``biases`` up in one ``embedding_lookup`` (so their gradients are IndexedSlices of those rows
only; a list of weights is a partitioned table split by ``partition_strategy``), then

    true_logits    = <inputs, w_true> + b_true                   [batch, num_true]
    sampled_logits = inputs @ w_sampled^T + b_sampled           [batch, num_sampled]
    sampled_logits[i, k] += -FLT_MAX  where sampled id k is a true class of row i
                                          (remove_accidental_hits)
    logits -= log(expected count)         (subtract_log_q)

and returns ``[true_logits, sampled_logits]`` with the labels ``[1/num_true ..., 0 ...]``. NCE
takes the sigmoid cross-entropy of every logit, summed per row; sampled softmax the softmax
cross-entropy over the row. Without ``sampled_values`` the classes are drawn by
``log_uniform_candidate_sampler(unique=True)`` as in TF.
"""

from __future__ import annotations

from ..framework import dtypes as _dtypes
from ..framework.graph import get_default_graph
from ..ops.array import concat, expand_dims, reshape, shape, split
from ..ops.candidate_sampling import compute_accidental_hits, log_uniform_candidate_sampler
from ..ops.core import convert_to_tensor, ones_like, stop_gradient, zeros_like
from ..ops.embedding_ops import embedding_lookup
from ..ops.math import cast, log, matmul
from ..ops.nn import sigmoid_cross_entropy_with_logits, softmax_cross_entropy_with_logits_v2
from ..ops.sparse import sparse_to_dense


def _sum_rows(x):
    """TF's _sum_rows: a matmul with a column of ones (its gradient is cheaper than
    reduce_sum's here, TF says)."""
    cols = matmul(x, expand_dims(ones_like(x[0, :]), 1))
    return reshape(cols, [-1])


def _as_type(x, dtype):
    return x if x.dtype == dtype else cast(x, dtype)


def _compute_sampled_logits(weights, biases, labels, inputs, num_sampled, num_classes,
                            num_true=1, sampled_values=None, subtract_log_q=True,
                            remove_accidental_hits=False, partition_strategy="mod", name=None,
                            seed=None):
    """(out_logits [batch, num_true + num_sampled], out_labels of the same shape)."""
    weights = list(weights) if isinstance(weights, list | tuple) else [weights]
    with get_default_graph().name_scope(name or "compute_sampled_logits"):
        inputs = convert_to_tensor(inputs)
        labels = convert_to_tensor(labels, preferred_dtype=_dtypes.int64)
        if not labels.dtype.is_integer:
            raise TypeError(f"labels must be integer class ids, got {labels.dtype.name}")
        labels = _as_type(labels, _dtypes.int64)
        if labels.shape.ndims not in (None, 2) or (labels.shape.ndims == 2 and
                                                  labels.shape.dims[1] not in (None, num_true)):
            raise ValueError(f"labels must be [batch_size, num_true] = [?, {num_true}], got "
                             f"shape {labels.shape} ({labels.name})")
        labels_flat = reshape(labels, [-1])
        if sampled_values is None:
            sampled_values = log_uniform_candidate_sampler(
                true_classes=labels, num_true=num_true, num_sampled=num_sampled, unique=True,
                range_max=num_classes, seed=seed)
        sampled, true_expected_count, sampled_expected_count = (
            stop_gradient(convert_to_tensor(s)) for s in sampled_values)
        sampled = _as_type(sampled, _dtypes.int64)
        all_ids = concat([labels_flat, sampled], 0)
        all_w = _as_type(embedding_lookup(weights, all_ids, partition_strategy=partition_strategy),
                         inputs.dtype)
        true_w, sampled_w = split(all_w, [-1, num_sampled], axis=0)
        sampled_logits = matmul(inputs, sampled_w, transpose_b=True)
        all_b = _as_type(embedding_lookup(biases, all_ids, partition_strategy=partition_strategy),
                         inputs.dtype)
        true_b, sampled_b = split(all_b, [-1, num_sampled], axis=0)
        dim = true_w.shape.dims[1] if true_w.shape.dims is not None else None
        if dim is None:
            raise ValueError("nce_loss / sampled_softmax_loss need weights of a known row size")
        row_wise_dots = expand_dims(inputs, 1) * reshape(true_w, [-1, num_true, dim])
        dots_as_matrix = reshape(row_wise_dots, [-1, dim])
        true_logits = reshape(_sum_rows(dots_as_matrix), [-1, num_true])
        true_logits += reshape(true_b, [-1, num_true])
        sampled_logits += sampled_b
        if remove_accidental_hits:
            acc_indices, acc_ids, acc_weights = compute_accidental_hits(
                labels, sampled, num_true=num_true)
            sparse_indices = concat([reshape(acc_indices, [-1, 1]),
                                     reshape(cast(acc_ids, _dtypes.int32), [-1, 1])], 1,
                                    name="sparse_indices")
            sampled_logits_shape = concat(
                [shape(labels)[:1], convert_to_tensor([num_sampled], dtype=_dtypes.int32)], 0)
            sampled_logits += sparse_to_dense(sparse_indices, sampled_logits_shape,
                                              _as_type(acc_weights, sampled_logits.dtype),
                                              default_value=0.0, validate_indices=False)
        if subtract_log_q:
            true_logits -= log(_as_type(true_expected_count, true_logits.dtype))
            sampled_logits -= log(_as_type(sampled_expected_count, sampled_logits.dtype))
        out_logits = concat([true_logits, sampled_logits], 1)
        out_labels = concat([ones_like(true_logits) / num_true, zeros_like(sampled_logits)], 1)
        return out_logits, out_labels


def nce_loss(weights, biases, labels, inputs, num_sampled, num_classes, num_true=1,
             sampled_values=None, remove_accidental_hits=False, partition_strategy="mod",
             name="nce_loss"):
    """Noise-contrastive estimation loss per example [batch]: the sigmoid cross-entropy of the
    true logits against 1/num_true and of the sampled logits against 0, summed over the row.
    ``weights`` [num_classes, dim] (or a list of its parts), ``biases`` [num_classes],
    ``labels`` int [batch, num_true], ``inputs`` [batch, dim]."""
    logits, labels = _compute_sampled_logits(
        weights=weights, biases=biases, labels=labels, inputs=inputs, num_sampled=num_sampled,
        num_classes=num_classes, num_true=num_true, sampled_values=sampled_values,
        subtract_log_q=True, remove_accidental_hits=remove_accidental_hits,
        partition_strategy=partition_strategy, name=name)
    sampled_losses = sigmoid_cross_entropy_with_logits(labels=labels, logits=logits,
                                                       name="sampled_losses")
    return _sum_rows(sampled_losses)


def sampled_softmax_loss(weights, biases, labels, inputs, num_sampled, num_classes, num_true=1,
                         sampled_values=None, remove_accidental_hits=True,
                         partition_strategy="mod", name="sampled_softmax_loss", seed=None):
    """Sampled softmax loss per example [batch]: the softmax cross-entropy over the true and the
    sampled classes (accidental hits removed by default), arguments as for ``nce_loss``."""
    logits, labels = _compute_sampled_logits(
        weights=weights, biases=biases, labels=labels, inputs=inputs, num_sampled=num_sampled,
        num_classes=num_classes, num_true=num_true, sampled_values=sampled_values,
        subtract_log_q=True, remove_accidental_hits=remove_accidental_hits,
        partition_strategy=partition_strategy, name=name, seed=seed)
    labels = stop_gradient(labels, name="labels_stop_gradient")
    return softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits)
