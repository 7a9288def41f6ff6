"""Regression tests on config fixtures: run a short config, compare its metrics with goldens.

A fixture is ``NAME.yaml``: the command-line overrides of a short run against the shipped config
tree, and how close its metrics must stay to the recorded ones::

    overrides: ["+experiment=clip_adam", "train.steps=12", "train.log_every=4"]
    tolerance: {rtol: 1.0e-5, atol: 1.0e-7}   # |got - golden| <= atol + rtol * |golden|
    config_dir: my_configs                    # optional: your own configs (as --config-dir),
                                              # relative to this file; default: its folder

Beside it, ``NAME.golden.json`` holds what ``--update`` recorded: the overrides it ran and every
logged metric at every logged step (``{"overrides": [...], "metrics": {"4": {"loss": ...}}}``).
Relative data paths in the config are relative to the fixture's folder.

    python -m runner.regress tests/fixtures               # every fixture there; exit 1 on a drift
    python -m runner.regress tests/fixtures/clip_adam.yaml --update   # re-record its goldens

From pytest::

    from runner.regress import assert_fixture, fixture_paths

    @pytest.mark.parametrize("path", fixture_paths("tests/fixtures"), ids=lambda p: p.stem)
    def test_regression(path):
        assert_fixture(path)     # AssertionError with the readable diff on a drift

(``check_fixture(path)`` returns the diff's lines instead, empty when the fixture passes.)
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import sys
import tempfile
import time
from collections.abc import Iterable, Mapping
from pathlib import Path

import yaml

GOLDEN_SUFFIX = ".golden.json"
DEFAULT_TOLERANCE = {"rtol": 1e-5, "atol": 1e-7}
FIXTURE_KEYS = ("overrides", "tolerance", "config_dir")
MAX_DIFF_LINES = 20  # per fixture; the rest are counted


class FixtureError(Exception):
    """A fixture that cannot be run as written (its YAML, its overrides, its config)."""


@dataclasses.dataclass
class Fixture:
    path: Path
    overrides: list[str]
    rtol: float
    atol: float
    config_dir: Path

    @property
    def golden_path(self) -> Path:
        return golden_path(self.path)


@dataclasses.dataclass
class Outcome:
    """What checking one fixture found: the diff's lines (none when it passes)."""

    path: Path
    problems: list[str]
    values: int = 0  # golden values compared
    seconds: float = 0.0


def golden_path(path) -> Path:
    path = Path(path)
    return path.with_name(path.stem + GOLDEN_SUFFIX)


def load_fixture(path) -> Fixture:
    """Read and check a fixture file."""
    from runner.errors import did_you_mean

    path = Path(path)
    try:
        spec = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise FixtureError(f"cannot read the fixture: {str(exc).splitlines()[0]}") from None
    spec = {} if spec is None else spec
    if not isinstance(spec, Mapping):
        raise FixtureError(f"a fixture is a mapping with the keys {', '.join(FIXTURE_KEYS)}")
    problems = [f"unknown key '{k}'{did_you_mean(k, FIXTURE_KEYS)}" for k in spec
                if k not in FIXTURE_KEYS]
    overrides = spec.get("overrides") or []
    if not isinstance(overrides, list) or not all(isinstance(o, str) for o in overrides):
        problems.append("overrides: a list of strings (command-line overrides)")
    tolerance = {**DEFAULT_TOLERANCE, **(spec.get("tolerance") or {})}
    for key in tolerance:
        value = tolerance[key]
        if key not in DEFAULT_TOLERANCE:
            problems.append(f"tolerance.{key}: unknown{did_you_mean(key, DEFAULT_TOLERANCE)}; "
                            "known: rtol, atol")
        elif isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
            problems.append(f"tolerance.{key}: a number >= 0, got {value!r}")
    if problems:
        raise FixtureError("; ".join(problems))
    config_dir = path.parent / str(spec.get("config_dir") or ".")
    if not config_dir.is_dir():
        raise FixtureError(f"config_dir: no folder {config_dir}")
    return Fixture(path, list(overrides), float(tolerance["rtol"]), float(tolerance["atol"]),
                   config_dir.resolve())


# --------------------------------------------------------------------------------------------
# Running a fixture
# --------------------------------------------------------------------------------------------


def _initialize():
    """Hydra's compose API on the shipped config tree (the installed package, or configs/ in a
    source checkout), as ``python -m runner`` finds it."""
    from hydra import initialize_config_dir, initialize_config_module

    from runner.app import CONFIG_PACKAGE, config_dir

    if config_dir().startswith("pkg://"):
        return initialize_config_module(CONFIG_PACKAGE, version_base="1.3")
    return initialize_config_dir(config_dir(), version_base="1.3")


def run_fixture(fixture: Fixture) -> dict[str, dict]:
    """Run the fixture's config in a temporary directory; its logged metrics by step (as
    strings, the goldens' keys). A run that does not complete raises FixtureError."""
    from hydra import compose

    from runner.app import run

    searchpath = f"hydra.searchpath=['file://{fixture.config_dir}']"
    with _initialize(), tempfile.TemporaryDirectory(prefix="regress-") as out_dir:
        try:
            cfg = compose("config", overrides=[searchpath, *fixture.overrides])
        except Exception as exc:
            message = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            raise FixtureError(f"the overrides do not compose: {message}") from None
        code = run(cfg, out_dir, base_dir=fixture.path.parent)
        out = Path(out_dir)
        summary = json.loads((out / "summary.json").read_text()) \
            if (out / "summary.json").exists() else {}
        lines = (out / "metrics.jsonl").read_text().splitlines() \
            if (out / "metrics.jsonl").exists() else []
    if code != 0:
        errors = summary.get("errors") or [summary.get("error") or "see the output above"]
        raise FixtureError(f"the run ended with exit code {code} "
                           f"({summary.get('status', 'no summary')}): {'; '.join(errors)}")
    records = [json.loads(line) for line in lines if line.strip()]
    return {str(r["step"]): {k: v for k, v in r.items() if k != "step"} for r in records}


# --------------------------------------------------------------------------------------------
# Comparing
# --------------------------------------------------------------------------------------------


def close(actual, expected, rtol: float, atol: float) -> bool:
    """``actual`` within tolerance of ``expected`` (numbers, None for non-finite, or lists)."""
    if isinstance(expected, list) or isinstance(actual, list):
        return (isinstance(expected, list) and isinstance(actual, list)
                and len(actual) == len(expected)
                and all(close(a, e, rtol, atol) for a, e in zip(actual, expected)))
    if expected is None or actual is None:
        return actual is expected
    if not isinstance(actual, (int, float)) or not isinstance(expected, (int, float)):
        return actual == expected
    if math.isnan(expected) or math.isnan(actual):
        return math.isnan(expected) and math.isnan(actual)
    return abs(actual - expected) <= atol + rtol * abs(expected)


def _num(value) -> str:
    return f"{value:.9g}" if isinstance(value, float) else json.dumps(value)


def _difference(actual, expected) -> str:
    if isinstance(actual, (int, float)) and isinstance(expected, (int, float)) \
            and not isinstance(actual, bool) and math.isfinite(actual - expected):
        diff = actual - expected
        relative = abs(diff) / abs(expected) if expected else math.inf
        return f"{diff:+.3g} (relative {relative:.3g})"
    return "differs"


def compare(actual: Mapping, golden: Mapping, rtol: float, atol: float) -> tuple[list[str], int]:
    """The diff of a run's metrics against the goldens, as readable lines (a table of the values
    outside the tolerance, then the steps and metrics the run did not log); and how many golden
    values were compared."""
    rows, missing, compared = [], [], 0
    for step in sorted(golden, key=int):
        got = actual.get(step)
        if got is None:
            missing.append(f"step {step}: not logged by the run")
            continue
        for name in sorted(golden[step]):
            expected = golden[step][name]
            compared += 1
            if name not in got:
                missing.append(f"step {step}: {name} not logged by the run")
            elif not close(got[name], expected, rtol, atol):
                rows.append((step, name, _num(expected), _num(got[name]),
                             _difference(got[name], expected)))
    lines = []
    if rows:
        lines.append(f"{len(rows)} of {compared} values outside rtol {rtol:g}, atol {atol:g}:")
        table = [("step", "metric", "golden", "got", "got - golden")] + rows[:MAX_DIFF_LINES]
        widths = [max(len(r[i]) for r in table) for i in range(5)]
        lines += ["  " + "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip()
                  for r in table]
        if len(rows) > MAX_DIFF_LINES:
            lines.append(f"  ... and {len(rows) - MAX_DIFF_LINES} more")
    return lines + missing, compared


def _write_golden(fixture: Fixture, metrics: Mapping) -> None:
    ordered = {step: dict(sorted(metrics[step].items())) for step in sorted(metrics, key=int)}
    text = json.dumps({"overrides": fixture.overrides, "metrics": ordered}, indent=1,
                      allow_nan=False)
    fixture.golden_path.write_text(text + "\n")


def check(path, update: bool = False) -> Outcome:
    """Run one fixture and compare its metrics with its goldens (or, with ``update``, record
    them); every problem, including a fixture or run that fails, is a line of the outcome."""
    started = time.perf_counter()
    path = Path(path)
    outcome = Outcome(path, [])
    try:
        fixture = load_fixture(path)
        golden = None
        if not update:
            if not fixture.golden_path.exists():
                raise FixtureError(f"no golden file {fixture.golden_path.name}: record it with "
                                   f"python -m runner.regress {path} --update")
            golden = json.loads(fixture.golden_path.read_text())
            recorded = golden.get("overrides")
            if recorded is not None and recorded != fixture.overrides:
                raise FixtureError(f"the overrides differ from those the goldens were recorded "
                                   f"with ({recorded}); re-record them with --update")
        actual = run_fixture(fixture)
        if update:
            _write_golden(fixture, actual)
        else:
            outcome.problems, outcome.values = compare(actual, golden["metrics"], fixture.rtol,
                                                       fixture.atol)
    except FixtureError as exc:
        outcome.problems = [str(exc)]
    outcome.seconds = time.perf_counter() - started
    return outcome


def check_fixture(path, update: bool = False) -> list[str]:
    """Check one fixture (``NAME.yaml`` with ``NAME.golden.json`` beside it); the lines of the
    diff, empty when every golden value is within tolerance. ``update`` re-records the goldens."""
    return check(path, update).problems


def assert_fixture(path) -> None:
    """For pytest: raise AssertionError with the readable diff when the fixture fails."""
    problems = check_fixture(path)
    if problems:
        raise AssertionError(f"{path}:\n" + "\n".join(problems))


def fixture_paths(*paths) -> list[Path]:
    """The fixture files named, and those in the folders named (``*.yaml`` directly inside,
    not the config folders next to them). Relative paths are taken from the current folder."""
    out = []
    for p in map(Path, paths):
        out.extend(sorted(p.glob("*.yaml")) if p.is_dir() else [p])
    return out


def main(argv: Iterable[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m runner.regress",
        description="Run config fixtures and compare their metrics with their goldens.")
    parser.add_argument("paths", nargs="+", help="fixture files (NAME.yaml) or folders of them")
    parser.add_argument("--update", action="store_true", help="re-record the golden metrics")
    args = parser.parse_args(None if argv is None else list(argv))
    paths = fixture_paths(*args.paths)
    absent = [p for p in paths if not p.is_file()]
    if absent or not paths:
        print(f"no fixture file {absent[0]}" if absent else "no fixtures found", file=sys.stderr)
        return 2
    failed = 0
    for path in paths:
        outcome = check(path, update=args.update)
        if outcome.problems:
            status, detail = "FAILED", ""
        elif args.update:
            status, detail = "updated", f"  -> {golden_path(path).name}"
        else:
            status, detail = "ok", f"  ({outcome.values} values)"
        print(f"{status:8}{path}{detail}  {outcome.seconds:.1f} s", flush=True)
        for line in outcome.problems:
            print(f"        {line}")
        failed += bool(outcome.problems)
    if len(paths) > 1:
        print(f"{len(paths) - failed} passed, {failed} failed" if not args.update else
              f"{len(paths) - failed} updated, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    # As `python -m runner` does (runner/__main__.py): one BLAS thread unless the environment
    # says otherwise, set before numpy is imported (the runner is imported by main()).
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    sys.exit(main())
