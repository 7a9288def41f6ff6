"""The training loop and its outputs: metrics.jsonl, summary.json, checkpoint.npz, the log.

``prepare`` validates the config, builds the model and loads the data (every config error is
raised there, before the first step; runner/job.py picks what a job does with them). ``Trainer`` runs
the steps: one ``session.run`` per step computes the loss, the metrics and every group's
gradients from one forward pass and applies all groups. Every ``log_every`` steps (and at the
last) it appends a record to metrics.jsonl and logs a readable line; every ``eval_every`` steps
it adds eval metrics on the held-out split; every ``checkpoint_every`` steps and at the end it
writes checkpoint.npz. Ctrl-C (or SIGTERM) finishes the current step, writes a checkpoint and
ends with status ``interrupted``. A non-finite loss or gradient either stops the run
(``on_nonfinite: raise``: status ``diverged``, naming the step and the first graph node that
produced NaN/Inf, with a checkpoint of the state before that step) or skips that step's update
(``skip``). A resumed run must have the config its checkpoint records (runner.fingerprint).

Records hold only values computed from the run's state (no wall-clock times), so a resumed
run's records equal an uninterrupted run's bit for bit.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import math
import re
import signal
import sys
import time
from collections.abc import Mapping
from pathlib import Path

import numpy as np

import engine
from engine.framework.indexed_slices import values_of
from runner import checkpoint as ckpt
from runner import init_time, memory, rundir
from runner.config import check as check_config
from runner.config_specs import RunConfig, TrainSpec
from runner.data import Dataset, load_data
from runner.errors import ConfigError, ConfigErrors
from runner.fingerprint import changes
from runner.loggers import make_loggers
from runner.model import Model
from runner.model_build import build_model
from runner.monitor import EarlyStopping, Monitor, replay
from runner.outputs import EXIT_DIVERGED, EXIT_INTERRUPTED, EXIT_OK, METRICS, write_loss_plot
from runner.outputs import write_summary as write_summary_file

log = logging.getLogger("runner")

_HISTOGRAM = "histogram:"  # fetches of gradient values for the loggers, not for records
BEST = "best.npz"  # train.keep_best: the state at the best evaluation, with its step


class RunFailure(Exception):
    """An error while training (not in the config as written), tied to the config key it is
    about when that is known; the CLI prints ``key: message`` and exits with 1."""

    def __init__(self, key: str, message: str):
        super().__init__(f"{key}: {message}")
        self.key, self.message = key, message


# --------------------------------------------------------------------------------------------
# One job
# --------------------------------------------------------------------------------------------


def prepare(cfg: Mapping, base_dir: Path) -> tuple[RunConfig, Model, Dataset | None]:
    """Validate, build and load: every config error of the run, raised together.

    The model is built and the data loaded from the valid sections even when others have
    problems (a bad ``train.steps`` does not hide a bad expression).
    """
    config, errors = check_config(cfg)
    errors = list(errors)
    usable = dataclasses.replace(config, seed=config.seed if config.seed is not None else 0,
                                 mode=config.mode or "train")
    model = None
    train = config.train or TrainSpec()
    cap = train.max_memory_gb
    parts = {}
    if config.model is not None:
        parts = memory.config_parts(usable, config.data, base_dir)
        try:
            memory.refuse_above(parts, cap)
            init_time.refuse_above(usable, train.max_init_seconds, train.threads)
        except ConfigError as error:  # nothing is built: its errors would follow from this one
            raise ConfigErrors([*errors, error]) from None
    if config.model is not None and config.groups is not None:
        try:
            model = build_model(usable)
            memory.refuse_above(memory.total(parts, memory.graph_parts(model),
                                             memory.gradient_parts(model, _batch_rows(config))),
                                cap)
        except ConfigErrors as exc:
            errors.extend(exc.errors)
        except ConfigError as error:
            raise ConfigErrors([*errors, error]) from None
    dataset = None
    data_ok = not any(e.key == "data" or e.key.startswith("data.") for e in errors)
    if config.model is not None and data_ok:
        try:
            dataset = load_dataset(usable, base_dir)
        except (ConfigError, ConfigErrors) as exc:
            errors.extend(exc.errors if isinstance(exc, ConfigErrors) else [exc])
    if config.train is not None and config.train.eval_every and config.mode == "train" \
            and config.model is not None and (dataset is None or dataset.eval is None):
        if config.model.inputs:
            if dataset is not None:
                errors.append(ConfigError("train.eval_every", "needs a held-out split: set "
                                                              "data.eval_fraction (e.g. 0.1; on "
                                                              "the command line "
                                                              "++data.eval_fraction=0.1)"))
        else:
            errors.append(ConfigError("train.eval_every", "needs data: the model has no inputs"))
    if config.train is not None and config.train.epochs and config.mode == "train" \
            and config.model is not None and not config.model.inputs:
        errors.append(ConfigError("train.epochs", "needs data: the model has no inputs; give "
                                                  "train.steps"))
    if config.model is not None and model is not None and config.train is not None \
            and config.mode == "train":
        for monitor in _monitors(config.train):
            try:
                monitor.check_known(monitored_keys(model))
            except ConfigError as error:
                errors.append(error)
    if errors:
        raise ConfigErrors(errors)
    return config, model, dataset


def _batch_rows(config: RunConfig) -> int:
    """The examples in a training batch as configured (data.batch_size, else data.n, else 1),
    for the memory estimate."""
    data = config.data if isinstance(config.data, Mapping) else {}
    for value in (data.get("batch_size"), data.get("n")):
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 1:
            return int(value)
    return 1


def monitored_keys(model: Model) -> list[str]:
    """What an evaluation's record holds that early stopping and keep_best may watch."""
    names = ["loss", *(name for name in model.metrics if name != "loss")]
    return [*names, *(f"eval/{name}" for name in names)]


def _monitors(train) -> list:
    """The EarlyStopping and keep_best Monitor a train spec asks for (fresh)."""
    out = []
    if train.early_stopping is not None:
        spec = train.early_stopping
        out.append(EarlyStopping("train.early_stopping", spec.monitor, spec.mode, spec.patience,
                                 spec.min_delta))
    if train.keep_best is not None:
        out.append(Monitor("train.keep_best", train.keep_best.monitor, train.keep_best.mode))
    return out


def load_dataset(config: RunConfig, base_dir: Path) -> Dataset | None:
    """The data for the model's inputs; None for a model without inputs (it needs no data)."""
    inputs = config.model.inputs
    if not inputs:
        return None
    if config.data is None:
        raise ConfigError("data", f"missing: model.inputs declares {', '.join(inputs)}, which are "
                                  "fed from data (e.g. data: {source: linear})")
    declared = {name: {"shape": None if spec.shape is None else list(spec.shape),
                       "dtype": spec.dtype} for name, spec in inputs.items()}
    return load_data(config.data, declared, config.seed, base_dir)


# --------------------------------------------------------------------------------------------
# Formatting
# --------------------------------------------------------------------------------------------


def _plain(value):
    """A fetched value as JSON: numbers as Python numbers, non-finite floats as null."""
    value = np.asarray(value)
    if value.ndim:
        return [_plain(v) for v in value]
    value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _fmt(value) -> str:
    if value is None:
        return "nan"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


class _StopRequest:
    """SIGINT/SIGTERM handlers that ask the loop to stop at the next step boundary; a second
    signal raises KeyboardInterrupt at once."""

    def __init__(self):
        self.signal: int | None = None
        self._previous = {}

    def _handle(self, signum, frame):
        if self.signal is not None:
            raise KeyboardInterrupt
        self.signal = signum
        log.warning("%s: stopping after this step (again to stop at once)",
                    signal.Signals(signum).name)

    def __enter__(self):
        for signum in (signal.SIGINT, signal.SIGTERM):
            try:
                self._previous[signum] = signal.signal(signum, self._handle)
            except ValueError:  # not the main thread (a launcher's worker): no handler
                pass
        return self

    def __exit__(self, *exc):
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)
        return False


def _progress_bar(total: int, initial: int, enabled: bool):
    """A tqdm bar (steps done, steps/s, time left; the loss as its postfix) when stdout is a
    terminal, else None: a log file or a pipe gets the log lines only."""
    if not enabled or not sys.stdout.isatty():
        return None
    from tqdm import tqdm

    return tqdm(total=total, initial=initial, unit="step", dynamic_ncols=True, leave=False)


def _redirect_logging(bar):
    if bar is None:
        return contextlib.nullcontext()
    from tqdm.contrib.logging import logging_redirect_tqdm

    return logging_redirect_tqdm()


# --------------------------------------------------------------------------------------------
# The trainer
# --------------------------------------------------------------------------------------------


class Trainer:
    """Runs the steps of one config in one session and writes its outputs."""

    def __init__(self, model: Model, dataset: Dataset | None, out_dir: Path,
                 fingerprint: dict[str, str] | None = None, config_json: str | None = None):
        self.model = model
        self.config_json = config_json  # recorded in checkpoints, for mode=eval and predict
        self.fingerprint = fingerprint or {}
        self.config = model.config
        self.train = self.config.train
        self.dataset = dataset
        self.out_dir = Path(out_dir)
        self.batcher = dataset.batcher() if dataset is not None else None
        self.session = engine.Session(graph=model.graph, config=engine.ConfigProto(
            intra_op_parallelism_threads=self.train.threads))  # 0: GRADPIPE_BLAS_THREADS, else 1
        self.step = 0
        self.skipped = 0
        self.elapsed = 0.0  # wall time of earlier runs of this job (resume)
        self.last_record: dict = {}
        self.last_eval: dict = {}
        monitors = _monitors(self.train)
        self.early_stopping = next((m for m in monitors if isinstance(m, EarlyStopping)), None)
        self.keep_best = next((m for m in monitors if not isinstance(m, EarlyStopping)), None)
        # updates per epoch: the batches of the training split (the last partial one dropped)
        self.steps_per_epoch = self.batcher.batches_per_epoch if self.batcher is not None else None
        self.total_steps = self.train.steps if self.train.steps is not None else \
            self.train.epochs * self.steps_per_epoch
        self.loggers = make_loggers(self.config.logger, self.out_dir, self._params(),
                                    self.train.resume)
        with self._graph_errors(""):
            self._build_fetches()

    # -- set-up --------------------------------------------------------------------------
    def _params(self) -> dict:
        """What the loggers record of the config (MLflow's params): the sections that make the
        model and its data, and ``train`` as validated (defaults filled in)."""
        params = json.loads(self.config_json) if self.config_json is not None else {}
        params["train"] = dataclasses.asdict(self.train)
        return params

    def _build_fetches(self) -> None:
        m = self.model
        light = {"finite": m.finite, "train": m.train_op}
        if m.loss is not None:
            light["loss"] = m.loss
        full = dict(light)
        full.update({name: t for name, t in m.metrics.items()
                     if name != "loss" and t is not m.loss})
        if m.loss is None:
            full["loss"] = m.groups[0].objective
            light["loss"] = m.groups[0].objective
        for group in m.groups:
            g = group.name
            if group.own_loss:
                full[f"{g}/loss"] = group.objective
            full[f"{g}/lr"] = group.learning_rate
            full[f"{g}/grad_norm"] = group.grad_norm
            full[f"{g}/grad_norm_processed"] = group.grad_norm_processed
            for report, tensor in group.reports.items():
                full[f"{g}/{report}"] = tensor
        placeholders = list(m.inputs.values())
        if m.training is not None:
            placeholders.append(m.training)
        self._light = self.session.make_callable(light, placeholders)
        if self.loggers:
            for group in m.groups:
                full[f"{_HISTOGRAM}{group.name}/gradients"] = list(group.grads)
                full[f"{_HISTOGRAM}{group.name}/gradients_processed"] = list(group.processed)
        self._full = self.session.make_callable(full, placeholders)
        evals = {"loss": m.loss} if m.loss is not None else {}
        evals.update({name: t for name, t in m.metrics.items()
                      if name != "loss" and t is not m.loss})
        self._eval_fetches = evals

    def _feed_values(self, batch) -> list:
        """The training step's feed, in the order of the callables' placeholders."""
        feed = self.model.feed(batch, training=True) if batch is not None else {}
        values = [feed[p] for p in self.model.inputs.values()]
        return values if self.model.training is None else [*values, True]

    def _start(self) -> None:
        """Initialize, or restore the checkpoint when resuming."""
        path = self.out_dir / ckpt.CHECKPOINT
        metrics = self.out_dir / METRICS
        arrays = None
        if self.train.resume and path.exists():
            arrays = ckpt.load(path)
            self._check_fingerprint(arrays)
        self.session.run(self.model.init_op)
        self._dry_run()
        if arrays is not None:
            meta = ckpt.restore(self.model, self.session, self.batcher, arrays)
            self.step = int(self.session.run(self.model.global_step))
            self.skipped = int(meta.get("skipped", 0))
            self.elapsed = float(meta.get("wall_time_s", 0.0))
            ckpt.truncate_metrics(metrics, self.step)
            self.last_record = _last_record(metrics)
            for monitor in (self.early_stopping, self.keep_best):
                if monitor is not None:
                    replay(monitor, _records(metrics), self.train.eval_every)
            log.info("resumed from %s at step %d", path, self.step)
            return
        if self.train.resume:
            log.warning("train.resume: no %s in %s; starting from step 0", ckpt.CHECKPOINT,
                        self.out_dir)
        # A fresh start where an earlier run left outputs without a checkpoint (resume after a
        # kill before the first checkpoint): they cannot be continued, so they are moved aside,
        # not mistaken for this run's. A summary of a start that failed is simply replaced.
        leftovers = [p.name for p in (metrics, path) if p.exists()]
        if leftovers:
            target = rundir.move_aside(self.out_dir, [*leftovers, "summary.json", BEST])
            log.warning("the earlier outputs (%s) are in %s", ", ".join(leftovers), target)

    @contextlib.contextmanager
    def _graph_errors(self, what: str, where: str = ""):
        """An engine error while planning or running the graph before the first step is a
        config error at the graph entry whose op it names (op 'h/MatMul': model.graph.h)."""
        try:
            yield
        except (engine.OpError, engine.ShapeError, ValueError, TypeError, IndexError,
                ArithmeticError) as exc:
            key = self._key_of(str(exc), "model.graph")
            raise ConfigError(key, f"{what}{_first_line(exc)}{where}") from exc

    def _dry_run(self) -> None:
        """One forward and backward pass on the first batch of the data, before step 1, so that
        mistakes that show only with data (a reshape or slice that does not fit the batch) are
        config errors at their graph entry. Nothing is updated, and the random generators are
        left as they were."""
        m = self.model
        fetches = [*m.nodes.values(), *m.metrics.values(),
                   *(g for group in m.groups for g in group.grads)]
        if not fetches:
            return
        batch = None
        if self.dataset is not None:
            size = self.dataset.batch_size or self.dataset.n_train
            batch = {name: array[:size] for name, array in self.dataset.train.items()}
        feed = m.feed(batch, training=True) if batch is not None else {}
        with ckpt.preserved_rngs(self.session), \
                self._graph_errors("", " (found running the graph on the first batch, before step 1)"):
            self.session.run(fetches, feed)
        if self.train.eval_every and self.dataset is not None and self.dataset.eval is not None \
                and self._eval_fetches:
            eval_batch = next(self._eval_batches(), None)
            if eval_batch is not None:
                with ckpt.preserved_rngs(self.session), \
                        self._graph_errors("", " (found evaluating the first held-out batch, "
                                               "before step 1)"):
                    self.session.run(self._eval_fetches, m.feed(eval_batch))

    def _check_fingerprint(self, arrays) -> None:
        """Refuse to continue a checkpoint made with another config (runner.fingerprint)."""
        saved = ckpt.saved_fingerprint(arrays)
        if saved is None:
            log.warning("train.resume: the checkpoint records no config fingerprint (an older "
                        "runner's); the config is not compared")
            return
        status = ckpt.read_text(arrays["meta/status"]) if "meta/status" in arrays else ""
        changed = changes(saved, self.fingerprint, diverged=status == "diverged")
        if changed:
            raise ConfigError("train.resume", f"the checkpoint in {self.out_dir} was made with "
                                              f"another config; changed: {'; '.join(changed)}. "
                                              "Change them back to continue, or start afresh in "
                                              "another hydra.run.dir")

    # -- outputs -------------------------------------------------------------------------
    def save_checkpoint(self, wall_time: float, status: str = "running") -> None:
        meta = {"skipped": self.skipped, "wall_time_s": wall_time, "status": status,
                "fingerprint": json.dumps(self.fingerprint), **self._config_meta()}
        ckpt.save(self.out_dir / ckpt.CHECKPOINT,
                  ckpt.collect(self.model, self.session, self.batcher, meta))

    def write_summary(self, status: str, wall_time: float, **extra) -> None:
        final = dict(self.last_record)
        final.update(self.last_eval)
        final.pop("step", None)
        summary = {"status": status, "steps": self.step, "final": final,
                   "wall_time_s": round(wall_time, 3), "skipped_steps": self.skipped,
                   "frozen_variables": self.model.frozen, **extra}
        write_summary_file(self.out_dir, summary)
        if self.train.plots:
            write_loss_plot(self.out_dir)
        for logger in self.loggers:
            logger.end(status, summary)

    def _record(self, values: Mapping) -> dict:
        record = {"step": self.step}
        if self.steps_per_epoch:
            record["epoch"] = (self.step - 1) // self.steps_per_epoch + 1
        for key, value in values.items():
            if key in ("train", "finite") or key.startswith(_HISTOGRAM):
                continue
            record[key] = _plain(value)
        if self.train.on_nonfinite == "skip":
            record["skipped_steps"] = self.skipped
        return record

    def evaluate(self) -> dict:
        """Loss and metrics on the held-out split (one forward pass; no state changes)."""
        totals: dict[str, float] = {}
        batches = 0
        for batch in self._eval_batches():
            values = self.session.run(self._eval_fetches, self.model.feed(batch))
            for key, value in values.items():
                totals[key] = totals.get(key, 0.0) + float(value)
            batches += 1
        return {f"eval/{key}": _plain(total / max(batches, 1)) for key, total in totals.items()}

    def _eval_batches(self):
        """The held-out split in batches: whole, or of the inputs' fixed example count."""
        data = self.dataset.eval
        fixed = [spec.shape[0] for spec in self.config.model.inputs.values()
                 if spec.shape is not None and spec.shape[0] is not None]
        n = next(iter(data.values())).shape[0]
        size = fixed[0] if fixed else n
        for start in range(0, n - size + 1, size):
            yield {k: v[start:start + size] for k, v in data.items()}

    def _log_line(self, record: Mapping, rate: float) -> str:
        parts = [f"step {record['step']}/{self.total_steps}"]
        if "epoch" in record:
            epochs = f"/{self.train.epochs}" if self.train.epochs else ""
            parts.append(f"epoch {record['epoch']}{epochs}")
        skip = {"step", "skipped_steps", "epoch"}
        group_names = [g.name for g in self.model.groups]
        for key, value in record.items():
            if key in skip or key.split("/")[0] in group_names:
                continue
            parts.append(f"{key} {_fmt(value)}")
        for group in self.model.groups:
            g = group.name
            text = (f"{g}: lr {_fmt(record.get(f'{g}/lr'))} grad_norm "
                    f"{_fmt(record.get(f'{g}/grad_norm'))} -> "
                    f"{_fmt(record.get(f'{g}/grad_norm_processed'))}")
            extras = [f"{k.split('/', 1)[1]} {_fmt(v)}" for k, v in record.items()
                      if k.startswith(f"{g}/") and k.split("/", 1)[1] not in
                      ("lr", "grad_norm", "grad_norm_processed")]
            parts.append(text + (f" ({', '.join(extras)})" if extras else ""))
        if self.train.on_nonfinite == "skip" and self.skipped:
            parts.append(f"skipped {self.skipped}")
        parts.append(f"{rate:.1f} steps/s")
        return " | ".join(parts)

    def _summary_table(self, status: str, wall_time: float, extra: Mapping) -> str:
        """What the terminal shows at the end: status, steps, why the run stopped, the best
        checkpoint (train.keep_best), then the final values."""
        final = dict(self.last_record)
        final.update(self.last_eval)
        final.pop("step", None)
        rows = [("status", status), ("steps", str(self.step)),
                ("wall time", f"{wall_time:.2f} s"), ("run directory", str(self.out_dir.resolve()))]
        if extra.get("stop_reason"):
            rows.insert(2, ("stopped", extra["stop_reason"]))
        best = extra.get("best")
        if best:
            rows.append(("best", f"{best['monitor']} {_fmt(best['value'])} at step {best['step']} "
                                 f"({best['path']})"))
        final.pop("skipped_steps", None)
        if self.skipped:
            rows.append(("skipped steps", str(self.skipped)))
        rows += [(key, _fmt(value)) for key, value in final.items()]
        width = max(len(k) for k, _ in rows)
        return "\n".join(["summary:"] + [f"  {k.ljust(width)}  {v}" for k, v in rows])

    # -- non-finite ----------------------------------------------------------------------
    def diagnose(self, batch) -> str:
        """Name the first input, variable or graph node (in config order) holding NaN/Inf for
        this batch, or the first non-finite gradient. The update was gated off, so the
        variables still hold the values the failing forward pass used."""
        m = self.model
        feed = m.feed(batch, training=True) if batch is not None else {}
        for name in m.inputs:
            if not np.all(np.isfinite(feed[m.inputs[name]])):
                return f"the data fed to input '{name}' holds NaN/Inf"
        variables = self.session.run(m.variables) if m.variables else {}
        for name, value in variables.items():
            if not np.all(np.isfinite(value)):
                return f"variable '{name}' holds NaN/Inf"
        if m.nodes:
            values = self.session.run(m.nodes, feed)
            for name, value in values.items():
                value = np.asarray(value)
                if value.dtype.kind == "f" and not np.all(np.isfinite(value)):
                    return (f"the first non-finite value is at graph node '{name}' "
                            f"(model.graph.{name})")
        for group in m.groups:
            grads = self.session.run(group.grads, feed)
            for var_name, grad in zip(group.var_names, grads):
                if not np.all(np.isfinite(values_of(grad))):
                    return (f"the forward pass is finite, but the gradient of group "
                            f"'{group.name}' for variable '{var_name}' holds NaN/Inf")
        return ("the loss and the raw gradients are finite; a pipeline stage produced NaN/Inf "
                "(an overflow: a scale or a clip of an infinite norm)")

    # -- the loop ------------------------------------------------------------------------
    def run_step(self, full: bool) -> tuple[dict | None, dict]:
        """One training step (the loop does not count it): the next batch fed to one session
        call that updates every group and returns the finite flag and the loss, and with
        ``full`` (a step that logs or evaluates) the metrics, per-group norms and reports.
        Returns (batch, values). bench/experiments.py times this against hand-written loops."""
        batch = self.batcher.next_batch() if self.batcher is not None else None
        return batch, (self._full if full else self._light)(*self._feed_values(batch))

    def run(self) -> int:
        started = time.perf_counter()
        log.info("run directory: %s", self.out_dir.resolve())
        self._start()
        for logger in self.loggers:
            logger.start(self.step)
        for warning in self.model.warnings:
            log.warning(warning)
        if self.model.frozen:
            log.info("frozen (trainable, in no group, not updated): %s",
                     ", ".join(self.model.frozen))
        steps = self.total_steps
        if self.early_stopping is not None and self.early_stopping.wait and \
                self.early_stopping.wait >= self.early_stopping.patience:
            log.info("nothing to do: the run stopped early (%s)", self.early_stopping.reason())
            steps = self.step
        if self.step >= steps:
            log.info("nothing to do: the run is at step %d of %d", self.step, steps)
        bar = _progress_bar(steps, self.step, self.train.progress)
        status, code, extra = "completed", EXIT_OK, {}
        window_start, window_steps = time.perf_counter(), 0
        try:
            with _StopRequest() as stop, _redirect_logging(bar):
                while self.step < steps:
                    if stop.signal is not None:
                        status, code = "interrupted", EXIT_INTERRUPTED
                        extra["stop_reason"] = f"interrupted after step {self.step}"
                        break
                    rngs = ckpt.rng_states(self.session)
                    step = self.step + 1
                    logged = step % self.train.log_every == 0 or step == steps
                    evaluated = bool(self.train.eval_every) and (
                        step % self.train.eval_every == 0 or step == steps)
                    batch, values = self.run_step(full=logged or evaluated)
                    self.step = step
                    window_steps += 1
                    if not bool(values["finite"]):
                        if self.train.on_nonfinite == "raise":
                            message = (f"step {step}: non-finite loss or gradient "
                                       f"(loss {_fmt(_plain(values['loss']))}); "
                                       f"{self.diagnose(batch)}")
                            log.error("diverged at %s", message)
                            self.step = step - 1
                            self._step_back(rngs)
                            status, code, extra = "diverged", EXIT_DIVERGED, {
                                "error": message,
                                "stop_reason": f"diverged at step {step} (non-finite loss or "
                                               "gradient)"}
                            break
                        self.skipped += 1
                        if self.skipped <= 10 or self.skipped % 100 == 0:
                            log.warning("step %d: non-finite loss or gradient, update skipped "
                                        "(%d so far)", step, self.skipped)
                    if logged or evaluated:
                        record = self._record(values)
                        if evaluated:
                            self.last_eval = self.evaluate()
                            record.update(self.last_eval)
                        self._append(record)
                        self.last_record = record
                        self._to_loggers(record, values)
                        now = time.perf_counter()
                        rate = window_steps / max(now - window_start, 1e-9)
                        window_start, window_steps = now, 0
                        log.info(self._log_line(record, rate))
                        if evaluated and self._watch(record):
                            extra["stop_reason"] = self.early_stopping.reason()
                            log.info("%s; stopping", extra["stop_reason"])
                            break
                    if self.train.checkpoint_every and step % self.train.checkpoint_every == 0 \
                            and step != steps:
                        self.save_checkpoint(self.elapsed + time.perf_counter() - started)
                    if bar is not None:
                        bar.update(1)
                        loss = values.get("loss")
                        if loss is not None:
                            bar.set_postfix(loss=f"{float(loss):.4g}", refresh=False)
        except KeyboardInterrupt:
            wall = self.elapsed + time.perf_counter() - started
            log.warning("interrupted during step %d; the last checkpoint is kept", self.step + 1)
            self.write_summary("interrupted", wall,
                               stop_reason=f"interrupted during step {self.step + 1}")
            return EXIT_INTERRUPTED
        except Exception as exc:
            # An error at run time (a shape only known then, ...): record it and keep the last
            # checkpoint. An engine error in a graph entry's op is reported against that entry.
            wall = self.elapsed + time.perf_counter() - started
            message = f"step {self.step + 1}: {type(exc).__name__}: {exc}"
            self.write_summary("failed", wall, error=message)
            if isinstance(exc, engine.OpError):
                raise RunFailure(self._key_of(str(exc)), message) from exc
            raise
        finally:
            if bar is not None:
                bar.close()
            for logger in self.loggers:
                logger.close()
        wall = self.elapsed + time.perf_counter() - started
        self.save_checkpoint(wall, status)
        if status == "completed":
            extra.setdefault("stop_reason", f"{self.train.epochs} epochs done"
                             if self.train.epochs else f"{steps} steps done")
        if self.keep_best is not None and self.keep_best.best_step is not None:
            extra["best"] = {"monitor": self.keep_best.monitor, "value": self.keep_best.best,
                             "step": self.keep_best.best_step, "path": BEST}
        self.write_summary(status, wall, **extra)
        log.info(self._summary_table(status, wall, extra))
        return code

    def _to_loggers(self, record: Mapping, values: Mapping) -> None:
        """The record (and the gradient values fetched with it) to each ``logger``."""
        if not self.loggers:
            return
        gradients = {key[len(_HISTOGRAM):]: [getattr(g, "values", g) for g in value]
                     for key, value in values.items() if key.startswith(_HISTOGRAM)}
        for logger in self.loggers:
            logger.log(record, gradients)

    def _config_meta(self) -> dict:
        return {"config": self.config_json} if self.config_json is not None else {}

    def _watch(self, record: Mapping) -> bool:
        """After an evaluation: best.npz when keep_best's value improved; True when early
        stopping says stop."""
        if self.keep_best is not None and self.keep_best.update(record):
            ckpt.save(self.out_dir / BEST, ckpt.collect(
                self.model, self.session, self.batcher,
                {"monitor": self.keep_best.monitor, "value": self.keep_best.best,
                 **self._config_meta()}))
        return self.early_stopping is not None and self.early_stopping.update(record)

    def _step_back(self, rngs) -> None:
        """Back to the state before the step that diverged (its update was gated off): the
        global step, the batch order and the random generators, so that the diverged run's
        checkpoint is its last good state and a resumed run retries that step's batch."""
        self.model.global_step.load(np.asarray(self.step, dtype=np.int64), self.session)
        if self.batcher is not None:
            self.batcher.step_back()
        ckpt.set_rng_states(self.session, rngs)

    def _key_of(self, message: str, default: str = "train") -> str:
        """The config key of the graph entry whose op an engine error names (op 'h/MatMul')."""
        found = re.search(r"\(op '([^'/]+)", message)
        if found and found.group(1) in self.model.nodes:
            return f"model.graph.{found.group(1)}"
        return default

    def _append(self, record: Mapping) -> None:
        line = json.dumps(record, allow_nan=False)
        with open(self.out_dir / METRICS, "a", encoding="utf-8") as handle:
            handle.write(line + "\n")


def _first_line(exc: Exception, limit: int = 300) -> str:
    """An exception's message, one line, cut to ``limit`` characters."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _records(path: Path) -> list[dict]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip()]


def _last_record(path: Path) -> dict:
    if not path.exists():
        return {}
    lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return json.loads(lines[-1]) if lines else {}
