"""Second derivatives in a graph: ``tf.hessians`` and the Hessian-vector product.

Both are gradients of gradients: the gradient ops ``gradients`` adds are ordinary graph ops, so
differentiating them again is another ``gradients`` call (TF's gradients_impl does the same).
"""

from __future__ import annotations

from ..framework.graph import get_default_graph
from ..ops.array import reshape, stack
from ..ops.core import stop_gradient
from ..ops.math import multiply
from .gradients import UnconnectedGradients, as_list, gradients


def hessians(ys, xs, name="hessians", colocate_gradients_with_ops=False, gate_gradients=False,
             aggregation_method=None):
    """For each x, d^2 sum(ys) / dx dx of shape ``x.shape + x.shape`` (None where ys do not
    depend on x). Row j is the gradient of element j of the flattened gradient, as TF computes
    it (TF loops with a while_loop; here x's static shape unrolls the loop)."""
    xs = as_list(xs)
    kwargs = dict(colocate_gradients_with_ops=colocate_gradients_with_ops,
                  gate_gradients=gate_gradients, aggregation_method=aggregation_method)
    out = []
    with _graph_of(xs).name_scope(name):
        for grad, x in zip(gradients(ys, xs, **kwargs), xs):
            if grad is None:
                out.append(None)
                continue
            if not x.shape.is_fully_defined():
                raise ValueError(f"hessians needs the static shape of {x.name}, which is "
                                 f"{x.shape}")
            dims = [int(d) for d in x.shape.dims]
            flat = reshape(grad, [-1])
            rows = [gradients(flat[j], x, unconnected_gradients=UnconnectedGradients.ZERO,
                              **kwargs)[0] for j in range(x.shape.num_elements())]
            out.append(reshape(stack(rows), dims + dims) if rows else
                       reshape(flat, dims + dims))
    return out


def hessian_vector_product(ys, xs, v):
    """[H v] for the Hessian H of sum(ys) in xs and vectors v (one per x, x's shape), without
    forming H: the gradient of <grad, stop_gradient(v)> (TF's ``_hessian_vector_product``)."""
    xs, v = as_list(xs), as_list(v)
    if len(v) != len(xs):
        raise ValueError("xs and v must have the same length.")
    grads = gradients(ys, xs)
    products = [multiply(g, stop_gradient(v_elem)) for g, v_elem in zip(grads, v)
                if g is not None]
    return gradients(products, xs)


_hessian_vector_product = hessian_vector_product  # TF's name (gradients_impl), for ported tests


def _graph_of(xs):
    return xs[0].graph if xs and hasattr(xs[0], "graph") else get_default_graph()
