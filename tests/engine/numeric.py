"""Finite differences shared by the engine's tests: the independent gradients they compare the
engine's against."""

from __future__ import annotations

import numpy as np


def numeric_grad(f, x, eps=1e-6):
    """Central differences of the scalar f at the float64 array x, one entry at a time."""
    out = np.zeros_like(x)
    for j in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[j] += eps
        down[j] -= eps
        out[j] = (f(up) - f(down)) / (2 * eps)
    return out
