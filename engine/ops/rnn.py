"""The sequence op ``rnn``: a tanh or LSTM cell unrolled over time, with backpropagation through
time in a companion op.

Layout (TF's BasicRNNCell / BasicLSTMCell, so TF checkpoints and reference numbers carry over):

- ``x`` is time-major, ``[time, batch, features]``.
- one ``kernel`` acts on ``concat([x_t, h_{t-1}], axis=1)``: its first ``features`` rows take the
  input, the last ``hidden`` rows the previous hidden state; ``bias`` is added after the matmul.
- tanh cell: kernel ``[features + hidden, hidden]``, bias ``[hidden]``::

      h_t = tanh(concat([x_t, h_{t-1}]) @ kernel + bias)

- LSTM cell: kernel ``[features + hidden, 4 * hidden]``, bias ``[4 * hidden]``; the gate columns
  are in TF's order i, j, f, o::

      i, j, f, o = split(concat([x_t, h_{t-1}]) @ kernel + bias, 4, axis=1)
      c_t = c_{t-1} * sigmoid(f + forget_bias) + sigmoid(i) * tanh(j)
      h_t = tanh(c_t) * sigmoid(o)

The hidden size follows from the kernel's width. The initial state is zeros unless given
(``h0``, and ``c0`` for the LSTM, each ``[batch, hidden]``).

Ops: ``Rnn`` outputs all hidden states ``[time, batch, hidden]`` and, for the LSTM, all cell
states too (a second output, so that the final LSTM state is available and differentiable) and a
third, internal one: the reserve (flat, ``time * batch * 5 * hidden``), the gate activations and
tanh(c_t) of every step, which the API functions do not return (TF's fused RNN kernels hand their gradient
the same in ``reserve_space``). Its gradient rule adds one ``RnnGrad`` op, whose forward runs
backpropagation through time in numpy from what the forward pass of the same run kept (no second
recurrence) and returns the gradients of x, kernel, bias and the given initial state. The tanh
cell needs no reserve (tanh' = 1 - h_t**2). ``RnnGrad`` itself has no gradient (no second-order
derivatives through ``rnn``); differentiating it raises LookupError.

Each step is one GEMM for all gates (the input half ``x_t @ w_x + bias`` of every step is one GEMM
before the loop) and a few in-place ufuncs on buffers made once per run of the op; the LSTM
works in an internal gate order (see _gate_order) so that no step splits or transposes. With the
``fast`` extra (numba), float32 runs with hidden sizes up to MAX_COMPILED_HIDDEN use compiled time
loops (rnn_compiled.py) after the op's first WARM_RUNS runs in a process: the same kernels and
arithmetic, bit for bit, without numpy's per-call overhead.
"""

from __future__ import annotations

import functools

import numpy as np

from ..framework.errors import ShapeError
from ..framework.registry import apply, export, register
from ..framework.tensor_shape import TensorShape
from . import rnn_compiled
from .core import as_tensors, convert_to_tensor, zeros_like

CELLS = ("tanh", "lstm")
_GATES = {"tanh": 1, "lstm": 4}  # kernel columns per hidden unit
_STATES = {"tanh": 1, "lstm": 2}  # state tensors per cell: (h,) and (c, h), in TF's order
_OUTPUTS = {"tanh": 1, "lstm": 3}  # Rnn's outputs: h_all (tanh); h_all, c_all, reserve (lstm)
#: runs of the op (forward or gradient) in this process before the compiled loops are used
WARM_RUNS = 50
#: the largest hidden size the compiled loops are used for
MAX_COMPILED_HIDDEN = 256
_runs = [0]


# -- shape rule ----------------------------------------------------------------------------


def _rnn_infer(inputs, cell, forget_bias, with_state):
    """Check x, kernel, bias and the initial state against each other; return Rnn's outputs."""
    x, kernel, bias, *state = inputs
    for t in inputs[1:]:
        if t.dtype != x.dtype:
            raise TypeError(f"rnn: {t.name} has dtype {t.dtype.name} but x ({x.name}) has "
                            f"dtype {x.dtype.name}; all inputs must share one float dtype")
    if not x.dtype.is_floating:
        raise TypeError(f"rnn: x ({x.name}) must be a float tensor, got {x.dtype.name}")
    if x.shape.ndims not in (None, 3):
        raise ShapeError(f"x must be [time, batch, features], got shape {x.shape}")
    if kernel.shape.ndims != 2 or not kernel.shape.is_fully_defined():
        raise ShapeError(f"kernel must be a matrix of known shape, got shape {kernel.shape}")
    rows, cols = kernel.shape.dims
    gates = _GATES[cell]
    layout = "[features + hidden, hidden]" if cell == "tanh" else \
        "[features + hidden, 4 * hidden]"
    if cols % gates:
        raise ShapeError(f"{cell} kernel shape {kernel.shape} must be {layout}: "
                         f"its width {cols} is not a multiple of 4")
    hidden = cols // gates
    features = None if x.shape.dims is None else x.shape.dims[2]
    if features is not None and rows != features + hidden:
        raise ShapeError(f"{cell} kernel shape {kernel.shape} does not fit x shape {x.shape}: "
                         f"expected {layout} = [{features} + {hidden}, {cols}]")
    if not bias.shape.is_compatible_with([cols]):
        raise ShapeError(f"bias shape {bias.shape} does not fit kernel shape {kernel.shape}: "
                         f"expected ({cols},)")
    time, batch = (None, None) if x.shape.dims is None else x.shape[:2]
    for name, s in zip(("c0", "h0") if cell == "lstm" else ("h0",), state):
        if not s.shape.is_compatible_with([batch, hidden]):
            raise ShapeError(f"initial state {name} shape {s.shape} does not fit x shape "
                             f"{x.shape} and kernel shape {kernel.shape}: expected "
                             f"[batch, hidden] = {TensorShape([batch, hidden])}")
    out = (x.dtype, TensorShape([time, batch, hidden]))
    if cell == "tanh":
        return [out]
    size = None if time is None or batch is None else time * batch * 5 * hidden
    return [out, out, (x.dtype, TensorShape([size]))]


def _check_runtime(x, kernel, cell):
    """Shapes unknown at graph-build time are checked when the plan runs."""
    hidden = kernel.shape[1] // _GATES[cell]
    if x.ndim != 3 or kernel.shape[0] != x.shape[2] + hidden:
        raise ValueError(f"{cell} kernel shape {kernel.shape} does not fit x shape {x.shape}")
    return hidden


def _initial_state(state, x, hidden, cell):
    """The given (c0, h0) / (h0,) arrays, or zeros."""
    if state:
        return state
    zeros = np.zeros((x.shape[1], hidden), x.dtype)
    return (zeros,) * _STATES[cell]


# -- forward -------------------------------------------------------------------------------


@functools.cache
def _gate_order(hidden):
    """Kernel columns in the op's internal gate order (j, i, f, o) from TF's (i, j, f, o); the
    swap of the first two blocks is its own inverse. The three sigmoid gates (i, f, o) are then
    adjacent for the forward pass and the three gates whose gradient is dL/dc times a factor
    (j, i, f) for the backward pass, so each step works on two slices rather than four. Made
    once per hidden size (read-only: it only indexes)."""
    order = np.r_[hidden:2 * hidden, 0:hidden, 2 * hidden:4 * hidden]
    order.flags.writeable = False
    return order


def _lstm_weights(kernel, bias, forget_bias, hidden, k=None):
    """Kernel and bias in the internal gate order, forget_bias added to f's bias, and the
    columns of the sigmoid gates halved: sigmoid(z) = 0.5 * tanh(z / 2) + 0.5 (no overflow for
    large |z|), and halving is exact in binary floating point, so one tanh over all four gates
    of a step computes them. New C-contiguous arrays; with the compiled ``k``, in one pass."""
    if k is not None:
        out = np.empty(kernel.shape, kernel.dtype), np.empty(bias.shape, bias.dtype)
        if rnn_compiled.run("lstm_weights", kernel, bias, kernel.dtype.type(forget_bias), *out):
            return out
    order = _gate_order(hidden)
    kernel, bias = kernel[:, order], bias[order]  # copies
    half = kernel.dtype.type(0.5)
    bias[2 * hidden:3 * hidden] += forget_bias
    kernel[:, hidden:] *= half
    bias[hidden:] *= half
    return kernel, bias


def _compiled(dtype, batch, hidden):
    """The compiled loops (rnn_compiled.py) where they apply and the op has run WARM_RUNS times
    in this process, else None; asked once per run of the op. They agree with the numpy loops
    bit for bit, so switching to them changes no number; short runs and the tests never pay
    numba's start-up (about a second). Small float32 sizes only: where a step's ufunc calls cost
    more than its GEMM; numpy's matmul takes another BLAS routine when a dimension is 1."""
    if dtype != np.float32 or batch < 2 or not 2 <= hidden <= MAX_COMPILED_HIDDEN:
        return None
    _runs[0] += 1
    return rnn_compiled.kernels() if _runs[0] > WARM_RUNS else None


def _input_product(x2d, w_x, out, k):
    """out = x2d @ w_x, the input half of every step's gates at once; with the compiled ``k``,
    for a few features, as the fma chains numpy's BLAS computes (rnn_compiled._thin_product:
    the same bits, checked once against np.matmul) without BLAS's packing."""
    if k is not None and k["thin"] and x2d.shape[1] <= rnn_compiled.MAX_THIN_FEATURES \
            and x2d.shape[0] >= 2 and out.shape[1] >= 2 and x2d.flags.c_contiguous \
            and w_x.flags.c_contiguous and rnn_compiled.run("thin_product", x2d, w_x, out):
        return out
    return np.matmul(x2d, w_x, out=out)


def _tanh_loop(w_h, bias, h0, h_all, k):
    """The tanh recurrence; ``h_all`` holds x_t @ w_x on entry, h_t on return (the compiled
    loop ``k`` adds the bias step by step, as ``(x_t @ w_x + bias) + h @ w_h``: no pass of its
    own)."""
    h = h0
    hw = np.empty(h_all.shape[1:], h_all.dtype)
    if k is not None and len(h_all) and rnn_compiled.run(
            "tanh_loop", k["gemm"], k["tanh"], k["tanh_data"], w_h, bias, h0, h_all, hw):
        return
    h_all += bias
    for t in range(len(h_all)):
        np.matmul(h, w_h, out=hw)
        h_all[t] += hw
        h = np.tanh(h_all[t], out=h_all[t])


def _reserve_parts(reserve, time, batch, hidden):
    """The LSTM's reserve (flat, so that both parts are contiguous): the gates of every step
    [time, batch, 4 * hidden] (internal order j, i, f, o), then tanh(c_t) [time, batch, hidden]."""
    n = time * batch * 4 * hidden
    return (reserve[:n].reshape(time, batch, 4 * hidden),
            reserve[n:].reshape(time, batch, hidden))


def _lstm_loop(w_h, bias, c0, h0, all_gates, tanh_c, c_all, h_all, k):
    """The LSTM recurrence, in place in buffers made once per run of the op.

    ``all_gates`` holds x_t @ w_x (internal gate order, sigmoid columns halved; see
    _lstm_weights) on entry and the activations j, i, f, o on return; with ``tanh_c`` that is
    all that backpropagation needs from the forward pass (TF's fused RNN kernels keep the same
    in their reserve space). The bias is added to every step's x_t @ w_x before h @ w_h (by
    the compiled loop step by step, saving a pass over all the gates)."""
    hidden = h_all.shape[2]
    h, c = h0, c0
    hw = np.empty(all_gates.shape[1:], all_gates.dtype)
    if k is not None and len(h_all) and rnn_compiled.run(
            "lstm_loop", k["gemm"], k["tanh"], k["tanh_data"], w_h, bias, c0, h0, all_gates,
            tanh_c, c_all, h_all, hw):
        return
    all_gates += bias
    ij = np.empty_like(h0)
    for t in range(len(h_all)):
        gates = all_gates[t]
        np.matmul(h, w_h, out=hw)
        gates += hw
        np.tanh(gates, out=gates)
        sig = gates[:, hidden:]  # i, f, o: 0.5 * tanh(z / 2) + 0.5
        sig *= 0.5
        sig += 0.5
        c = np.multiply(c, gates[:, 2 * hidden:3 * hidden], out=c_all[t])
        c += np.multiply(gates[:, :hidden], gates[:, hidden:2 * hidden], out=ij)
        np.tanh(c, out=tanh_c[t])
        h = np.multiply(tanh_c[t], gates[:, 3 * hidden:], out=h_all[t])


def _rnn_forward(x, kernel, bias, *state, cell, forget_bias, with_state):
    """Unroll the cell over time; returns h for all steps (for the LSTM also c for all steps
    and the reserve that RnnGrad reads)."""
    hidden = _check_runtime(x, kernel, cell)
    time, batch, features = x.shape
    x2d = x.reshape(time * batch, features)
    # C-contiguous states and weights: the BLAS calls of the numpy and compiled loops match
    state = [np.require(s, requirements=["C", "W"]) for s in state]
    k = _compiled(x.dtype, batch, hidden)
    if cell == "tanh":
        (h0,) = _initial_state(state, x, hidden, cell)
        # concat([x_t, h]) @ kernel == x_t @ w_x + h @ w_h; the input half for all steps at once
        h_all = _input_product(x2d, kernel[:features], np.empty((time * batch, hidden),
                                                                x.dtype), k)
        h_all = h_all.reshape(time, batch, hidden)
        _tanh_loop(np.ascontiguousarray(kernel[features:]), np.ascontiguousarray(bias), h0, h_all,
                   k)
        return h_all

    c0, h0 = _initial_state(state, x, hidden, cell)
    kernel, bias = _lstm_weights(kernel, bias, forget_bias, hidden, k)
    reserve = np.empty(time * batch * 5 * hidden, x.dtype)
    all_gates, tanh_c = _reserve_parts(reserve, time, batch, hidden)
    _input_product(x2d, kernel[:features], all_gates.reshape(time * batch, 4 * hidden), k)
    h_all = np.empty((time, batch, hidden), x.dtype)
    c_all = np.empty_like(h_all)
    _lstm_loop(kernel[features:], bias, c0, h0, all_gates, tanh_c, c_all, h_all, k)
    return h_all, c_all, reserve


# -- backward (backpropagation through time) -----------------------------------------------


def _step_inputs(x, h0, h_all, k):
    """concat([x_t, h_{t-1}, 1]) for every step, [time, batch, features + hidden + 1]: what the
    kernel multiplies, and a column of ones for the bias, so that one GEMM gives the gradients
    of both (the bias's as the last row; no separate pass summing the gate gradients). With all
    hidden states known, this needs no loop (the compiled ``k`` copies row by row: numpy's
    copies of rows of a few elements cost more than the copying)."""
    time, batch, features = x.shape
    hidden = h_all.shape[2]
    xh = np.empty((time, batch, features + hidden + 1), x.dtype)
    if k is not None and rnn_compiled.run("step_inputs", x, h0, h_all, xh):
        return xh
    xh[..., :features] = x
    if time:
        xh[0, :, features:-1] = h0
        xh[1:, :, features:-1] = h_all[:-1]
    xh[..., -1] = 1
    return xh


def _tanh_bptt(h_all, dh_all, w_h, k):
    """d(pre-activation) for every step, given dL/dh_t from outside the op."""
    dz = np.subtract(1, np.square(h_all))  # tanh' for all steps at once
    dh = np.empty(h_all.shape[1:], h_all.dtype)
    dh_next = np.zeros_like(dh)
    w_ht = np.ascontiguousarray(w_h.T)
    if k is not None and rnn_compiled.run("tanh_bptt", k["gemm"], dh_all, dz, w_ht, dh,
                                          dh_next):
        return dz, (dh_next,)
    for t in reversed(range(len(h_all))):
        np.add(dh_all[t], dh_next, out=dh)
        np.multiply(dh, dz[t], out=dz[t])
        np.matmul(dz[t], w_ht, out=dh_next)
    return dz, (dh_next,)


def _lstm_bptt(reserve, c0, c_all, dh_all, dc_all, w_ht, k):
    """d(gate pre-activations) for every step [time, batch, 4, hidden] in the internal gate
    order, given dL/dh_t and dL/dc_t from outside the op (``dc_all`` None: zeros, nothing read
    the cell states), the forward pass's reserve and the transposed recurrent weights ``w_ht``
    (see _recurrent_weights_t)."""
    time, batch, hidden = c_all.shape
    all_gates, tanh_c = _reserve_parts(reserve, time, batch, hidden)
    dgates = np.empty((time, batch, 4, hidden), c_all.dtype)
    dh_next, dc_next = np.zeros((batch, hidden), c_all.dtype), np.zeros((batch, hidden),
                                                                         c_all.dtype)
    has_dc = dc_all is not None
    if k is not None and rnn_compiled.run("lstm_bptt", k["gemm"], all_gates, tanh_c, c0, c_all,
                                          dh_all, dc_all if has_dc else dh_all, has_dc, w_ht,
                                          dgates, dh_next, dc_next):
        return dgates, (dc_next, dh_next)

    dh, dc = np.empty((batch, hidden), c_all.dtype), np.empty((batch, hidden), c_all.dtype)
    j, i, f, o = (all_gates[..., k * hidden:(k + 1) * hidden] for k in range(4))
    c_prev = np.empty_like(c_all)
    if time:
        c_prev[0], c_prev[1:] = c0, c_all[:-1]
    # Local derivatives for all steps at once: dL/d(j, i, f pre-activation) = dc * dc_factor,
    # dL/d(o pre-activation) = dh * do_factor, and h_t reaches c_t through dh_dc.
    dc_factor = np.empty((time, batch, 3, hidden), c_all.dtype)
    np.multiply(i, 1 - j * j, out=dc_factor[:, :, 0])
    np.multiply(j * i, 1 - i, out=dc_factor[:, :, 1])
    np.multiply(c_prev * f, 1 - f, out=dc_factor[:, :, 2])
    do_factor = tanh_c * o * (1 - o)
    dh_dc = o * (1 - tanh_c * tanh_c)
    for t in reversed(range(time)):
        np.add(dh_all[t], dh_next, out=dh)
        np.multiply(dh, dh_dc[t], out=dc)
        if has_dc:
            dc += dc_all[t]
        dc += dc_next
        np.multiply(dc[:, None, :], dc_factor[t], out=dgates[t, :, :3])
        np.multiply(dh, do_factor[t], out=dgates[t, :, 3])
        np.multiply(dc, f[t], out=dc_next)
        np.matmul(dgates[t].reshape(batch, 4 * hidden), w_ht, out=dh_next)
    return dgates, (dc_next, dh_next)


def _recurrent_weights_t(kernel, features, hidden, k):
    """The LSTM kernel's recurrent rows in the internal gate order, transposed and C-contiguous
    ([4 * hidden, hidden]: what each BPTT step multiplies dL/d(gates) by); compiled, one pass."""
    if k is not None:
        w_ht = np.empty((kernel.shape[1], hidden), kernel.dtype)
        if rnn_compiled.run("recurrent_weights_t", kernel, features, w_ht):
            return w_ht
    return np.ascontiguousarray(kernel[features:, _gate_order(hidden)].T)


def _tf_gate_order(dweights, hidden, k):
    """The kernel's and the bias's gradients (the rows of ``dweights`` but its last, and its last
    row) with the columns back in TF's gate order (i, j, f, o): C-contiguous views of one new
    array in both loops. Layout matters as much as values: ``dweights[:, order]`` would give
    column-major views, and the ops reading them compute other bits from a strided vector (BLAS's
    strided sdot in L2Loss sums in another order than its contiguous one), so the numpy and the
    compiled loops gave clip_adam other grad norms from step 45."""
    out = np.empty_like(dweights)
    if k is None or not rnn_compiled.run("tf_gate_order", dweights, out[:-1], out[-1]):
        np.take(dweights, _gate_order(hidden), axis=1, out=out)
    return out[:-1], out[-1]


def _lstm_grad_compiled(x, initial, outputs, out_grads, kernel, k):
    """The LSTM's step inputs, BPTT and weight gradients in one compiled call
    (rnn_compiled._lstm_grad: the compiled pieces below and the GEMM numpy makes of xh.T @
    dgates, with no numpy call between them): (dgates, state gradients, dkernel, dbias), the
    numpy path's values in its layout; None where it did not run."""
    time, batch, features = x.shape
    hidden = kernel.shape[1] // 4
    h_all, c_all, reserve = outputs
    all_gates, tanh_c = _reserve_parts(reserve, time, batch, hidden)
    dh_all, dc_all = out_grads
    dtype = x.dtype
    dgates = np.empty((time, batch, 4, hidden), dtype)
    dh_next, dc_next = np.zeros((batch, hidden), dtype), np.zeros((batch, hidden), dtype)
    dweights = np.empty((features + hidden + 1, 4 * hidden), dtype)
    out = np.empty_like(dweights)  # the gradients in TF's order: views, as _tf_gate_order's
    has_dc = dc_all is not None
    if not rnn_compiled.run(
            "lstm_grad", k["gemm"], x, initial[-1], h_all, all_gates, tanh_c, initial[0], c_all,
            dh_all, dc_all if has_dc else dh_all, has_dc, kernel,
            np.empty((time, batch, features + hidden + 1), dtype),
            np.empty((4 * hidden, hidden), dtype), dgates, dh_next, dc_next, dweights, out[:-1],
            out[-1]):
        return None
    return dgates, (dc_next, dh_next), out[:-1], out[-1]


def _rnn_grad_forward(x, kernel, bias, *rest, cell, forget_bias, with_state, zero_dc=False,
                      needed=None):
    """Gradients of x, kernel, bias (and the given initial state) from the upstream gradients
    of Rnn's outputs. Inputs: Rnn's inputs, then its outputs, then the gradients of the
    outputs a user sees (not of the reserve; with ``zero_dc`` not of the LSTM's cell states,
    whose gradient is zeros: see _rnn_grad). ``needed`` (from the plan, see
    ``OpDef.skips_unused``): which outputs are read; x's gradient is not computed when it is not
    (x is usually data)."""
    n_state = _STATES[cell] if with_state else 0
    n_out = _OUTPUTS[cell]
    state = rest[:n_state]
    outputs, out_grads = rest[n_state:n_state + n_out], rest[n_state + n_out:]
    if zero_dc:
        out_grads = (out_grads[0], None)
    hidden = _check_runtime(x, kernel, cell)
    time, batch, features = x.shape
    initial = _initial_state(state, x, hidden, cell)
    k = _compiled(x.dtype, batch, hidden)
    want_dx = needed is None or needed[0]
    if cell == "lstm" and k is not None and time:
        grads = _lstm_grad_compiled(x, initial, outputs, out_grads, kernel, k)
        if grads is not None:
            dgates, dstate, dkernel, dbias = grads
            dx = None
            if want_dx:
                w_x = kernel[:features, _gate_order(hidden)]
                dx = (dgates.reshape(time * batch, kernel.shape[1]) @ w_x.T).reshape(x.shape)
            return (dx, dkernel, dbias, *dstate[:n_state])
    xh = _step_inputs(x, initial[-1], outputs[0], k).reshape(time * batch, features + hidden + 1)

    if cell == "tanh":
        dgates, dstate = _tanh_bptt(outputs[0], out_grads[0], kernel[features:], k)
        w_x = kernel[:features] if want_dx else None
    else:
        w_ht = _recurrent_weights_t(kernel, features, hidden, k)
        dgates, dstate = _lstm_bptt(outputs[2], initial[0], outputs[1], *out_grads, w_ht, k)
        w_x = kernel[:features, _gate_order(hidden)] if want_dx else None

    dg2d = dgates.reshape(time * batch, kernel.shape[1])
    dx = (dg2d @ w_x.T).reshape(x.shape) if want_dx else None
    dweights = xh.T @ dg2d  # [kernel rows + the bias row, columns]
    if cell == "lstm":  # back to TF's gate order
        dkernel, dbias = _tf_gate_order(dweights, hidden, k)
    else:
        dkernel, dbias = dweights[:-1], dweights[-1]
    return (dx, dkernel, dbias, *dstate[:n_state])


def _rnn_grad_infer(inputs, cell, forget_bias, with_state, zero_dc=False):
    n_in = 3 + (_STATES[cell] if with_state else 0)
    return [(t.dtype, t.shape) for t in inputs[:n_in]]


def _rnn_grad(op, *out_grads):
    """One RnnGrad op; the reserve is an internal output and takes no gradient. When nothing
    reads the LSTM's cell states, autodiff hands their gradient over as a ZerosLike: RnnGrad
    then neither reads it nor adds it (the plan leaves the ZerosLike out: a [time, batch,
    hidden] array of zeros per run)."""
    seen = out_grads[:_STATES[op.get_attr("cell")]]
    zero_dc = len(seen) == 2 and seen[1].op.type == "ZerosLike"
    if zero_dc:
        seen = seen[:1]
    grads = apply("RnnGrad", [*op.inputs, *op.outputs, *seen], name="RnnGrad", zero_dc=zero_dc,
                  **op.attrs)
    return list(grads)


def _no_second_order(op, *_):
    raise LookupError(f"No gradient defined for operation '{op.name}' (op type: RnnGrad): "
                      "second-order derivatives through rnn are not supported")


register("Rnn", _rnn_forward, _rnn_infer, grad=_rnn_grad)
register("RnnGrad", _rnn_grad_forward, _rnn_grad_infer, grad=_no_second_order,
         skips_unused=True)


# -- Python API ----------------------------------------------------------------------------


def rnn_states(x, kernel, bias, cell, forget_bias=1.0, h0=None, c0=None, name="rnn"):
    """Like ``rnn`` but returns ``(h_all, c_all)``; ``c_all`` is None for the tanh cell."""
    if cell not in CELLS:
        raise ValueError(f"rnn: cell must be one of {CELLS}, got {cell!r}")
    x, kernel, bias = as_tensors(x, kernel, bias)
    if cell == "tanh":
        if c0 is not None:
            raise ValueError("rnn: c0 is the LSTM cell state; the tanh cell takes only h0")
        state = [] if h0 is None else [convert_to_tensor(h0, preferred_dtype=x.dtype)]
    elif h0 is None and c0 is None:
        state = []
    else:  # one given: the other starts at zeros of the same shape
        h0 = None if h0 is None else convert_to_tensor(h0, preferred_dtype=x.dtype)
        c0 = None if c0 is None else convert_to_tensor(c0, preferred_dtype=x.dtype)
        state = [zeros_like(h0) if c0 is None else c0, zeros_like(c0) if h0 is None else h0]
    out = apply("Rnn", [x, kernel, bias, *state], name=name, cell=cell,
                forget_bias=float(forget_bias), with_state=bool(state))
    return (out, None) if cell == "tanh" else out[:2]


@export("rnn")
def rnn(x, kernel, bias, cell, forget_bias=1.0, h0=None, c0=None, name="rnn"):
    """All hidden states ``[time, batch, hidden]`` of a ``cell`` ('tanh' or 'lstm') run over the
    time-major input ``x`` ``[time, batch, features]``.

    ``kernel`` is ``[features + hidden, hidden]`` (tanh) or ``[features + hidden, 4 * hidden]``
    (lstm, gate columns i, j, f, o) and multiplies ``concat([x_t, h_{t-1}])``; ``bias`` has the
    kernel's width. ``forget_bias`` is added to the LSTM's forget gate (TF's BasicLSTMCell; unused
    by the tanh cell). ``h0`` / ``c0``: optional initial hidden / cell state ``[batch, hidden]``,
    zeros by default. There is no default cell: a ``[n, 4 * k]`` kernel fits both cells.

    Example (an LSTM over 2 input features with 8 hidden units)::

        kernel = tf.Variable(tf.random_normal([2 + 8, 4 * 8]))
        bias = tf.Variable(tf.zeros([4 * 8]))
        h_all = tf.rnn(x, kernel, bias, cell="lstm", forget_bias=1.0)   # [time, batch, 8]
        last = h_all[-1]                                               # [batch, 8]
    """
    return rnn_states(x, kernel, bias, cell, forget_bias, h0, c0, name)[0]
