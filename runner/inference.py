"""``mode=eval`` and ``mode=predict``: a finished run's checkpoint applied to data.

Both read the run directory (``hydra.run.dir``): its ``checkpoint.npz`` or ``best.npz``
(``eval.checkpoint``). A checkpoint records the config it was trained with (``meta/config``:
seed, model, data, groups), so only the run directory needs naming; the model is rebuilt from it
and the variables loaded. Both run in inference mode: the training switch that dropout and batch
normalization read stays off, and nothing is updated.

- eval: the loss and metrics on the run's eval split, or on every row of ``eval.data`` (a data
  mapping like ``data``: ``{source: csv, path: test.csv, columns: {...}}``); printed and written
  to ``eval.json`` in the run directory.
- predict: the graph nodes ``predict.nodes`` for every row of ``predict.path`` (a .csv with
  ``predict.columns: {input: [columns]}``, or an .npz with ``predict.arrays: {input: array}``,
  default: arrays named as the inputs), in order, written to ``predict.output`` (.csv: one column
  per node entry, ``NODE`` or ``NODE_i``; .npz: one array per node).
"""

from __future__ import annotations

import csv
import io
import json
import logging
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from runner import checkpoint as ckpt
from runner.checks import check_list, check_mapping, check_str, describe, unknown_keys
from runner.errors import ConfigError, ConfigErrors, did_you_mean

log = logging.getLogger("runner")

EVAL_KEYS = ("checkpoint", "data")
PREDICT_KEYS = ("path", "columns", "arrays", "output", "nodes", "batch_size")
CHECKPOINTS = ("checkpoint.npz", "best.npz")
EVAL_JSON = "eval.json"


def _section(cfg: Mapping, name: str, keys) -> dict:
    value = cfg.get(name) or {}
    value = check_mapping(name, value, f"a mapping with {', '.join(keys)}")
    problems = unknown_keys(name, value, keys)
    if problems:
        raise ConfigErrors(problems)
    return dict(value)


def _rekeyed(error: ConfigError, prefix: str) -> ConfigError:
    """A data loader's error (``data.path``) as the key the user wrote (``eval.data.path``)."""
    key = error.key
    if key == "data" or key.startswith("data."):
        key = prefix + key[4:]
    return error.at(key)


def load_run(cfg: Mapping, out_dir: Path, base_dir: Path, checkpoint: str):
    """(trainer, meta) with the run's model rebuilt and its checkpoint loaded; ``cfg`` keeps its
    ``mode`` and ``eval``/``predict`` sections, the rest comes from the checkpoint."""
    from runner.loop import Trainer
    from runner.prepare import prepare

    path = Path(out_dir) / checkpoint
    if not path.is_file():
        found = [name for name in CHECKPOINTS if (Path(out_dir) / name).is_file()]
        raise ConfigError("eval.checkpoint", f"no {checkpoint} in {Path(out_dir).resolve()}"
                                             f" (it has: {', '.join(found) or 'no checkpoint'});"
                                             " name a finished run with hydra.run.dir=...")
    try:
        arrays = ckpt.load(path)
    except ConfigError as error:
        raise ConfigError("eval.checkpoint", f"{path}: {error.message}") from None
    run_cfg = dict(cfg)
    if "meta/config" in arrays:
        run_cfg.update(json.loads(str(np.asarray(arrays["meta/config"])[()])))
    run_cfg["train"] = {**(cfg.get("train") or {}), "steps": 0, "early_stopping": None,
                        "keep_best": None, "eval_every": 0}
    run_cfg["mode"] = "train"  # built exactly as trained
    _, model, dataset = prepare(run_cfg, base_dir)
    trainer = Trainer(model, dataset, out_dir)
    try:
        meta = ckpt.restore(model, trainer.session, None, arrays)
    except ConfigError as error:
        raise ConfigError("eval.checkpoint", f"{path}: {error.message}") from None
    return trainer, meta, arrays, run_cfg


def evaluate_run(cfg: Mapping, out_dir: Path, base_dir: Path) -> int:
    """mode=eval: metrics of the checkpoint on the eval split or ``eval.data``; eval.json."""
    from runner.data import load_data

    options = _section(cfg, "eval", EVAL_KEYS)
    checkpoint = options.get("checkpoint") or CHECKPOINTS[0]
    if checkpoint not in CHECKPOINTS:
        raise ConfigError("eval.checkpoint", f"one of {', '.join(CHECKPOINTS)}, got "
                                             f"{describe(checkpoint)}")
    trainer, _, arrays, run_cfg = load_run(cfg, out_dir, base_dir, checkpoint)
    model = trainer.model
    if options.get("data") is not None:
        declared = {name: {"shape": None if spec.shape is None else list(spec.shape),
                           "dtype": spec.dtype} for name, spec in model.spec.inputs.items()}
        data_cfg = {**check_mapping("eval.data", options["data"], "a data mapping"),
                    "eval_fraction": 0.0, "batch_size": None}
        try:
            rows = load_data(data_cfg, declared, run_cfg.get("seed", 0), base_dir).train
        except ConfigError as error:
            raise _rekeyed(error, "eval.data") from None
        where = str(options["data"].get("path") or options["data"].get("source"))
    else:
        if trainer.dataset is None or trainer.dataset.eval is None:
            raise ConfigError("eval.data", "the run has no eval split (data.eval_fraction): give "
                                           "a data file, e.g. eval.data={source: csv, path: "
                                           "test.csv, columns: {...}}")
        rows, where = trainer.dataset.eval, "the run's eval split"
    trainer.dataset = type(trainer.dataset)(trainer.dataset.train, rows,
                                            trainer.dataset.batch_size, trainer.dataset.shuffle,
                                            trainer.dataset.seed)
    metrics = {key.removeprefix("eval/"): value for key, value in trainer.evaluate().items()}
    result = {"checkpoint": checkpoint, "step": int(arrays["step"]), "data": where,
              "examples": int(next(iter(rows.values())).shape[0]), "metrics": metrics}
    text = json.dumps(result, indent=2, allow_nan=False) + "\n"
    ckpt.atomic_write_bytes(Path(out_dir) / EVAL_JSON, text.encode())
    width = max(len(k) for k in metrics) if metrics else 0
    print(f"eval of {checkpoint} (step {result['step']}) on {where}, "
          f"{result['examples']} examples:")
    for key, value in metrics.items():
        print(f"  {key.ljust(width)}  {value:.6g}")
    print(f"written to {Path(out_dir).resolve() / EVAL_JSON}")
    return 0


def _read_inputs(options: Mapping, inputs, base_dir: Path) -> dict[str, np.ndarray]:
    """The prediction inputs from ``predict.path`` (.csv with columns, .npz with arrays)."""
    from runner.data import load_data

    path = check_str("predict.path", options.get("path"))
    suffix = Path(path).suffix.lower()
    if suffix not in (".csv", ".npz"):
        raise ConfigError("predict.path", f"must be a .csv or .npz file, got {path!r}")
    if suffix == ".csv":
        columns = check_mapping("predict.columns", options.get("columns"),
                                "{input: [column names or indices]}")
        names = list(columns)
        data_cfg = {"source": "csv", "path": path, "columns": dict(columns)}
    else:
        mapping = options.get("arrays")
        if mapping is None:  # the arrays named as inputs
            try:
                with np.load(_resolve(path, base_dir), allow_pickle=False) as archive:
                    mapping = {name: name for name in inputs if name in archive.files}
            except (OSError, ValueError, EOFError) as error:
                raise ConfigError("predict.path", f"cannot read {path} as .npz: {error}") \
                    from None
        mapping = check_mapping("predict.arrays", mapping, "{input: array name}")
        names = list(mapping)
        data_cfg = {"source": "npz", "path": path, "arrays": dict(mapping)}
    for name in names:
        if name not in inputs:
            raise ConfigError(f"predict.{'columns' if suffix == '.csv' else 'arrays'}.{name}",
                              f"no model input '{name}'{did_you_mean(name, inputs)}; inputs: "
                              f"{', '.join(inputs)}")
    declared = {name: {"shape": None if inputs[name].shape is None else
                       list(inputs[name].shape), "dtype": inputs[name].dtype} for name in names}
    try:
        data = load_data({**data_cfg, "batch_size": None, "shuffle": False}, declared, 0,
                         base_dir)
    except ConfigError as error:
        raise _rekeyed(error, "predict") from None
    return data.train


def _resolve(path: str, base_dir: Path) -> Path:
    resolved = Path(path).expanduser()
    resolved = resolved if resolved.is_absolute() else Path(base_dir) / resolved
    if not resolved.is_file():
        raise ConfigError("predict.path", f"file not found: {resolved}")
    return resolved


def predict_run(cfg: Mapping, out_dir: Path, base_dir: Path) -> int:
    """mode=predict: ``predict.nodes`` for every input row, in order, to ``predict.output``."""
    options = _section(cfg, "predict", PREDICT_KEYS)
    checkpoint = (cfg.get("eval") or {}).get("checkpoint") or CHECKPOINTS[0]
    trainer, _, arrays, _ = load_run(cfg, out_dir, base_dir, checkpoint)
    model = trainer.model
    nodes = check_list("predict.nodes", options.get("nodes") or [], "a list of graph node names")
    if not nodes:
        raise ConfigError("predict.nodes", "empty: name the graph nodes to compute, e.g. "
                                           f"[{next(reversed(model.nodes), 'pred')}]")
    for i, node in enumerate(nodes):
        if node not in model.nodes:
            raise ConfigError(f"predict.nodes[{i}]", f"no graph node {node!r}"
                                                     f"{did_you_mean(node, model.nodes)}; nodes: "
                                                     f"{', '.join(model.nodes)}")
    output = check_str("predict.output", options.get("output") or "predictions.csv")
    out_path = Path(output) if Path(output).is_absolute() else Path(base_dir) / output
    if out_path.suffix.lower() not in (".csv", ".npz"):
        raise ConfigError("predict.output", f"must end in .csv or .npz, got {output!r}")
    rows = _read_inputs(options, model.spec.inputs, base_dir)
    n = next(iter(rows.values())).shape[0]
    fixed = [s.shape[0] for s in model.spec.inputs.values() if s.shape and s.shape[0]]
    size = fixed[0] if fixed else (options.get("batch_size") or n)
    if n % size:
        raise ConfigError("predict.path", f"{n} rows do not fill batches of {size} (the model's "
                                          "fixed batch dimension)")
    fetches = [model.nodes[node] for node in nodes]
    parts: list[list[np.ndarray]] = [[] for _ in nodes]
    for start in range(0, n, size):
        batch = {k: v[start:start + size] for k, v in rows.items()}
        feed = model.feed(batch) if len(batch) == len(model.inputs) else \
            {model.inputs[k]: v for k, v in batch.items()}  # inference mode: the switch is off
        try:
            values = trainer.session.run(fetches, feed)
        except Exception as exc:  # noqa: BLE001 - a node needing an input the file lacks, ...
            raise ConfigError("predict.nodes", f"cannot compute {', '.join(nodes)} from "
                                               f"{', '.join(rows)}: {exc}") from None
        for part, value in zip(parts, values):
            part.append(np.asarray(value))
    results = {}
    for node, part in zip(nodes, parts):
        if part[0].ndim == 0 or part[0].shape[0] != min(size, n):
            raise ConfigError("predict.nodes", f"node {node!r} is not per example (shape "
                                               f"{list(part[0].shape)}); name nodes whose first "
                                               "dimension is the batch")
        results[node] = np.concatenate(part)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    if out_path.suffix.lower() == ".npz":
        buffer = io.BytesIO()
        np.savez(buffer, **results)
        ckpt.atomic_write_bytes(out_path, buffer.getvalue())
    else:
        ckpt.atomic_write_bytes(out_path, _csv_text(results).encode())
    print(f"predicted {', '.join(nodes)} for {n} rows with {checkpoint} (step "
          f"{int(arrays['step'])}): {out_path.resolve()}")
    return 0


def _csv_text(results: Mapping[str, np.ndarray]) -> str:
    header, columns = [], []
    for node, values in results.items():
        flat = values.reshape(values.shape[0], -1)
        header += [node] if flat.shape[1] == 1 else [f"{node}_{i}" for i in range(flat.shape[1])]
        columns.append(flat)
    table = np.concatenate([c.astype(np.float64) for c in columns], axis=1)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    for row in table:
        writer.writerow([repr(float(v)) for v in row])
    return out.getvalue()
