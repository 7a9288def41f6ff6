"""Regression tests on config fixtures: run a short config, compare its metrics with goldens.

A fixture is ``NAME.yaml``: the command-line overrides of a short run against the shipped config
tree, and how close its metrics must stay to the recorded ones::

    overrides: ["+experiment=clip_adam", "train.steps=12", "train.log_every=4"]
    tolerance: {rtol: 1.0e-5, atol: 1.0e-7}   # |got - golden| <= atol + rtol * |golden|, at least
    config_dir: my_configs                    # optional: your own configs (as --config-dir),
                                              # relative to this file; default: its folder

Beside it, ``NAME.golden.json`` holds what ``--update`` recorded: the overrides it ran, every
logged metric at every logged step (``{"overrides": [...], "metrics": {"4": {"loss": ...}}}``),
and how far rounding alone moves each of them. Recording runs the fixture once more in a
subprocess per *rounding variant* (``VARIANTS``: OpenBLAS's other kernel families, forced with
OPENBLAS_CORETYPE, as other CPUs pick them; 1 and 2 BLAS threads; numexpr and the blocked kernels
on every chain), takes each value's largest distance from the recorded one, and stores ``SAFETY``
times it as that value's tolerance (``"tolerances"``: absolute, per step and metric) where it is
wider than the fixture's own. A value that rounding alone moves by more than ``CHAOTIC`` of itself
(the late steps of a chaotic run: clip_adam's LSTM amplifies a rounding difference about 1000x a
step) cannot tell a change of the arithmetic from a change of machine: it is listed under
``"left_out"`` with its measured spread, reported when recording and checking, and not compared.
So a golden passes on every machine whose arithmetic is right and fails when a formula, a default
or an epsilon changes. Relative data paths in the config are relative to the fixture's folder.

    python -m runner.regress tests/fixtures               # every fixture there; exit 1 on a drift
    python -m runner.regress tests/fixtures/clip_adam.yaml --update   # re-record its goldens
    python -m runner.regress my_fixtures --config-dir my_configs      # your own experiments

``--config-dir DIR`` is searched after each fixture's own ``config_dir`` (or folder), as
``python -m runner --config-dir DIR`` searches it; an experiment found in neither gets a hint
naming both.

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
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import yaml

GOLDEN_SUFFIX = ".golden.json"
DEFAULT_TOLERANCE = {"rtol": 1e-5, "atol": 1e-7}
FIXTURE_KEYS = ("overrides", "tolerance", "config_dir")
MAX_DIFF_LINES = 20  # per fixture; the rest are counted

#: OpenBLAS kernel families other CPUs pick (forced with OPENBLAS_CORETYPE; one the CPU cannot
#: run falls back to one it can, so some may coincide): AVX2, AVX-512, Zen, AVX, SSE3
KERNEL_FAMILIES = ("Haswell", "SkylakeX", "Zen", "Sandybridge", "Prescott")
#: How rounding alone moves the numbers: each variant is an environment the fixture is re-run in
#: when its goldens are recorded (every kernel family on 1 and 2 BLAS threads, and numexpr and the
#: blocked kernels on every chain they can take, which sum in other orders).
VARIANTS: tuple[dict[str, str], ...] = tuple(
    {"OPENBLAS_CORETYPE": family, "GRADPIPE_BLAS_THREADS": threads}
    for family in KERNEL_FAMILIES for threads in ("1", "2")) + (
    {"GRADPIPE_FUSE_MIN_ELEMENTS": "0", "GRADPIPE_BLOCKED_MIN_ELEMENTS": "0"},)
#: a value's recorded tolerance is this many times the farthest a variant moved it
SAFETY = 10.0
#: values that rounding moves by more than this fraction of themselves are left out
CHAOTIC = 0.01
#: how far an integer count may move at a step where rounding moved another value by more than
#: CHAOTIC: a count of
#: comparisons of rounded values (``clipped``) flips by one on a machine where a compared value
#: lands on the other side, though no variant here happened to flip it (so a small count is
#: left out there, as a count that flipped is)
COUNT_FLIP = 1
#: integer values that count the loop's own progress, which rounding never moves
COUNTERS = ("epoch", "step")


class FixtureError(Exception):
    """A fixture that cannot be run as written (its YAML, its overrides, its config)."""


@dataclasses.dataclass
class Fixture:
    path: Path
    overrides: list[str]
    rtol: float
    atol: float
    config_dir: Path  # the fixture's own config_dir, else its folder
    named_config_dir: bool = False  # whether the fixture names its config_dir
    extra_config_dir: Path | None = None  # --config-dir

    @property
    def config_dirs(self) -> list[Path]:
        """The user's config folders Hydra searches, in order."""
        return [self.config_dir] + ([self.extra_config_dir] if self.extra_config_dir else [])

    @property
    def golden_path(self) -> Path:
        return golden_path(self.path)


@dataclasses.dataclass
class Outcome:
    """What checking one fixture found: the diff's lines (none when it passes)."""

    path: Path
    problems: list[str]
    values: int = 0  # golden values compared (recorded, with --update)
    seconds: float = 0.0
    notes: list[str] = dataclasses.field(default_factory=list)  # said, not failures


def golden_path(path) -> Path:
    path = Path(path)
    return path.with_name(path.stem + GOLDEN_SUFFIX)


def load_fixture(path, config_dir=None) -> Fixture:
    """Read and check a fixture file; ``config_dir`` is ``--config-dir`` (relative to the
    current folder), searched after the fixture's own."""
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
    own = path.parent / str(spec.get("config_dir") or ".")
    if not own.is_dir():
        raise FixtureError(f"config_dir: no folder {own}")
    if config_dir is not None and not Path(config_dir).is_dir():
        raise FixtureError(f"--config-dir: no folder {config_dir}")
    return Fixture(path, list(overrides), float(tolerance["rtol"]), float(tolerance["atol"]),
                   own.resolve(), bool(spec.get("config_dir")),
                   Path(config_dir).resolve() if config_dir is not None else None)


# --------------------------------------------------------------------------------------------
# Running a fixture
# --------------------------------------------------------------------------------------------


def run_fixture(fixture: Fixture) -> dict[str, dict]:
    """Run the fixture's config in a temporary directory; its logged metrics by step (as
    strings, the goldens' keys). A run that does not complete raises FixtureError."""
    from hydra import compose

    from runner.app import initialize_compose, run

    searchpath = "hydra.searchpath=[{}]".format(
        ",".join(f"'file://{folder}'" for folder in fixture.config_dirs))
    with initialize_compose(), tempfile.TemporaryDirectory(prefix="regress-") as out_dir:
        try:
            cfg = compose("config", overrides=[searchpath, *fixture.overrides])
        except Exception as exc:
            message = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            raise FixtureError(f"the overrides do not compose: {message}"
                               + "".join(f"; {h}" for h in _compose_hints(fixture, exc))) \
                from None
        code = run(cfg, out_dir, base_dir=fixture.path.parent)
        out = Path(out_dir)
        summary = json.loads((out / "summary.json").read_text()) \
            if (out / "summary.json").exists() else {}
        lines = (out / "metrics.jsonl").read_text().splitlines() \
            if (out / "metrics.jsonl").exists() else []
    if code != 0:
        errors = summary.get("errors") or [summary.get("error") or "see the output above"]
        raise FixtureError(f"the run ended with exit code {code} "
                           f"({summary.get('status', 'no summary')}): {'; '.join(errors)}"
                           + "".join(f"; {h}" for h in _kept_default_hints(fixture)))
    records = [json.loads(line) for line in lines if line.strip()]
    return {str(r["step"]): {k: v for k, v in r.items() if k != "step"} for r in records}


def _compose_hints(fixture: Fixture, exc: Exception) -> list[str]:
    """runner.hints' lines for a fixture whose overrides do not compose."""
    from runner import hints
    from runner.app import search_folders

    own = fixture.extra_config_dir or (fixture.config_dir if fixture.named_config_dir else None)
    return hints.compose_hints(str(exc), [*fixture.config_dirs, *search_folders(None)], own,
                               "python -m runner.regress --config-dir DIR or the fixture's "
                               "config_dir: DIR")


def _kept_default_hints(fixture: Fixture) -> list[str]:
    """The hint for a fixture's experiment that writes a section over a kept default."""
    from runner import hints

    names = [o.split("=", 1)[1] for o in fixture.overrides
             if o.lstrip("+").split("=", 1)[0] == "experiment" and "=" in o]
    path = hints.experiment_file(names[-1], fixture.config_dirs) if names else None
    groups = hints.kept_defaults(path) if path is not None else []
    return [hints.override_hint(path, groups)] if groups else []


# --------------------------------------------------------------------------------------------
# Comparing
# --------------------------------------------------------------------------------------------


def close(actual, expected, rtol: float, atol: float, measured: float = 0.0) -> bool:
    """``actual`` within tolerance of ``expected`` (numbers, None for non-finite, or lists): at
    most ``atol + rtol * |expected|`` away, or ``measured`` (a recorded absolute tolerance) when
    that is wider."""
    if isinstance(expected, list) or isinstance(actual, list):
        return (isinstance(expected, list) and isinstance(actual, list)
                and len(actual) == len(expected)
                and all(close(a, e, rtol, atol, measured) for a, e in zip(actual, expected)))
    if expected is None or actual is None:
        return actual is expected
    if not isinstance(actual, (int, float)) or not isinstance(expected, (int, float)):
        return actual == expected
    if math.isnan(expected) or math.isnan(actual):
        return math.isnan(expected) and math.isnan(actual)
    return abs(actual - expected) <= max(atol + rtol * abs(expected), measured)


def distance(actual, expected) -> float:
    """How far ``actual`` is from ``expected``: the largest absolute difference (of list
    elements too); infinite when they differ in kind, length, NaN or finiteness."""
    if isinstance(expected, list) or isinstance(actual, list):
        if not (isinstance(expected, list) and isinstance(actual, list)
                and len(actual) == len(expected)):
            return math.inf
        return max((distance(a, e) for a, e in zip(actual, expected)), default=0.0)
    numbers = all(isinstance(v, (int, float)) and not isinstance(v, bool)
                  for v in (actual, expected))
    if not numbers:
        return 0.0 if actual == expected else math.inf
    if math.isnan(expected) or math.isnan(actual):
        return 0.0 if math.isnan(expected) and math.isnan(actual) else math.inf
    return abs(actual - expected)


def magnitude(value) -> float:
    """The size a distance is measured against: |value|, or the largest of a list's elements."""
    if isinstance(value, list):
        return max((magnitude(v) for v in value), default=0.0)
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return abs(value)
    return 0.0


def _num(value) -> str:
    return f"{value:.9g}" if isinstance(value, float) else json.dumps(value)


def _difference(actual, expected) -> str:
    if isinstance(actual, (int, float)) and isinstance(expected, (int, float)) \
            and not isinstance(actual, bool) and math.isfinite(actual - expected):
        diff = actual - expected
        relative = abs(diff) / abs(expected) if expected else math.inf
        return f"{diff:+.3g} (relative {relative:.3g})"
    return "differs"


def compare(actual: Mapping, golden: Mapping, rtol: float, atol: float,
            tolerances: Mapping | None = None) -> tuple[list[str], int]:
    """The diff of a run's metrics against the goldens, as readable lines (a table of the values
    outside the tolerance, then the steps and metrics the run did not log); and how many golden
    values were compared. ``tolerances`` holds measured absolute tolerances by step and metric
    (a recorded golden's), used where wider than rtol/atol."""
    tolerances = tolerances or {}
    rows, missing, compared = [], [], 0
    for step in sorted(golden, key=int):
        got = actual.get(step)
        if got is None:
            missing.append(f"step {step}: not logged by the run")
            continue
        for name in sorted(golden[step]):
            expected = golden[step][name]
            compared += 1
            measured = tolerances.get(step, {}).get(name, 0.0)
            if name not in got:
                missing.append(f"step {step}: {name} not logged by the run")
            elif not close(got[name], expected, rtol, atol, measured):
                rows.append((step, name, _num(expected), _num(got[name]),
                             _difference(got[name], expected)))
    lines = []
    if rows:
        widened = " or the measured tolerance" if tolerances else ""
        lines.append(f"{len(rows)} of {compared} values outside rtol {rtol:g}, atol {atol:g}"
                     f"{widened}:")
        table = [("step", "metric", "golden", "got", "got - golden")] + rows[:MAX_DIFF_LINES]
        widths = [max(len(r[i]) for r in table) for i in range(5)]
        lines += ["  " + "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip()
                  for r in table]
        if len(rows) > MAX_DIFF_LINES:
            lines.append(f"  ... and {len(rows) - MAX_DIFF_LINES} more")
    return lines + missing, compared


# --------------------------------------------------------------------------------------------
# Recording: goldens with the tolerances rounding implies
# --------------------------------------------------------------------------------------------


@dataclasses.dataclass
class Golden:
    """A recorded golden: the values compared, their measured tolerances, what was left out."""

    metrics: dict
    tolerances: dict = dataclasses.field(default_factory=dict)
    left_out: dict = dataclasses.field(default_factory=dict)  # step -> metric -> {value, spread}
    variants: list = dataclasses.field(default_factory=list)


def _variant_label(env: Mapping[str, str]) -> str:
    return " ".join(f"{k}={v}" for k, v in env.items())


def _run_variant(paths: list[Path], env: Mapping[str, str],
                 config_dir=None) -> dict[str, dict]:
    """The fixtures run in a fresh process under one rounding variant: path -> metrics by step
    (a fixture whose run fails there maps to None)."""
    command = [sys.executable, "-m", "runner.regress", "--emit-metrics", *map(str, paths)]
    if config_dir is not None:
        command += ["--config-dir", str(config_dir)]
    proc = subprocess.run(command, env={**os.environ, **env}, capture_output=True, text=True,
                          timeout=1800)
    if proc.returncode != 0:
        tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        raise FixtureError(f"re-running under {_variant_label(env)} failed "
                           f"(exit {proc.returncode}): {tail}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def measure(paths: list[Path], variants=None, config_dir=None) -> list[dict[str, dict]]:
    """Each variant's (default: VARIANTS) metrics of the fixtures, two processes at a time."""
    with ThreadPoolExecutor(2) as pool:
        return list(pool.map(lambda env: _run_variant(paths, env, config_dir),
                             variants or VARIANTS))


def measured_golden(fixture: Fixture, recorded: Mapping, runs: list[Mapping],
                    variants=None) -> Golden:
    """The golden of ``recorded`` (this process's run) given the same fixture's ``runs`` under
    the rounding variants: each value's spread is its largest distance from the recorded one;
    SAFETY times the spread becomes its tolerance where wider than the fixture's own, and a value
    moved by more than CHAOTIC of itself (or changed in kind: a count, a non-finite value, a step
    not logged) is left out. An integer count (not one of the loop's COUNTERS) at a step where
    another value is left out so has a spread of at least COUNT_FLIP, flipped here or not: the
    values it compares are that uncertain there."""
    golden = Golden({}, variants=[_variant_label(env) for env in variants or VARIANTS])
    for step in sorted(recorded, key=int):
        spreads = {name: max((distance(run.get(step, {}).get(name), value) for run in runs),
                             default=0.0) for name, value in recorded[step].items()}
        chaotic = any(not _is_count(value) and _chaotic(fixture, value, spreads[name])
                      for name, value in recorded[step].items())
        for name in sorted(recorded[step]):
            value = recorded[step][name]
            spread = spreads[name]
            if chaotic and _decided_by_rounding(name, value):
                spread = max(spread, COUNT_FLIP)
            own = fixture.atol + fixture.rtol * magnitude(value)
            if _chaotic(fixture, value, spread):
                golden.left_out.setdefault(step, {})[name] = {
                    "value": value, "spread": spread if math.isfinite(spread) else None}
                continue
            golden.metrics.setdefault(step, {})[name] = value
            if SAFETY * spread > own:
                golden.tolerances.setdefault(step, {})[name] = float(f"{SAFETY * spread:.3g}")
    return golden


def _chaotic(fixture: Fixture, value, spread) -> bool:
    """Whether rounding alone moved ``value`` by more than CHAOTIC of itself (and atol)."""
    return spread > CHAOTIC * magnitude(value) and spread > fixture.atol


def _is_count(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _decided_by_rounding(name, value) -> bool:
    """An integer report other than the loop's own counters (``COUNTERS``): a count of
    comparisons between computed values."""
    return _is_count(value) and name not in COUNTERS


def _write_golden(fixture: Fixture, golden: Golden) -> None:
    document = {"overrides": fixture.overrides, "metrics": golden.metrics}
    if golden.tolerances:
        document["tolerances"] = golden.tolerances
    if golden.left_out:
        document["left_out"] = golden.left_out
    document["measured"] = {
        "how": f"tolerance = {SAFETY:g} x the farthest a rounding variant moved the value, where "
               f"wider than rtol/atol; left out: moved by more than {CHAOTIC:g} of itself",
        "variants": golden.variants}
    text = json.dumps(document, indent=1, allow_nan=False)
    fixture.golden_path.write_text(text + "\n")


def _left_out_note(left_out: Mapping) -> str:
    names = [f"{step}/{name}" for step in sorted(left_out, key=int) for name in left_out[step]]
    shown = ", ".join(names[:20]) + (f" and {len(names) - 20} more" if len(names) > 20 else "")
    return (f"{len(names)} left out (rounding alone moves them by more than "
            f"{CHAOTIC:g} of themselves): {shown}")


def check(path, update: bool = False, runs: list[Mapping] | None = None,
          config_dir=None) -> Outcome:
    """Run one fixture and compare its metrics with its goldens (or, with ``update``, record
    them, re-running it under every rounding variant unless ``runs`` holds those runs' metrics);
    every problem, including a fixture or run that fails, is a line of the outcome.
    ``config_dir`` is ``--config-dir``."""
    started = time.perf_counter()
    path = Path(path)
    outcome = Outcome(path, [])
    try:
        fixture = load_fixture(path, config_dir)
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
            if runs is None:
                runs = [run[str(path)] for run in measure([path], config_dir=config_dir)]
            if any(run is None for run in runs):
                raise FixtureError("the fixture's run fails under a rounding variant")
            recorded_golden = measured_golden(fixture, actual, runs)
            _write_golden(fixture, recorded_golden)
            outcome.values = sum(map(len, recorded_golden.metrics.values()))
            if recorded_golden.left_out:
                outcome.notes.append(_left_out_note(recorded_golden.left_out))
        else:
            outcome.problems, outcome.values = compare(
                actual, golden["metrics"], fixture.rtol, fixture.atol, golden.get("tolerances"))
            if golden.get("left_out"):
                outcome.notes.append(_left_out_note(golden["left_out"]))
    except FixtureError as exc:
        outcome.problems = [str(exc)]
    outcome.seconds = time.perf_counter() - started
    return outcome


def check_fixture(path, update: bool = False, config_dir=None) -> list[str]:
    """Check one fixture (``NAME.yaml`` with ``NAME.golden.json`` beside it); the lines of the
    diff, empty when every golden value is within tolerance. ``update`` re-records the goldens;
    ``config_dir`` is searched for the user's configs after the fixture's own."""
    return check(path, update, config_dir=config_dir).problems


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


def emit_metrics(paths: list[Path], config_dir=None) -> int:
    """``--emit-metrics``: run each fixture and print one JSON line, path -> metrics by step
    (None for a fixture that cannot run); how a recording process reads a rounding variant."""
    out = {}
    for path in paths:
        try:
            out[str(path)] = run_fixture(load_fixture(path, config_dir))
        except FixtureError:
            out[str(path)] = None
    print(json.dumps(out))
    return 0


def main(argv: Iterable[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m runner.regress",
        description="Run config fixtures and compare their metrics with their goldens.")
    parser.add_argument("paths", nargs="+", help="fixture files (NAME.yaml) or folders of them")
    parser.add_argument("--update", action="store_true",
                        help="re-record the golden metrics and measure their tolerances (the "
                             "fixtures re-run under other BLAS kernels and thread counts)")
    parser.add_argument("--config-dir", metavar="DIR",
                        help="a folder of your own configs (DIR/experiment/NAME.yaml), searched "
                             "as python -m runner --config-dir DIR searches it")
    parser.add_argument("--emit-metrics", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(None if argv is None else list(argv))
    paths = fixture_paths(*args.paths)
    absent = [p for p in paths if not p.is_file()]
    if absent or not paths:
        print(f"no fixture file {absent[0]}" if absent else "no fixtures found", file=sys.stderr)
        return 2
    if args.config_dir is not None and not Path(args.config_dir).is_dir():
        print(f"--config-dir: no folder {args.config_dir}", file=sys.stderr)
        return 2
    if args.emit_metrics:
        return emit_metrics(paths, args.config_dir)
    variant_runs = None
    if args.update:
        print(f"measuring rounding: {len(paths)} fixture(s) under {len(VARIANTS)} variants ...",
              flush=True)
        try:
            variant_runs = measure(paths, config_dir=args.config_dir)
        except FixtureError as exc:
            print(f"FAILED  {exc}")
            return 1
    failed = 0
    for path in paths:
        runs = None if variant_runs is None else [run[str(path)] for run in variant_runs]
        # a fixture that fails under a variant is run here first, so its own error is shown
        outcome = check(path, update=args.update, runs=runs, config_dir=args.config_dir)
        if outcome.problems:
            status, detail = "FAILED", ""
        elif args.update:
            status, detail = "updated", f"  -> {golden_path(path).name} ({outcome.values} values)"
        else:
            status, detail = "ok", f"  ({outcome.values} values)"
        print(f"{status:8}{path}{detail}  {outcome.seconds:.1f} s", flush=True)
        for line in outcome.problems + outcome.notes:
            print(f"        {line}")
        failed += bool(outcome.problems)
    if len(paths) > 1:
        print(f"{len(paths) - failed} passed, {failed} failed" if not args.update else
              f"{len(paths) - failed} updated, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
