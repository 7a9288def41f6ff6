"""An estimate of the time the initializers take, checked before the model is built.

Most initializers cost a pass over their variable's memory (runner.memory bounds that). The
``orthogonal`` initializer runs a QR decomposition of an m x n sample (m >= n: the variable's
rows and columns, larger first): LAPACK's dgeqrf takes 2mn^2 - 2n^3/3 flops and dorgqr, forming
the thin Q, as many again (LAPACK's operation counts, dopla), 4mn^2 - 4n^3/3 in all; so
[20000, 20000] costs 2e13 flops, hours of a core at a few GFlop/s. Such a run is a
config error at the variable's ``init`` when the estimate is above ``train.max_init_seconds``
(null: no limit), instead of a start that seems to hang. The rate is measured here once, on a
small QR (which runs slower per flop than a large one: the estimate errs long).
"""

from __future__ import annotations

import math
import time

import numpy as np

from runner.errors import ConfigError

#: below this many flops an initializer is never timed (a fraction of a second anywhere)
CHEAP_FLOPS = 1e9
_PROBE = 384  # the side of the QR that measures the rate


def qr_flops(shape) -> float:
    """Flops of the orthogonal initializer's QR for a variable of ``shape`` (rank >= 2)."""
    rows, cols = math.prod(shape[:-1]), shape[-1]
    m, n = max(rows, cols), min(rows, cols)
    return 4.0 * m * n * n - 4.0 * n ** 3 / 3.0


def qr_rate(threads: int = 0) -> float:
    """Flops per second of numpy's QR here on the BLAS threads a session of the run uses
    (``train.threads``; 0: the engine's default), the best of three runs of a small one."""
    from engine.framework.threads import blas_threads_of, use_blas_threads
    from engine.runtime.session_options import ConfigProto

    use_blas_threads(blas_threads_of(ConfigProto(intra_op_parallelism_threads=threads)))
    sample = np.random.default_rng(0).standard_normal((_PROBE, _PROBE))
    best = math.inf
    for _ in range(3):
        started = time.perf_counter()
        np.linalg.qr(sample)
        best = min(best, time.perf_counter() - started)
    return qr_flops((_PROBE, _PROBE)) / max(best, 1e-9)


def refuse_above(config, cap_seconds: float | None, threads: int = 0) -> None:
    """A ConfigError at the first variable whose initializer is estimated above the cap."""
    if cap_seconds is None or config.model is None:
        return
    rate = None
    for name, spec in config.model.variables.items():
        if getattr(spec.init, "name", None) != "orthogonal" or len(spec.shape) < 2:
            continue
        flops = qr_flops(spec.shape)
        if flops < CHEAP_FLOPS:
            continue
        rate = rate or qr_rate(threads)
        seconds = flops / rate
        if seconds > cap_seconds:
            raise ConfigError(f"model.variables.{name}.init",
                              f"the orthogonal initializer of a {list(spec.shape)} variable "
                              f"takes about {seconds:.0f} s (a QR decomposition of "
                              f"{flops:.1e} flops at the {rate / 1e9:.1f} GFlop/s measured "
                              f"here), above train.max_init_seconds ({cap_seconds:g}); make "
                              "the variable smaller, use another initializer "
                              "(glorot_uniform), or raise train.max_init_seconds")
