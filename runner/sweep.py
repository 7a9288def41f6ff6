"""Multirun: each job's result file, the sweep's ``summary.csv``, and the end of a sweep.

Each job writes ``job.json`` in its run directory twice: when it starts (its number and
overrides, status ``running``) and when it ends (adding its status, exit code, steps, why it
stopped, final metrics, wall time and error, taken from its summary.json). It then rebuilds
the sweep directory's ``summary.csv`` from every job.json found there so far (under a file lock
where the file system has one, replaced atomically), so the table is made only from files the
jobs wrote. That is what makes it work with launchers whose jobs run in other processes or on
other machines (joblib, Ray, submitit: Hydra's per-job callbacks run there too) and when a job
fails: a job never raises out of Hydra's task function (an unexpected error is logged with its
traceback and recorded as a failed row), because Hydra skips ``on_multirun_end`` when one does.

At the end, in the process that launched the sweep, ``SweepSummary.on_multirun_end`` (or
``conclude``, called by ``runner.app.main`` when the sweep stopped before Hydra got there: Ctrl-C,
a job lost by its launcher) rebuilds the table once more, draws ``comparison.png`` and prints the
table. The sweep's exit code is the most serious of its jobs' codes (see ``exit_code``): of the jobs
this launch ran, when a sweep directory also holds the records of an earlier launch (a sweep that
resumes some of its runs). Each launch writes a fresh id to ``.sweep_launch`` in the sweep
directory before its jobs start, and each job copies it into its record.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import logging
import uuid
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from hydra.experimental.callback import Callback

from runner import rundir
from runner.checkpoint import atomic_write_bytes
from runner.errors import ConfigErrors
from runner.outputs import (
    EXIT_CONFIG,
    EXIT_DIVERGED,
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_OK,
    SUMMARY,
    write_sweep_plot,
)

log = logging.getLogger("runner")

JOB_FILE = "job.json"
SUMMARY_CSV = "summary.csv"
LOCK_FILE = ".summary.lock"
LAUNCH_FILE = ".sweep_launch"

# A run's exit codes, most serious first: a sweep exits with the first one any job had.
# A job that never reported its end (its worker died) counts as a run-time failure (1).
SEVERITY = (EXIT_INTERRUPTED, EXIT_FAILED, EXIT_CONFIG, EXIT_DIVERGED)
_STATUS_OF_CODE = {EXIT_OK: "completed", EXIT_DIVERGED: "diverged",
                   EXIT_INTERRUPTED: "interrupted"}


# --------------------------------------------------------------------------------------------
# One job
# --------------------------------------------------------------------------------------------


def _write_json(path: Path, value: Mapping) -> None:
    atomic_write_bytes(path, (json.dumps(value, allow_nan=False) + "\n").encode())


def summary_stamp(out_dir: Path) -> tuple | None:
    """What identifies the summary.json in ``out_dir`` now (None when there is none): it is
    written atomically, so a summary the job writes has another stamp."""
    try:
        info = (Path(out_dir) / SUMMARY).stat()
    except OSError:
        return None
    return info.st_ino, info.st_mtime_ns, info.st_size


def new_launch(sweep_dir: Path) -> str:
    """A fresh id for the sweep this process launches, written to the sweep directory where its
    jobs (in this process, or in others sharing the file system) read it."""
    launch = uuid.uuid4().hex
    Path(sweep_dir).mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(Path(sweep_dir) / LAUNCH_FILE, launch.encode())
    return launch


def current_launch(sweep_dir: Path) -> str | None:
    """The id of the launch a job belongs to (None when its sweep wrote none)."""
    try:
        return (Path(sweep_dir) / LAUNCH_FILE).read_text().strip() or None
    except OSError:
        return None


def start_job(out_dir: Path, number: int, overrides: Sequence[str],
              launch: str | None = None) -> tuple | None:
    """Record a starting job (status ``running``, its sweep's ``launch``); the stamp of an
    earlier run's summary.json there (which ``finish_job`` then ignores: a resumed run that
    fails before its first step leaves the earlier run's summary as it was)."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    record = {"job": int(number), "overrides": [str(o) for o in overrides], "status": "running"}
    if launch:
        record["launch"] = launch
    _write_json(out_dir / JOB_FILE, record)
    return summary_stamp(out_dir)


def finish_job(out_dir: Path, code: int, error: str | None = None,
               earlier: tuple | None = None) -> dict:
    """Complete the job's record from its exit code and the summary.json the run wrote (a run
    in ``mode=check`` writes none; an error before the run started leaves none either, or the
    earlier run's, whose stamp ``earlier`` is)."""
    out_dir = Path(out_dir)
    record = json.loads((out_dir / JOB_FILE).read_text())
    summary = {}
    if earlier is None or summary_stamp(out_dir) != earlier:
        try:
            summary = json.loads((out_dir / SUMMARY).read_text())
        except (OSError, ValueError):
            summary = {}
    errors = summary.get("errors") or ([summary["error"]] if summary.get("error") else [])
    if error:
        errors.append(error)
    record.update(status=summary.get("status") or _STATUS_OF_CODE.get(code, "failed"),
                  exit_code=int(code), final=summary.get("final") or {},
                  wall_time_s=summary.get("wall_time_s", 0.0))
    for key in ("steps", "stop_reason"):
        if key in summary:
            record[key] = summary[key]
    if errors:
        record["error"] = "; ".join(errors)
    _write_json(out_dir / JOB_FILE, record)
    return record


def objective(record: Mapping) -> float | None:
    """What a job returns to Hydra, the value a sweeper such as Optuna's optimizes: the final
    ``eval/loss`` of a completed job when it evaluated on held-out data, else its final ``loss``.
    A job that did not complete returns None, which Optuna records as a failed trial."""
    final = record.get("final") or {}
    value = final.get("eval/loss", final.get("loss"))
    if record.get("status") != "completed" or value is None:
        return None
    return float(value)


def run_job(cfg, hydra_cfg, run) -> float | None:
    """One multirun job: record it, run it, record its end, refresh the sweep's table; return
    its ``objective``. ``run(cfg, out_dir, base_dir) -> exit code`` is the job itself
    (``runner.app.run``, passed in by the app: this module does not import it). The job's exit
    code is in its job.json, from which the sweep's own exit code is made.

    Never raises an ``Exception`` (Hydra would then skip the sweep's end); after a Ctrl-C it
    raises KeyboardInterrupt once its records are written, so that the sweep stops there.
    """
    out_dir = Path(hydra_cfg.runtime.output_dir)
    code, error, record, earlier = EXIT_FAILED, None, {}, None
    try:
        rundir.adopt_stash(out_dir, hydra_cfg.output_subdir)
        earlier = start_job(out_dir, hydra_cfg.job.num, list(hydra_cfg.overrides.task),
                            current_launch(Path(hydra_cfg.sweep.dir)))
        code = run(cfg, out_dir, hydra_cfg.runtime.cwd)
    except KeyboardInterrupt:
        code = EXIT_INTERRUPTED
    except ConfigErrors:  # re-raised by run() under HYDRA_FULL_ERROR=1, already reported
        log.exception("job %s: config errors", hydra_cfg.job.num)
        code = EXIT_CONFIG
    except Exception as exc:
        log.exception("job %s failed", hydra_cfg.job.num)
        error = f"{type(exc).__name__}: {exc}"
    finally:
        try:
            record = finish_job(out_dir, code, error, earlier)
            refresh(Path(hydra_cfg.sweep.dir))
        except Exception:  # the table is a convenience: never fail a job for it
            log.exception("job %s: could not update the sweep's %s", hydra_cfg.job.num,
                          SUMMARY_CSV)
    if code == EXIT_INTERRUPTED:
        raise KeyboardInterrupt
    return objective(record)


# --------------------------------------------------------------------------------------------
# The table
# --------------------------------------------------------------------------------------------


def job_records(sweep_dir: Path) -> list[dict]:
    """Every readable job.json under ``sweep_dir`` (each with its directory under ``"dir"``),
    by job number."""
    records = []
    for path in Path(sweep_dir).rglob(JOB_FILE):
        try:
            record = json.loads(path.read_text())
            int(record["job"])
        except (OSError, ValueError, KeyError, TypeError):
            continue
        records.append({**record, "dir": path.parent})
    return sorted(records, key=lambda r: int(r["job"]))


def override_columns(overrides: Iterable[str]) -> dict[str, str]:
    """``key=value`` overrides as columns (``+key``/``++key`` named ``key``)."""
    columns = {}
    for item in overrides:
        key, sep, value = str(item).partition("=")
        if sep:
            columns[key.lstrip("+~")] = value
    return columns


def stop_label(record: Mapping) -> str:
    """Why a job stopped, short enough for a table cell: ``early stopping at step 40``,
    ``3 epochs done``, ``100 steps done``, ``diverged at step 7``, ``interrupted after step 12``
    (its summary.json's ``stop_reason`` says it in full); empty when the run did not say."""
    reason = str(record.get("stop_reason") or "")
    if reason.startswith("early stopping"):
        return f"early stopping at step {record.get('steps', '?')}"
    return reason.split(" (")[0]


def rows(records: Sequence[Mapping], final: bool = False) -> list[dict]:
    """One row per job: job, its overrides, status, why it stopped, final metrics, wall time
    (and an error). With ``final`` (the sweep is over) a job still ``running`` is
    ``unfinished``."""
    out = []
    for record in records:
        status = record.get("status", "unknown")
        if final and status == "running":
            status = "unfinished"
        row = {"job": int(record["job"]), **override_columns(record.get("overrides", [])),
               "status": status, "stop_reason": stop_label(record)}
        for key, value in (record.get("final") or {}).items():
            row.setdefault(key, value)
        row["wall_time_s"] = record.get("wall_time_s", "")
        if record.get("error"):
            row["error"] = record["error"]
        out.append(row)
    return out


def launched(records: Sequence[Mapping], launch: str | None) -> list[Mapping]:
    """The records of the jobs ``launch`` ran (all of them when the launch is unknown)."""
    if launch is None:
        return list(records)
    return [r for r in records if r.get("launch") == launch]


def exit_code(records: Sequence[Mapping]) -> int:
    """The sweep's exit code: the most serious of its jobs' (interrupted 130, run-time error 1,
    config error 2, diverged 3), else 0. A job that never reported its end counts as 1."""
    codes = {int(r.get("exit_code", 1)) for r in records}
    return next((code for code in SEVERITY if code in codes), 0)


@contextlib.contextmanager
def _locked(sweep_dir: Path):
    """An exclusive lock on the sweep directory while one job rebuilds the table, so that the
    last job to finish writes a table that includes every job (a no-op without fcntl)."""
    try:
        import fcntl
    except ImportError:
        yield
        return
    with open(Path(sweep_dir) / LOCK_FILE, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def write_summary_csv(sweep_dir: Path, final: bool = False) -> list[dict]:
    """Rebuild ``summary.csv`` atomically from the job records; return its rows."""
    table = rows(job_records(sweep_dir), final=final)
    columns: list[str] = []
    for row in table:
        columns.extend(k for k in row if k not in columns)
    # the error, when any job has one, is the last column: it is the longest
    columns.sort(key=lambda c: c == "error")
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=columns, restval="")
    writer.writeheader()
    writer.writerows(table)
    atomic_write_bytes(Path(sweep_dir) / SUMMARY_CSV, buffer.getvalue().encode())
    return table


def refresh(sweep_dir: Path) -> list[dict]:
    """What each job does when it ends: rebuild summary.csv from every job's record so far."""
    Path(sweep_dir).mkdir(parents=True, exist_ok=True)
    with _locked(sweep_dir):
        return write_summary_csv(sweep_dir)


def format_table(table: Sequence[Mapping]) -> str:
    """The rows as an aligned text table (numbers shortened to 6 significant digits)."""
    if not table:
        return "(no jobs)"
    columns: list[str] = []
    for row in table:
        columns.extend(k for k in row if k not in columns)
    columns.sort(key=lambda c: c == "error")

    def cell(value):
        if value is None:
            return "nan"
        return f"{value:.6g}" if isinstance(value, float) else str(value)

    cells = [[cell(row.get(c, "")) for c in columns] for row in table]
    widths = [max(len(c), *(len(r[i]) for r in cells)) for i, c in enumerate(columns)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(columns, widths)).rstrip()]
    lines += ["  ".join(v.ljust(w) for v, w in zip(r, widths)).rstrip() for r in cells]
    return "\n".join(lines)


def plot_labels(records: Sequence[Mapping]) -> dict[str, Path]:
    """Each job's run directory under a label made of the overrides that differ between jobs
    (``job N`` when none do)."""
    columns = [override_columns(r.get("overrides", [])) for r in records]
    keys = sorted({k for c in columns for k in c})
    varying = [k for k in keys if len({c.get(k) for c in columns}) > 1]
    labels = {}
    for record, column in zip(records, columns):
        label = " ".join(f"{k}={column[k]}" for k in varying if k in column)
        labels[label or f"job {record['job']}"] = record["dir"]
    return labels


# --------------------------------------------------------------------------------------------
# The end of a sweep (in the launching process)
# --------------------------------------------------------------------------------------------


class _Sweep:
    """The sweep this process launched: its directory until its end is reported, then its
    exit code."""

    dir: Path | None = None
    launch: str | None = None
    code: int | None = None


def finish_sweep(sweep_dir: Path, stream=None, launch: str | None = None) -> int:
    """Rebuild summary.csv (the sweep is over), draw comparison.png, print the table (every run
    in the directory); return the exit code of the jobs ``launch`` ran. Finding none of them
    fails the sweep (1): its jobs ran where their files cannot be seen from here, such as remote
    jobs given a relative ``hydra.sweep.dir``, which they resolve against their own working
    directory."""
    sweep_dir = Path(sweep_dir)
    with _locked(sweep_dir):
        records = job_records(sweep_dir)
        table = write_summary_csv(sweep_dir, final=True)
    try:
        write_sweep_plot(sweep_dir, plot_labels(records))
    except Exception:
        log.exception("could not draw the sweep's comparison plot")
    print(f"\nsweep summary ({sweep_dir / SUMMARY_CSV}):\n{format_table(table)}", file=stream,
          flush=True)
    records = launched(records, launch)
    if not records:
        print(f"no job has written its {JOB_FILE} under {sweep_dir.resolve()}; jobs on other "
              "machines need an absolute hydra.sweep.dir on a file system shared with this one",
              file=stream, flush=True)
        return 1
    return exit_code(records)


def conclude() -> int | None:
    """Report the end of the sweep this process launched, unless Hydra's ``on_multirun_end``
    already did; its exit code (None when this process launched no sweep)."""
    if _Sweep.dir is not None:
        sweep_dir, _Sweep.dir = _Sweep.dir, None
        _Sweep.code = finish_sweep(sweep_dir, launch=_Sweep.launch)
    return _Sweep.code


class SweepSummary(Callback):
    """Hydra callback (configs/config.yaml): note the sweep directory when a multirun starts;
    at its end rebuild summary.csv, draw comparison.png and print the table."""

    def on_multirun_start(self, config, **kwargs) -> None:
        _Sweep.dir, _Sweep.code = Path(config.hydra.sweep.dir), None
        _Sweep.launch = new_launch(_Sweep.dir)

    def on_multirun_end(self, config, **kwargs) -> None:
        _Sweep.dir = Path(config.hydra.sweep.dir)
        conclude()
