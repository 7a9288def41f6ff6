"""The engine's compute threads: the BLAS library behind numpy runs on the count the engine sets.

float32 matrix products depend on how the BLAS library cuts them between its threads (and on its
kernels), so a count taken from whatever OPENBLAS_NUM_THREADS / OMP_NUM_THREADS /
MKL_NUM_THREADS the process happened to start with made the same graph give other numbers in
pytest than on the command line. Instead, every session run and every eager op first makes the
BLAS library (OpenBLAS, MKL or BLIS, reached through threadpoolctl) use the engine's count:

- ``Session(config=ConfigProto(intra_op_parallelism_threads=N))`` for one session (0: the default);
- ``GRADPIPE_BLAS_THREADS=N`` in the environment for the default, else 1 (config-sized models gain
  nothing from more, and on shared cores OpenBLAS's spinning threads make small products slower).

Results are then bit-identical on one machine with the same library versions, whatever the
thread variables of the environment say. The count is set for the whole process (BLAS has one);
the engine remembers what it set last and calls into the library only when a run wants another
count. OpenBLAS's own setter is called directly through ctypes (about 1 us a switch against
threadpoolctl's 2.4-2.8, which also looks the symbol up and checks which Python thread controls
the library at each call: a kernel switching BLAS to one thread and back for its parts does so
some thirty times in a LeNet step); other libraries through threadpoolctl. A new session
checks again at its first run; code that changes the count between the runs of one session
behind the engine's back says so with ``invalidate()``.
"""

from __future__ import annotations

import ctypes
import os
import threading

#: the environment variable holding the default count
ENV = "GRADPIPE_BLAS_THREADS"

_lock = threading.Lock()
_libraries = None  # threadpoolctl's controllers of the BLAS libraries numpy loaded
_setters = None  # per library, a function setting its thread count
#: OpenBLAS's setter under the names its builds export (numpy's wheels: scipy_openblas's)
_OPENBLAS_SETTERS = ("openblas_set_num_threads", "scipy_openblas_set_num_threads64_",
                     "scipy_openblas_set_num_threads", "openblas_set_num_threads64_")
_current: int | None = None  # the count the engine last set
_intra: int | None = None  # the count the running session (or eager op) computes with


def default_blas_threads() -> int:
    """The count a session uses unless its config says otherwise: GRADPIPE_BLAS_THREADS, else 1."""
    text = os.environ.get(ENV, "").strip()
    if not text:
        return 1
    try:
        count = int(text)
    except ValueError:
        count = 0
    if count < 1:
        raise ValueError(f"{ENV}={text!r}: the BLAS threads the engine computes with, an integer "
                         ">= 1")
    return count


def blas_threads_of(config) -> int:
    """The count a session with this ``config`` uses: its ``intra_op_parallelism_threads`` when
    positive (TF's ConfigProto field), else the default."""
    count = getattr(config, "intra_op_parallelism_threads", 0) if config is not None else 0
    if isinstance(count, bool) or not isinstance(count, int) or count < 0:
        raise ValueError(f"intra_op_parallelism_threads: an integer >= 0 (0: the default), got "
                         f"{count!r}")
    return count or default_blas_threads()


def _blas_libraries():
    global _libraries
    if _libraries is None:
        import numpy  # noqa: F401  (loads the BLAS library threadpoolctl looks for)
        from threadpoolctl import ThreadpoolController

        _libraries = ThreadpoolController().select(user_api="blas").lib_controllers
    return _libraries


def _setter(library):
    """OpenBLAS's own ``openblas_set_num_threads`` (pthreads builds: one process-wide count) as a
    ctypes function, else the library's threadpoolctl controller's ``set_num_threads``."""
    if library.internal_api == "openblas" and library.threading_layer != "openmp":
        try:
            dll = ctypes.CDLL(library.filepath)
        except OSError:
            return library.set_num_threads
        for name in _OPENBLAS_SETTERS:
            fn = getattr(dll, name, None)
            if fn is not None:
                fn.argtypes, fn.restype = [ctypes.c_int], None
                return fn
    return library.set_num_threads


def _blas_setters():
    global _setters
    if _setters is None:
        _setters = [_setter(library) for library in _blas_libraries()]
    return _setters


def use_blas_threads(count: int) -> None:
    """Make the BLAS library compute on ``count`` threads (nothing to do when it already does),
    the count of the run that starts: its ops may cut their work among that many threads."""
    global _intra
    _intra = count
    _set_blas_threads(count)


def _set_blas_threads(count: int) -> None:
    global _current
    if count == _current:
        return
    with _lock:
        for setter in _blas_setters():
            setter(count)
        _current = count


def intra_op_threads() -> int:
    """The threads an op of the running session may compute on: the count of the last
    ``use_blas_threads`` (the session's ``intra_op_parallelism_threads``), 1 before any run.
    Kernels that cut their work among the engine's workers (``framework/workers.py``) use at
    most this many."""
    return _intra or 1


class OneBlasThread:
    """``with OneBlasThread():`` BLAS computes on one thread inside, on the run's count after:
    for a kernel that cuts a product into parts on the engine's workers, each part's product
    on its own thread (BLAS's count is the process's: at two, two threads calling it at once
    would each hand half of their product to BLAS's threads too). A switch costs about a
    microsecond; the kernel's threads must all have finished when the block ends."""

    def __enter__(self):
        self.previous = _current
        _set_blas_threads(1)
        return self

    def __exit__(self, *exc):
        if self.previous is not None:
            _set_blas_threads(self.previous)


def invalidate() -> None:
    """Say that the BLAS thread count was changed outside the engine (threadpoolctl, another
    library): the next run sets its own count again instead of trusting the one it set last."""
    global _current
    _current = None


def blas_threads() -> list[int]:
    """The thread count each BLAS library numpy loaded reports now (for tests and diagnostics)."""
    return [library.get_num_threads() for library in _blas_libraries()]
