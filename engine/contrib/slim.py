"""``tf.contrib.slim``, the part TF1 programs use without slim's model zoo: its layers (those of
``contrib.layers``), ``arg_scope`` / ``add_arg_scope``, the regularizers and initializers, and
``model_analyzer.analyze_vars`` (TF 1.x's table of variables, their shapes and sizes)."""

from __future__ import annotations

import types

from .framework import add_arg_scope, arg_scope  # noqa: F401
from .layers import (  # noqa: F401
    batch_norm,
    conv2d,
    dropout,
    flatten,
    fully_connected,
    l1_regularizer,
    l2_regularizer,
    layer_norm,
    variance_scaling_initializer,
    xavier_initializer,
)


def tensor_description(var):
    """``(float32 3x3x1x64)``: a variable's dtype and shape, as slim prints them."""
    dims = [str(d) for d in var.get_shape().as_list()]
    return f"({var.dtype.name} {'x'.join(dims)})"


def analyze_vars(variables, print_info=False):
    """The total number of elements and bytes of ``variables``; with ``print_info`` one line
    per variable (name, description, size) and the totals, in TF 1.x's words."""
    if print_info:
        print("---------")
        print("Variables: name (type shape) [size]")
        print("---------")
    total_size = total_bytes = 0
    for var in variables:
        size = var.get_shape().num_elements() or 0
        nbytes = size * var.dtype.size
        total_size += size
        total_bytes += nbytes
        if print_info:
            print(var.name, tensor_description(var), f"[{size}, bytes: {nbytes}]")
    if print_info:
        print(f"Total size of variables: {total_size}")
        print(f"Total bytes of variables: {total_bytes}")
    return total_size, total_bytes


model_analyzer = types.SimpleNamespace(analyze_vars=analyze_vars,
                                       tensor_description=tensor_description)
