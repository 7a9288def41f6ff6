"""A run directory belongs to one run at a time, and no run loses another's files.

- ``lock`` takes the directory's lock file (``.runner.lock``, holding the owner's pid) before
  anything is written there. It is an ``flock`` lock: the kernel drops it when its process dies,
  so the lock of a killed run is stale and taken over, never waited for. A second run while the
  first lives is a config error on ``hydra.run.dir`` naming the directory and the live pid.
- ``claim`` refuses a fresh run (``train.resume: false``) in a directory that holds a run
  (checkpoint.npz, metrics.jsonl, or a summary.json of a run that got past its start), unless
  ``train.overwrite: true``, which moves the earlier files into ``replaced-TIME/`` there: nothing is
  ever deleted.
- Hydra writes the job's config into ``.hydra/`` before the task function runs. ``stash_hydra``
  copies the earlier run's ``.hydra/`` aside first (the Hydra callback ``Guard`` does both before
  Hydra writes anything); ``settle_hydra`` puts it back when the new run ended before its first
  step (a refused resume, a check), and drops the copy when the run went on. In a multirun Hydra
  writes each job's ``.hydra/`` before any per-job callback, so a resuming sweep copies every
  job directory's aside when it starts (``Guard.on_multirun_start``) and each job takes its copy
  over (``adopt_stash``, in whatever process the launcher runs it).

This module imports neither numpy nor the engine: Hydra's callback loads it on every start.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import time
from pathlib import Path

from runner.errors import ConfigError
from runner.outputs import METRICS, SUMMARY

try:
    import fcntl
except ImportError:  # Windows: no flock; the pid in the lock file is checked instead
    fcntl = None

log = logging.getLogger("runner")

LOCK = ".runner.lock"
CHECKPOINT = "checkpoint.npz"  # runner.checkpoint's name (that module loads numpy)
HYDRA_STASH_SUFFIX = ".previous"
REPLACED_PREFIX = "replaced-"
KEY = "hydra.run.dir"

_held: dict[Path, int] = {}  # directory -> the open file descriptor of its lock
_stashed: dict[Path, tuple[Path, Path]] = {}  # directory -> (.hydra, its copy)


# -- the lock --------------------------------------------------------------------------------


def lock(directory: Path) -> bool:
    """Own ``directory`` (made if missing); True if taken now, False if this process already
    holds it. A ConfigError on ``hydra.run.dir`` when a live process holds it."""
    directory = Path(directory).resolve()
    if directory in _held:
        return False
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / LOCK
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
        try:
            previous = _take(fd, path, directory)
        except BaseException:
            os.close(fd)
            raise
        if previous is None:  # the file was replaced while we waited on it: try again
            os.close(fd)
            continue
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        _held[directory] = fd
        if previous and previous != os.getpid():
            log.info("%s: took over the stale lock of process %d (no longer running)",
                     directory, previous)
        return True


def _take(fd: int, path: Path, directory: Path) -> int | None:
    """Lock the open lock file; the pid it held before (0 if none), or None when ``path`` no
    longer names this file (its owner unlinked it on release)."""
    previous = _read_pid(fd)
    if fcntl is not None:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            raise _in_use(directory, _read_pid(fd)) from None
    elif previous and previous != os.getpid() and _alive(previous):
        raise _in_use(directory, previous)
    try:
        same = os.path.samestat(os.fstat(fd), os.stat(path))
    except FileNotFoundError:
        same = False
    return previous if same else None


def _in_use(directory: Path, pid: int, key: str = KEY) -> ConfigError:
    owner = f"process {pid}" if pid else "another process"
    return ConfigError(key, f"{directory} is in use by a running run ({owner}); wait for it to "
                            f"end, or choose another {key}")


def _read_pid(fd: int) -> int:
    try:
        text = os.pread(fd, 64, 0).decode("ascii", errors="replace").strip()
    except OSError:
        return 0
    return int(text) if text.isdigit() else 0


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def release(directory: Path) -> None:
    """Give up the lock of ``directory`` if this process holds it (its file is removed)."""
    directory = Path(directory).resolve()
    fd = _held.pop(directory, None)
    if fd is None:
        return
    try:
        (directory / LOCK).unlink(missing_ok=True)
    finally:
        os.close(fd)


# -- what a directory holds ------------------------------------------------------------------


def run_outputs(directory: Path) -> list[str]:
    """The files in ``directory`` that belong to a run: its checkpoint, its metrics, and its
    summary unless that records a run that failed before its first step (such a directory is
    free for the corrected config)."""
    directory = Path(directory)
    found = [name for name in (CHECKPOINT, METRICS) if (directory / name).exists()]
    summary = directory / SUMMARY
    if summary.exists() and (found or not _failed_at_start(summary)):
        found.insert(0, SUMMARY)
    return found


def _failed_at_start(path: Path) -> bool:
    import json

    try:
        summary = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(summary, dict) and summary.get("status") == "failed" \
        and summary.get("steps") == 0


def move_aside(directory: Path, names: list[str] | None = None) -> Path:
    """Move ``names`` (default: everything but the lock and earlier ``replaced-*`` folders) into
    a new ``replaced-TIME`` folder of ``directory``; that folder."""
    directory = Path(directory)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    target = directory / f"{REPLACED_PREFIX}{stamp}"
    n = 1
    while target.exists():
        n += 1
        target = directory / f"{REPLACED_PREFIX}{stamp}-{n}"
    target.mkdir()
    if names is None:
        names = [p.name for p in directory.iterdir()
                 if p.name != LOCK and not p.name.startswith(REPLACED_PREFIX)]
    for name in names:
        if (directory / name).exists():
            os.replace(directory / name, target / name)
    return target


_TEMPORARY = re.compile(r"^\..+\.\d+\.[0-9a-f]+\.tmp$")


def remove_stale_temporaries(directory: Path) -> None:
    """Remove the temporary files of atomic writes (``.checkpoint.npz.PID.HEX.tmp``) that a
    killed run left; only called with the directory's lock held, so no live run writes them."""
    for path in Path(directory).iterdir():
        if _TEMPORARY.match(path.name) and path.is_file():
            path.unlink(missing_ok=True)
            log.info("removed %s, left by an interrupted write", path.name)


def flags(cfg) -> tuple[bool, bool]:
    """(resume, overwrite) for ``claim`` from a raw config. A mode other than train writes no
    run outputs, so it may use a run's directory as a resumed run does. Values that are not
    booleans count as false here; the config check reports them."""
    try:
        train = cfg.get("train") or {}
        mode = cfg.get("mode", "train")
        resume, overwrite = train.get("resume"), train.get("overwrite")
    except Exception:  # noqa: BLE001 - a config too broken to read: the config check says why
        return False, False
    return resume is True or mode != "train", overwrite is True


def claim(directory: Path, resume: bool, overwrite: bool = False) -> bool:
    """Lock ``directory`` for a run and make sure a fresh run destroys no earlier one; True if
    the lock was taken now (see ``lock``)."""
    taken = lock(directory)
    try:
        remove_stale_temporaries(directory)
        found = run_outputs(directory)
        if found and not resume:
            if not overwrite:
                raise ConfigError(KEY, f"{Path(directory).resolve()} holds a run "
                                       f"({', '.join(found)}): use train.resume=true to "
                                       "continue, or another hydra.run.dir (train.overwrite=true "
                                       "moves its files aside)")
            target = move_aside(directory)
            log.warning("train.overwrite: the earlier run's files are in %s", target)
    except BaseException:
        if taken:
            release(directory)
        raise
    return taken


# -- Hydra's .hydra/ -------------------------------------------------------------------------


def stash_hydra(directory: Path, subdir: str | None) -> None:
    """Before Hydra writes ``subdir`` (``.hydra``) into a directory holding a run, copy the
    earlier one aside, for ``settle_hydra``. A copy left by a run killed before it settled is
    dealt with first: put back when ``subdir`` is gone, else dropped."""
    directory = Path(directory).resolve()
    if not subdir:
        return
    hydra_dir = directory / subdir
    stash = directory / f"{subdir}{HYDRA_STASH_SUFFIX}"
    if stash.exists() and not hydra_dir.exists():
        os.replace(stash, hydra_dir)  # a stash left by a killed run: that was the real one
    shutil.rmtree(stash, ignore_errors=True)
    if hydra_dir.is_dir() and run_outputs(directory):
        shutil.copytree(hydra_dir, stash)
        _stashed[directory] = (hydra_dir, stash)


def adopt_stash(directory: Path, subdir: str | None) -> None:
    """In a multirun job's process: take over the copy of ``subdir`` that ``Guard`` made when
    the sweep started (possibly in another process), for ``settle_hydra``."""
    directory = Path(directory).resolve()
    if subdir and directory not in _stashed:
        stash = directory / f"{subdir}{HYDRA_STASH_SUFFIX}"
        if stash.is_dir():
            _stashed[directory] = (directory / subdir, stash)


def settle_hydra(directory: Path, started: bool) -> None:
    """After the task: keep Hydra's new ``.hydra`` when the run went past its start, else put
    the earlier run's back."""
    pair = _stashed.pop(Path(directory).resolve(), None)
    if pair is None:
        return
    hydra_dir, stash = pair
    if not stash.is_dir():  # settled by a job in another process
        return
    if started:
        shutil.rmtree(stash, ignore_errors=True)
        return
    shutil.rmtree(hydra_dir, ignore_errors=True)
    os.replace(stash, hydra_dir)


def _job_directories(sweep: Path, subdir: str) -> list[Path]:
    """The directories under a sweep directory that hold a run with its ``subdir``."""
    return sorted(p.parent for p in Path(sweep).rglob(subdir)
                  if p.is_dir() and run_outputs(p.parent))


def _same_tree(a: Path, b: Path) -> bool:
    import filecmp

    compared = filecmp.dircmp(a, b)
    _, mismatch, errors = filecmp.cmpfiles(a, b, compared.common_files, shallow=False)
    return not (compared.left_only or compared.right_only or compared.funny_files or mismatch
                or errors) and all(_same_tree(a / d, b / d) for d in compared.common_dirs)


def drop_unused_stashes() -> None:
    """At the end of a multirun: the copies no job settled (no job ran in that directory) are
    dropped where Hydra left ``.hydra`` unchanged; others stay for the next start there."""
    for directory in list(_stashed):
        hydra_dir, stash = _stashed[directory]
        if stash.is_dir() and hydra_dir.is_dir() and _same_tree(hydra_dir, stash):
            shutil.rmtree(stash, ignore_errors=True)
        if not stash.is_dir():
            _stashed.pop(directory, None)


def holder(directory: Path) -> int | None:
    """The pid of the live process holding ``directory``'s lock (0 when unknown), or None when
    no live process does; the lock is not kept."""
    path = Path(directory) / LOCK
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        pid = _read_pid(fd)
        if fcntl is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except OSError:
                return pid
            return None
        return pid if pid and _alive(pid) and pid != os.getpid() else None
    finally:
        os.close(fd)


def _select(config, key: str, default=None):
    from omegaconf import OmegaConf

    value = OmegaConf.select(config, key, default=default)
    return default if value is None else value


try:
    from hydra.experimental.callback import Callback
except ImportError:  # pragma: no cover - hydra is a dependency; this keeps the module importable
    Callback = object


class Guard(Callback):
    """Hydra callback (configs/config.yaml): in a single run, lock the run directory and refuse a
    fresh run over an earlier one before Hydra writes anything there (``.hydra/``, the log); in
    a multirun, refuse a sweep directory whose jobs' directories hold runs (each job then locks
    its own directory in runner.app.run)."""

    def on_run_start(self, config, **kwargs) -> None:
        import sys

        directory = Path(str(config.hydra.run.dir))
        try:
            claim(directory, *flags(config))
        except ConfigError as error:
            print(str(error), file=sys.stderr)
            raise SystemExit(2) from None
        stash_hydra(directory, _select(config, "hydra.output_subdir"))

    def on_multirun_start(self, config, **kwargs) -> None:
        """A sweep into a sweep directory whose job directories hold runs is refused (their
        .hydra/ would be overwritten before any job could refuse), unless it resumes them. A
        resuming sweep is refused while a live run holds one of them; otherwise each one's
        .hydra/ is copied aside, so that a job that fails before its first step puts it back
        (``adopt_stash``, ``settle_hydra``; Hydra writes it before any per-job callback)."""
        import sys

        resume, _ = flags(config)
        sweep = Path(str(config.hydra.sweep.dir))
        if not sweep.is_dir():
            return
        subdir = _select(config, "hydra.output_subdir")
        if resume:
            for lock_file in sweep.rglob(LOCK):
                pid = holder(lock_file.parent)
                if pid is not None:
                    print(_in_use(lock_file.parent.resolve(), pid, "hydra.sweep.dir"),
                          file=sys.stderr)
                    raise SystemExit(2)
            for directory in _job_directories(sweep, subdir) if subdir else ():
                stash_hydra(directory, subdir)
            return
        used = sorted(p.name for p in sweep.iterdir() if p.is_dir() and run_outputs(p))
        if used:
            print(f"hydra.sweep.dir: {sweep.resolve()} holds runs ({', '.join(used[:5])}"
                  f"{', ...' if len(used) > 5 else ''}): use another hydra.sweep.dir, or "
                  "train.resume=true to continue them", file=sys.stderr)
            raise SystemExit(2)

    def on_multirun_end(self, config, **kwargs) -> None:
        drop_unused_stashes()
