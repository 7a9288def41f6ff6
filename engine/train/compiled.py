"""One-pass update kernels compiled with numba, where it is installed (the ``fast`` extra).

The numpy kernels of ``adam.py`` and ``gradient_descent.py`` make a dozen passes over each block
of a large update; these loops make one pass over memory on every core (numba's ``prange``), as
torch's fused Adam does, with the same float32 operations in the same order per element (no
fast-math: no reassociation, no fused multiply-add), so results are bit-identical to the numpy
kernels'. Measured on 2 cores (2026-11-23), Adam over 10 x 1e6 float32 with a clip scale:
numpy blocks 15-18 ms, compiled 6 ms.

Threads: numba's OpenMP layer, whose threads by default spin after each kernel and, on 2 cores,
starved OpenBLAS's threads in the next matmul (MLP step 7.3 ms without numba, 16.0 ms with
spinning OpenMP threads); so ``OMP_WAIT_POLICY=PASSIVE`` is set before numba starts them, unless
the environment sets it or ``NUMBA_THREADING_LAYER`` (it applies to OpenMP runtimes loaded
afterwards too). Measured: MLP 6.6 ms, Adam 1e7 8.8-9.2 ms (numba's workqueue layer: 6.7 ms and
11-13 ms, its threads not running in parallel here). Calls take a lock: numba's threading layers
are not all safe to enter from two threads at once.

Only updates of at least ``MIN_ELEMENTS`` elements use them, so that small models never pay
numba's import (about 0.3 s) or a first compilation (about 1-2 s per kernel and dtype; cached
on disk afterwards). Without numba, or with ``GRADPIPE_NUMBA=0``, or if compiling fails, the
numpy kernels run. Compilation happens on first use, never at import.
"""

from __future__ import annotations

import os
import threading

import numpy as np

#: elements from which an update uses a compiled kernel
MIN_ELEMENTS = 131_072

#: the loops' parallel range: numba's prange once numba is imported (plain range before, so the
#: loops stay ordinary Python that numba compiles without this module importing it)
_prange = range


def _adam_loop(var, m, v, grad, scale, alpha, one_minus_beta1, one_minus_beta2, epsilon):
    for i in _prange(var.size):
        g = grad[i] * scale
        mi = m[i] + (g - m[i]) * one_minus_beta1
        vi = v[i] + (g * g - v[i]) * one_minus_beta2
        m[i] = mi
        v[i] = vi
        var[i] -= (mi * alpha) / (np.sqrt(vi) + epsilon)


def _momentum_loop(var, accum, grad, scale, lr, momentum, nesterov):
    for i in _prange(var.size):
        g = grad[i] * scale
        a = accum[i] * momentum + g
        accum[i] = a
        if nesterov:
            var[i] -= g * lr + (a * momentum) * lr
        else:
            var[i] -= a * lr


_LOOPS = {"adam": _adam_loop, "momentum": _momentum_loop}
_LOCK = threading.Lock()
_compiled: dict = {}


def _kernel(name):
    """The compiled loop, made on first use; None where numba is missing or fails."""
    if name in _compiled:
        return _compiled[name]
    kernel = None
    if os.environ.get("GRADPIPE_NUMBA", "1") != "0":
        try:
            import numba

            if "NUMBA_THREADING_LAYER" not in os.environ:
                os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
            globals()["_prange"] = numba.prange
            kernel = numba.njit(parallel=True, nogil=True, cache=True, fastmath=False)(_LOOPS[name])
        except Exception:  # noqa: BLE001 - an optional accelerator: the numpy kernels remain
            kernel = None
    _compiled[name] = kernel
    return kernel


def _call(name, *args) -> bool:
    kernel = _kernel(name)
    if kernel is None:
        return False
    try:
        with _LOCK:  # the workqueue layer must not be entered by two threads at once
            kernel(*args)
    except Exception:  # noqa: BLE001 - e.g. a compile error on an unusual dtype
        _compiled[name] = None
        return False
    return True


def adam(flat, grad, scale, hyper, static) -> bool:
    """ApplyAdam over flat contiguous arrays (``_apply_adam``'s formula); whether it ran."""
    var, m, v = flat
    beta1_power, beta2_power, lr, beta1, beta2, epsilon = hyper
    one = np.ones((), var.dtype)
    alpha = lr * np.sqrt(one - beta2_power) / (one - beta1_power)
    dt = var.dtype.type
    return _call("adam", var, m, v, grad, dt(1 if scale is None else scale), dt(alpha),
                 dt(one - beta1), dt(one - beta2), dt(epsilon))


def momentum(flat, grad, scale, hyper, static) -> bool:
    """ApplyMomentum over flat contiguous arrays (``_apply_momentum``'s formula)."""
    var, accum = flat
    lr, mom = hyper
    dt = var.dtype.type
    return _call("momentum", var, accum, grad, dt(1 if scale is None else scale), dt(lr), dt(mom),
                 bool(static["use_nesterov"]))
