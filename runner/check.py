"""``mode=check`` and ``mode=gradcheck``: look at a compiled model without training it.

``describe_model`` is what ``mode=check`` prints: the inputs, the variables with their shapes,
initializers and groups, each graph node's shape, the losses and metrics, and each group's
optimizer and pipeline. ``gradcheck`` compares the engine's gradients of every group's loss with
central finite differences at the model's initial values, on the first training batch, and
reports the worst relative error per variable. It evaluates both in a float64 twin of the model
(the same config with every float dtype set to float64, loaded with the float32 initial values),
so that the finite differences are accurate enough to judge the gradient rules.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

import engine
from engine.framework.indexed_slices import dense_value
from runner.config_specs import InitSpec, ScheduleSpec
from runner.data import Dataset
from runner.errors import ConfigErrors
from runner.model import Model, count_parameters
from runner.model_build import build_model


def _shape(t) -> str:
    dims = t.shape.dims
    if dims is None:
        return "<unknown>"
    return "[" + ", ".join("?" if d is None else str(d) for d in dims) + "]"


class _Text(str):
    """Already formatted: shown as is, not quoted."""


def _call(name: str, params: dict) -> _Text:
    inner = ", ".join(f"{k}={v!r}" if isinstance(v, str) and not isinstance(v, _Text)
                      else f"{k}={v}" for k, v in params.items())
    return _Text(f"{name}({inner})")


def _literal(value) -> str:
    value = np.asarray(value)
    return str(value.tolist()) if value.size <= 4 else f"literal {list(value.shape)}"


def _table(rows: list[tuple[str, ...]], indent: str = "  ") -> list[str]:
    if not rows:
        return []
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return [indent + "  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip()
            for row in rows]


def describe_model(model: Model, dataset: Dataset | None = None) -> str:
    """The compiled model as text (``mode=check``)."""
    spec = model.spec
    owner = {v: g.name for g in model.groups for v in g.var_names}
    lines = [f"model: {len(model.inputs)} inputs, {len(model.variables)} variables "
             f"({count_parameters(model):,} parameters), {len(model.nodes)} graph nodes, "
             f"{len(model.groups)} groups"]
    if model.inputs:
        lines.append("inputs:")
        rows = []
        for name, t in model.inputs.items():
            note = "time-major (data transposed)" if spec.inputs[name].time_major else ""
            rows.append((name, _shape(t), t.dtype.name, note))
        lines += _table(rows)
    if model.constants:
        lines.append("constants:")
        lines += _table([(name, _shape(t), t.dtype.name) for name, t in model.constants.items()])
    lines.append("variables:")
    rows = []
    for name, var in model.variables.items():
        vspec = spec.variables[name]
        init = (_call(vspec.init.name, vspec.init.params) if isinstance(vspec.init, InitSpec)
                else _literal(vspec.init))
        if not vspec.trainable:
            role = "not trainable"
        elif name in owner:
            role = f"group {owner[name]}"
        else:
            role = "frozen (no group)"
        collections = ", ".join(vspec.collections)
        rows.append((name, var.op.name, _shape(var), var.dtype.name, init, role,
                     f"collections: {collections}" if collections else ""))
    lines += _table(rows)
    if model.nodes:
        lines.append("graph:")
        lines += _table([(name, _shape(t), t.dtype.name, spec.graph[name])
                         for name, t in model.nodes.items()])
    lines.append(f"loss: {model.loss_name or '(per group)'}")
    if model.metrics:
        lines.append(f"metrics: {', '.join(model.metrics)}")
    if model.groups:
        lines.append("groups:")
    for group in model.groups:
        gspec = model.config.groups[group.name]
        lines.append(f"  {group.name}: {', '.join(group.var_names)}")
        losses = ", ".join(gspec.loss) if gspec.loss else model.loss_name
        weights = " (weighted by grad_loss)" if group.grad_loss is not None else ""
        lines.append(f"    loss: {losses}{weights}")
        lr = gspec.optimizer.learning_rate
        params = dict(gspec.optimizer.params)
        if isinstance(lr, ScheduleSpec):
            params = {"learning_rate": _call(lr.name, lr.params), **params}
        elif lr is not None:
            params = {"learning_rate": lr, **params}
        lines.append(f"    optimizer: {_call(gspec.optimizer.name, params)} "
                     f"[{type(group.optimizer).__name__}]")
        stages = [_call(stage.name, stage.params) for stage in group.pipeline.stages]
        lines.append(f"    pipeline: {' -> '.join(stages) if stages else '(none)'}")
    if model.frozen:
        lines.append(f"frozen (trainable, in no group): {', '.join(model.frozen)}")
    if dataset is not None:
        source = model.config.data.get("source")
        batch = dataset.batch_size if dataset.batch_size is not None else "full"
        lines.append(f"data: {source}, {dataset.n_train} training examples, {dataset.n_eval} "
                     f"eval, batch size {batch}")
    for warning in model.warnings:
        lines.append(f"warning: {warning}")
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------
# gradcheck
# --------------------------------------------------------------------------------------------


def _entries(size: int, limit: int, rng: np.random.Generator, grad=None) -> np.ndarray:
    """Flat indices to check: all of them, or a seeded sample of ``limit``; for a sparse
    gradient (an IndexedSlicesValue), a sample of the entries of the rows it names."""
    if isinstance(grad, engine.IndexedSlicesValue):
        rows = np.unique(grad.indices)
        width = size // int(grad.dense_shape[0])
        pool = (rows[:, None] * width + np.arange(width)).reshape(-1)
        return pool if pool.size <= limit else np.sort(rng.choice(pool, limit, replace=False))
    if size <= limit:
        return np.arange(size)
    return np.sort(rng.choice(size, size=limit, replace=False))


def gradcheck(model: Model, dataset: Dataset | None, out_dir: Path) -> int:
    """Compare engine gradients with central differences; print and write gradcheck.json.

    Returns 0 when every variable's worst relative error is within ``gradcheck.tolerance``,
    else 1.
    """
    config = model.config
    opts = config.gradcheck
    session = engine.Session(graph=model.graph)
    session.run(model.init_op)
    initial = session.run(model.variables) if model.variables else {}
    try:
        twin = build_model(config, float_dtype="float64")
        precision = "float64"
    except ConfigErrors:
        twin, precision = model, model.loss.dtype.name if model.loss is not None else "float32"
    twin_session = session
    if twin is not model:
        twin_session = engine.Session(graph=twin.graph)
        twin_session.run(twin.init_op)
        for name, value in initial.items():
            twin.variables[name].load(value, twin_session)
    # In float32 (a model whose float64 twin cannot be built) a step below ~1e-3 is lost in
    # rounding.
    epsilon = opts.epsilon if precision == "float64" else max(opts.epsilon, 1e-3)
    batch = dataset.batcher().next_batch() if dataset is not None else None
    feed = twin.feed(batch) if batch is not None else {}
    rng = np.random.default_rng(config.seed)
    results = []
    for group in twin.groups:
        engine_grads = twin_session.run(group.grads, feed)
        for var_name, var, grad in zip(group.var_names, group.variables, engine_grads):
            base = np.array(twin_session.run(var), dtype=np.float64)
            flat = base.reshape(-1)
            checked = _entries(flat.size, opts.max_entries, rng, grad)
            grad = np.asarray(dense_value(grad), dtype=np.float64)  # sparse: summed rows
            numeric = np.empty(len(checked))
            for i, index in enumerate(checked):
                values = []
                for sign in (1.0, -1.0):
                    probe = flat.copy()
                    probe[index] += sign * epsilon
                    var.load(probe.reshape(base.shape), twin_session)
                    values.append(float(twin_session.run(group.objective, feed)))
                numeric[i] = (values[0] - values[1]) / (2.0 * epsilon)
            var.load(base, twin_session)
            analytic = grad.reshape(-1)[checked]
            scale = max(float(np.max(np.abs(grad))) if grad.size else 0.0,
                        float(np.max(np.abs(numeric))) if numeric.size else 0.0)
            floor = max(1e-3 * scale, 1e-10)
            denominator = np.maximum(np.maximum(np.abs(analytic), np.abs(numeric)), floor)
            errors = np.abs(analytic - numeric) / denominator
            worst = int(np.argmax(errors)) if errors.size else 0
            results.append({
                "group": group.name, "variable": var_name, "entries": int(flat.size),
                "checked": int(len(checked)),
                "worst_relative_error": float(errors[worst]) if errors.size else 0.0,
                "worst_index": [int(i) for i in np.unravel_index(int(checked[worst]),
                                                                  base.shape)]
                if errors.size and base.ndim else [],
                "engine": float(analytic[worst]) if errors.size else 0.0,
                "finite_difference": float(numeric[worst]) if errors.size else 0.0,
            })
    ok = all(r["worst_relative_error"] <= opts.tolerance for r in results)
    rows = [("group", "variable", "checked", "worst rel. error", "engine", "finite diff.", "")]
    for r in results:
        rows.append((r["group"], r["variable"], f"{r['checked']}/{r['entries']}",
                     f"{r['worst_relative_error']:.2e}", f"{r['engine']:.6g}",
                     f"{r['finite_difference']:.6g}",
                     "ok" if r["worst_relative_error"] <= opts.tolerance else "FAIL"))
    header = (f"gradcheck ({precision}, epsilon {epsilon:g}, tolerance {opts.tolerance:g}): "
              f"{'passed' if ok else 'FAILED'}")
    print("\n".join([header, *_table(rows)]))
    report = {"passed": ok, "precision": precision, "epsilon": epsilon,
              "tolerance": opts.tolerance, "variables": results}
    from runner.checkpoint import atomic_write_bytes

    atomic_write_bytes(Path(out_dir) / "gradcheck.json",
                       (json.dumps(report, indent=2) + "\n").encode())
    return 0 if ok else 1
