"""numba on demand (the ``fast`` extra): compile a Python loop, or say it cannot be.

Kernels compile on first use, never at import, so that a model that needs none never pays numba's
import (about 0.3 s) or a compilation (1-2 s per kernel, cached on disk afterwards). Without numba,
with ``GRADPIPE_NUMBA=0``, or if compiling fails, ``njit`` returns None and the caller runs its
numpy code. No fast-math (no reassociation, no fused multiply-add) and numpy's error model, so a
loop doing a numpy kernel's float operations in the same order per element gives the same bits.
"""

from __future__ import annotations

import os


def enabled() -> bool:
    """Whether compiled kernels may be used (``GRADPIPE_NUMBA=0`` turns them off)."""
    return os.environ.get("GRADPIPE_NUMBA", "1") != "0"


def njit(fn, noalias=False):
    """``fn`` compiled by numba (nogil, cached on disk where the package is writable), or None.

    ``noalias``: its array arguments never overlap (each is its own buffer), which LLVM is told
    (numba's ``noalias`` compiler flag on the function's pointer arguments): without it, a loop
    that reads several rows and writes several others vectorizes only behind a runtime check of
    every written row against every read one, which LLVM gives up on past 8 pairs (Winograd's
    tile transforms: 6 rows in, 6 out), and runs scalar. The float operations are the same."""
    if not enabled():
        return None
    try:
        import numba

        options = dict(nogil=True, fastmath=False, error_model="numpy")
        if noalias:
            options["pipeline_class"] = _noalias_compiler()
        try:
            return numba.njit(cache=True, **options)(fn)
        except RuntimeError:  # no writable cache next to an installed package
            return numba.njit(**options)(fn)
    except Exception:  # noqa: BLE001 - an optional accelerator: the numpy code remains
        return None


def _noalias_compiler():
    """numba's compiler with its ``noalias`` flag set (made on first use: numba loads late)."""
    global _NoAlias
    if _NoAlias is None:
        from numba.core.compiler import Compiler

        class NoAliasCompiler(Compiler):
            def __init__(self, typingctx, targetctx, library, args, return_type, flags, locals):
                flags.noalias = True
                super().__init__(typingctx, targetctx, library, args, return_type, flags, locals)

        _NoAlias = NoAliasCompiler
    return _NoAlias


_NoAlias = None


def njit_calling(namespace, helpers, fn, noalias=False):
    """``fn`` compiled (``njit``) where it calls the functions ``helpers`` ({name: function}) of
    its module, whose globals are ``namespace``: numba reads a function's globals when it
    compiles it, so each helper there becomes its compiled version first (callees listed
    before callers; the module's Python code keeps what it imported by name). None if any
    cannot be compiled; ``noalias`` as ``njit``'s for ``fn``."""
    for name, helper in helpers.items():
        if namespace[name] is helper:
            namespace[name] = njit(helper)
        if namespace[name] is None:
            return None
    return njit(fn, noalias)


def warm_loop(state, warm_runs, namespace, helpers, loops, name, noalias=False):
    """A module's compiled loop ``name`` (of ``loops``, calling its ``helpers``: see
    ``njit_calling``), or None: while the module's loops together have been asked for no more
    than ``warm_runs`` times (``state["runs"]`` counts), without numba, or where compiling failed
    (``state[name]`` None: not tried again). The module's numpy code runs when it is None.
    ``noalias``: the loops' array arguments never overlap (``njit``)."""
    if state["runs"] <= warm_runs:
        state["runs"] += 1
        return None
    if name not in state:
        state[name] = None
        state[name] = njit_calling(namespace, helpers, loops[name], noalias)
    return state[name]


class WarmKernel:
    """A loop compiled (``njit``) once a process has asked to run it ``after`` times: calling
    it runs the compiled loop and says whether it ran, False before the warm-up, without numba
    or where it failed (then it is not tried again), and the caller runs its numpy code. The
    loops do the numpy code's float operations in the same order, so switching changes no
    number; tests and short runs never pay numba's import and start-up."""

    def __init__(self, fn, after):
        self.fn, self.after = fn, after
        self.runs = 0
        self.compiled = None  # the compiled loop once made; False: none

    def ready(self):
        """The compiled loop, or None (before the warm-up, without numba, or where it failed):
        a request counted as ``__call__`` counts it, for a caller that runs the loop itself
        (over parts of its arrays on several threads); if the loop raises, the caller sets
        ``compiled`` to False and runs its numpy code."""
        if self.compiled is False:
            return None
        self.runs += 1
        if self.runs <= self.after:
            return None
        if self.compiled is None:
            self.compiled = njit(self.fn) or False
        return self.compiled or None

    def __call__(self, *args) -> bool:
        return self.value(*args) is not SKIPPED

    def value(self, *args):
        """What the compiled loop returns, or SKIPPED where it did not run."""
        loop = self.ready()
        if loop is None:
            return SKIPPED
        try:
            return loop(*args)
        except Exception:  # noqa: BLE001 - e.g. a type numba cannot compile: numpy's code remains
            self.compiled = False
            return SKIPPED


#: ``WarmKernel.value`` where the compiled loop did not run
SKIPPED = object()
