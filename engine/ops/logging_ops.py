"""``tf.Print``: an identity that writes the values of some tensors to stderr each time it
runs (TF1's debugging op), in TF's format: ``message`` then each tensor in brackets, as TF's
PrintOp and SummarizeValue write it (``[1 2 3...]``, ``[[0 1 2 3][4...]...]``), at most
``summarize`` (default 3) values each; only the first ``first_n`` runs print when
``first_n`` is given."""

from __future__ import annotations

import sys

import numpy as np

from ..framework.registry import apply, register
from .core import convert_to_tensor


def summarize_value(value, limit):
    """TF's Tensor::SummarizeValue (PrintOneDim): the first ``limit`` values, brackets around
    each row of the dimensions above the last, "..." where values were left out."""
    value = np.asarray(value)
    if value.ndim == 0:
        return _scalar(value)
    flat, out, index = value.ravel(), [], [0]

    def dim(d):
        n = value.shape[d]
        if d == value.ndim - 1:
            for i in range(n):
                if index[0] >= limit:
                    if d != 0 and i > 0:
                        out.append("...")
                    return
                out.append((" " if i else "") + _scalar(flat[index[0]]))
                index[0] += 1
            return
        for _ in range(n):
            opened = index[0] < limit
            if opened:
                out.append("[")
            dim(d + 1)
            if index[0] < limit or opened:
                out.append("]")

    dim(0)
    if flat.size > limit:
        out.append("...")
    return "".join(out)


def _scalar(v):
    """One value as TF's StrCat writes it: floats the shortest of %.{6,9}g (float32) or
    %.{15,17}g (float64) that reads back the same, bools as 1/0."""
    v = np.asarray(v)
    if v.dtype.kind in "SO":
        return v.item().decode() if isinstance(v.item(), bytes) else str(v.item())
    if v.dtype.kind == "b":
        return "1" if v else "0"
    if v.dtype.kind != "f":
        return str(v.item())
    short, full = (6, 9) if v.dtype.itemsize <= 4 else (15, 17)
    text = f"{v.item():.{short}g}"
    return text if v.dtype.type(text) == v else f"{v.item():.{full}g}"


def _print_forward(state, op, x, *data):
    a = op.attrs
    runs = getattr(op, "_print_runs", 0)
    op._print_runs = runs + 1
    if a["first_n"] is None or a["first_n"] < 0 or runs < a["first_n"]:
        limit = 3 if a["summarize"] is None else a["summarize"]
        sys.stderr.write(a["message"] + "".join(f"[{summarize_value(d, limit)}]" for d in data)
                         + "\n")
        sys.stderr.flush()
    return x


register("Print", _print_forward, lambda inputs, **_: [(inputs[0].dtype, inputs[0].shape)],
         grad=lambda op, g: [g] + [None] * (len(op.inputs) - 1), stateful=True)


def Print(input_, data, message=None, first_n=None, summarize=None, name=None):  # noqa: N802
    """``input_`` unchanged; running it writes ``message`` and the values of the tensors in
    ``data`` to stderr (TF1's ``tf.Print``)."""
    return apply("Print", [convert_to_tensor(input_)] + [convert_to_tensor(d) for d in data],
                 name=name or "Print", message=message or "", first_n=first_n,
                 summarize=summarize)
