"""DropoutMask's float32 mask drawn in one compiled loop from the PCG64 generator's own state
(the ``fast`` extra): the same mask and the same stream as ``dropout._kept_from_bits``.

numpy's ``random_raw`` costs about 2 ns an output here (a call through a function pointer per
draw), and the comparison and the float mask are two more passes: digits_cnn's [64, 512] mask
took 45 us warm and 60-85 us inside a training step. This loop steps PCG64 itself (numpy's
``pcg64.h``: the 128-bit LCG ``state = state * M + inc``, then the XSL-RR output ``rotr(hi ^
lo, hi >> 58)``), compares each output's low then high 32 bits with the threshold and writes
``scale`` or 0 in one pass, reading and writing the generator's state where numpy keeps it
(``bit_generator.ctypes.state_address``: a ``pcg64_state`` whose first field points at the
128-bit state and increment, then ``has_uint32``). The generator is left exactly where
``random_raw`` leaves it, so switching between this loop and numpy's code changes no mask.

``mask_loop()`` is None (numpy's draws run) for the first ``WARM_RUNS`` masks of a process,
without numba, with ``GRADPIPE_NUMBA=0``, and where the state's memory layout or the outputs
disagree with numpy's ``random_raw`` on a fresh generator (checked once, before first use).
"""

from __future__ import annotations

import numpy as np

from ..framework import jit

#: masks drawn in a process before the loop is compiled (a short run never starts numba)
WARM_RUNS = 50
#: PCG64's 128-bit multiplier (numpy's PCG_DEFAULT_MULTIPLIER_HIGH / _LOW)
_MULT_HIGH, _MULT_LOW = 2549297995355413924, 4865540595714422341
#: numba intrinsics made before the loop compiles (_intrinsics)
_mulhi = _u64_pointer = _carray = None
_state: dict = {}


def _intrinsics():
    """Two numba intrinsics: ``mulhi(a, b)``, the high 64 bits of a 128-bit product, and
    ``u64_pointer(address)``, an integer address as a pointer to uint64 (for numba.carray)."""
    from llvmlite import ir
    from numba import types
    from numba.extending import intrinsic

    i64, i128 = ir.IntType(64), ir.IntType(128)

    @intrinsic
    def mulhi(typingctx, a, b):
        if not (a == types.uint64 and b == types.uint64):
            return None

        def codegen(context, builder, signature, args):
            product = builder.mul(builder.zext(args[0], i128), builder.zext(args[1], i128))
            return builder.trunc(builder.lshr(product, ir.Constant(i128, 64)), i64)

        return types.uint64(a, b), codegen

    @intrinsic
    def u64_pointer(typingctx, address):
        if not isinstance(address, types.Integer):
            return None

        def codegen(context, builder, signature, args):
            return builder.inttoptr(args[0], i64.as_pointer())

        return types.CPointer(types.uint64)(address), codegen

    return mulhi, u64_pointer


def _mul128(a_lo, a_hi, b_lo, b_hi):
    """(low, high) words of ``a * b`` modulo 2 ** 128."""
    return a_lo * b_lo, _mulhi(a_lo, b_lo) + a_lo * b_hi + a_hi * b_lo


def _affine(s_lo, s_hi, a_lo, a_hi, c_lo, c_hi):
    """(low, high) words of ``s * a + c`` modulo 2 ** 128: one LCG step of the map (a, c)."""
    p_lo, p_hi = _mul128(s_lo, s_hi, a_lo, a_hi)
    lo = p_lo + c_lo
    return lo, p_hi + c_hi + (np.uint64(1) if lo < p_lo else np.uint64(0))


def _emit(lo, hi, k, threshold, scale, out):
    """PCG64's XSL-RR output of the state (lo, hi), its low then high 32 bits compared with the
    threshold: ``out[2k]``, ``out[2k + 1]`` = ``float32(bits >= threshold) * scale``, numpy's
    ``multiply(keep, scale)`` of the boolean. No branch: ``(bits - threshold) >> 63`` is 1 below
    the threshold (the random comparisons would be mispredicted half the time)."""
    rot = hi >> np.uint64(58)
    mixed = hi ^ lo
    value = (mixed >> rot) | (mixed << ((np.uint64(64) - rot) & np.uint64(63)))
    one, sign = np.uint64(1), np.uint64(63)
    low = value & np.uint64(0xFFFFFFFF)
    high = value >> np.uint64(32)
    out[2 * k] = np.float32(np.int32(one - ((low - threshold) >> sign))) * scale
    out[2 * k + 1] = np.float32(np.int32(one - ((high - threshold) >> sign))) * scale


def _draw_mask(state_address, pairs, threshold, scale, out):
    """Whether it drew: ``out[2k]``, ``out[2k + 1]`` = ``scale`` where the low, the high 32 bits
    of PCG64's k-th next output are at least ``threshold``, else 0, for ``pairs`` outputs, the
    generator's state advanced as ``random_raw(pairs)`` advances it; nothing where the generator
    holds a buffered half (``has_uint32``, the low word after the state pointer).
    ``state_address`` is numpy's ``pcg64_state``, whose first word points at the state (low,
    high) and increment (low, high), numpy's native 128-bit integers. The LCG's steps are a
    serial chain of 128-bit products, so after the first four outputs four lanes advance by
    four steps at a time (the map composed with itself: ``state * M^4 + C4``), then the last
    steps one by one."""
    threshold = np.uint64(threshold)
    header = _carray(_u64_pointer(state_address), 2)
    if header[1] & np.uint64(0xFFFFFFFF):
        return False
    words = _carray(_u64_pointer(header[0]), 4)
    m_lo, m_hi = np.uint64(_MULT_LOW), np.uint64(_MULT_HIGH)
    i_lo, i_hi = words[2], words[3]
    lo, hi = words[0], words[1]
    head = min(pairs, 4)
    lanes = np.empty(8, np.uint64)
    for k in range(head):
        lo, hi = _affine(lo, hi, m_lo, m_hi, i_lo, i_hi)
        _emit(lo, hi, k, threshold, scale, out)
        lanes[2 * k], lanes[2 * k + 1] = lo, hi
    k = head
    if pairs >= 8:
        # (M, inc) composed twice with itself: (M^2, M inc + inc), then (M^4, M^2 C2 + C2)
        m2_lo, m2_hi = _mul128(m_lo, m_hi, m_lo, m_hi)
        c2_lo, c2_hi = _affine(i_lo, i_hi, m_lo, m_hi, i_lo, i_hi)
        m4_lo, m4_hi = _mul128(m2_lo, m2_hi, m2_lo, m2_hi)
        c4_lo, c4_hi = _affine(c2_lo, c2_hi, m2_lo, m2_hi, c2_lo, c2_hi)
        a_lo, a_hi, b_lo, b_hi = lanes[0], lanes[1], lanes[2], lanes[3]
        c_lo, c_hi, d_lo, d_hi = lanes[4], lanes[5], lanes[6], lanes[7]
        while k + 4 <= pairs:
            a_lo, a_hi = _affine(a_lo, a_hi, m4_lo, m4_hi, c4_lo, c4_hi)
            b_lo, b_hi = _affine(b_lo, b_hi, m4_lo, m4_hi, c4_lo, c4_hi)
            c_lo, c_hi = _affine(c_lo, c_hi, m4_lo, m4_hi, c4_lo, c4_hi)
            d_lo, d_hi = _affine(d_lo, d_hi, m4_lo, m4_hi, c4_lo, c4_hi)
            _emit(a_lo, a_hi, k, threshold, scale, out)
            _emit(b_lo, b_hi, k + 1, threshold, scale, out)
            _emit(c_lo, c_hi, k + 2, threshold, scale, out)
            _emit(d_lo, d_hi, k + 3, threshold, scale, out)
            k += 4
        lo, hi = d_lo, d_hi
    for j in range(k, pairs):
        lo, hi = _affine(lo, hi, m_lo, m_hi, i_lo, i_hi)
        _emit(lo, hi, j, threshold, scale, out)
    words[0], words[1] = lo, hi
    return True


_HELPERS = {"_mul128": _mul128, "_affine": _affine, "_emit": _emit}


def _agrees(loop) -> bool:
    """The loop on a fresh generator against ``random_raw`` on its twin: the masks of three
    draws (thresholds 0, 2 ** 31 and 2 ** 32 - 256), the state after them, and nothing drawn
    from a generator holding a buffered half."""
    half = np.random.Generator(np.random.PCG64(5))
    half.random(1, dtype=np.float32)  # draws 64 bits, keeps the high half for the next draw
    before = half.bit_generator.state
    out = np.empty(2, np.float32)
    if loop(half.bit_generator.ctypes.state_address, 1, 0, np.float32(2.0), out) \
            or half.bit_generator.state != before:
        return False
    ours, numpys = np.random.PCG64([12, 34]), np.random.PCG64([12, 34])
    for threshold in (0, 1 << 31, (1 << 32) - 256):
        out = np.empty(2 * 1001, np.float32)
        if not loop(ours.ctypes.state_address, 1001, threshold, np.float32(2.0), out):
            return False
        raw = numpys.random_raw(1001).view(np.uint32)
        if not np.array_equal(out, np.multiply(raw >= threshold, np.float32(2.0))):
            return False
    return ours.state == numpys.state and ours.random_raw() == numpys.random_raw()


def mask_loop():
    """The compiled loop ``(state_address, pairs, threshold, scale, out) -> drew``, or None
    (see the module's docstring)."""
    if "loop" in _state:
        return _state["loop"]
    runs = _state["runs"] = _state.get("runs", 0) + 1
    if runs <= WARM_RUNS:
        return None
    _state["loop"] = None
    if not jit.enabled():
        return None
    try:
        import numba

        globals().update(zip(("_mulhi", "_u64_pointer"), _intrinsics()), _carray=numba.carray)
        loop = jit.njit_calling(globals(), _HELPERS, _draw_mask)
        if loop is not None and _agrees(loop):
            _state["loop"] = loop
    except Exception:  # noqa: BLE001 - an optional accelerator: numpy's draws remain
        _state["loop"] = None
    return _state["loop"]


def draw(bits, n, threshold, scale):
    """``n`` (even) float32 values, ``scale`` (float32) where the next 32 random bits of the
    PCG64 generator ``bits`` are at least ``threshold``, else 0 (the generator advanced by
    ``n / 2`` outputs); None where the compiled loop is not used (then nothing is drawn)."""
    loop = mask_loop()
    if loop is None:
        return None
    out = np.empty(n, np.float32)
    with bits.lock:
        drew = loop(bits.ctypes.state_address, n // 2, threshold, scale, out)
    return out if drew else None
