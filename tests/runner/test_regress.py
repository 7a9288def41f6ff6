"""Regression fixtures: every shipped experiment has one and it passes; a drift, a failing run or
a broken fixture is reported readably; --update re-records; users' own configs next to a fixture."""

import json
import shutil
import textwrap

import pytest
from runner_helpers import EXPERIMENTS, REPO

from runner.regress import assert_fixture, check_fixture, close, fixture_paths, main

FIXTURES = REPO / "tests" / "fixtures"


def test_every_shipped_experiment_has_a_fixture_with_goldens():
    assert sorted(p.stem for p in fixture_paths(FIXTURES)) == EXPERIMENTS
    assert all((FIXTURES / f"{name}.golden.json").exists() for name in EXPERIMENTS)


@pytest.mark.parametrize("path", fixture_paths(FIXTURES), ids=lambda p: p.stem)
def test_fixture_matches_its_goldens(path):
    assert_fixture(path)


def _copy(tmp_path, name="minimize"):
    shutil.copy(FIXTURES / f"{name}.yaml", tmp_path / "m.yaml")
    shutil.copy(FIXTURES / f"{name}.golden.json", tmp_path / "m.golden.json")
    return tmp_path / "m.yaml"


def _scale_last_loss(tmp_path, factor):
    golden = json.loads((tmp_path / "m.golden.json").read_text())
    step = max(golden["metrics"], key=int)
    golden["metrics"][step]["loss"] *= factor
    (tmp_path / "m.golden.json").write_text(json.dumps(golden))
    return step


def test_a_value_within_the_tolerance_passes(tmp_path):
    """minimize.yaml: rtol 1e-5 (atol 1e-7 is negligible next to a loss of about 1)."""
    path = _copy(tmp_path)
    _scale_last_loss(tmp_path, 1 + 0.5e-5)
    assert check_fixture(path) == []
    _scale_last_loss(tmp_path, 1 + 2e-5)
    assert len(check_fixture(path)) == 3  # the header, the table's head and one row


def test_a_drift_fails_with_a_readable_table_and_update_re_records(tmp_path, capsys):
    path = _copy(tmp_path)
    step = _scale_last_loss(tmp_path, 1.01)
    assert main([str(tmp_path)]) == 1
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0].startswith(f"FAILED  {path}")
    assert lines[1].strip() == "1 of 15 values outside rtol 1e-05, atol 1e-07:"
    assert lines[2].split() == ["step", "metric", "golden", "got", "got", "-", "golden"]
    assert lines[3].split()[:2] == [step, "loss"] and "relative 0.0099" in lines[3]
    assert main([str(tmp_path), "--update"]) == 0
    assert main([str(path)]) == 0
    assert "ok      " in capsys.readouterr().out


def test_missing_golden_is_reported(tmp_path):
    path = _copy(tmp_path)
    (tmp_path / "m.golden.json").unlink()
    assert "no golden file m.golden.json" in check_fixture(path)[0]


def test_a_run_that_fails_is_reported_and_no_golden_is_written(tmp_path):
    (tmp_path / "bad.yaml").write_text('overrides: ["train.steps=-1"]\n')
    problems = check_fixture(tmp_path / "bad.yaml", update=True)
    assert problems[0].startswith("the run ended with exit code 2 (failed): train.steps")
    assert not (tmp_path / "bad.golden.json").exists()


def test_overrides_that_do_not_compose_are_reported(tmp_path):
    (tmp_path / "bad.yaml").write_text('overrides: ["+experiment=no_such_thing"]\n')
    problems = check_fixture(tmp_path / "bad.yaml", update=True)
    assert problems[0].startswith("the overrides do not compose:") and "no_such_thing" in problems[0]


def test_a_misspelt_fixture_key_is_named(tmp_path):
    (tmp_path / "bad.yaml").write_text("overrides: []\ntolerence: {rtol: 0.1}\n")
    assert check_fixture(tmp_path / "bad.yaml") == [
        "unknown key 'tolerence' (did you mean 'tolerance'?)"]


def test_goldens_recorded_with_other_overrides_are_reported(tmp_path):
    path = _copy(tmp_path)
    path.write_text(path.read_text().replace("train.steps=12", "train.steps=8"))
    assert "re-record them with --update" in check_fixture(path)[0]


def test_a_fixture_of_the_users_own_experiment(tmp_path):
    """An experiment in the fixture's config_dir, found as with --config-dir."""
    (tmp_path / "configs" / "experiment").mkdir(parents=True)
    (tmp_path / "configs" / "experiment" / "quadratic.yaml").write_text(textwrap.dedent("""\
        # @package _global_
        defaults:
          - override /model: null
          - override /data: null
          - override /groups: null
        model:
          variables: {w: {init: [3.0, -1.0]}}
          graph: {loss: sum(w ** 2)}
          loss: loss
        groups:
          all: {select: {variables: [w]}, optimizer: {name: sgd, learning_rate: 0.25}}
        train: {steps: 2, log_every: 1}
    """))
    (tmp_path / "q.yaml").write_text('overrides: ["+experiment=quadratic"]\nconfig_dir: configs\n')
    assert check_fixture(tmp_path / "q.yaml", update=True) == []
    golden = json.loads((tmp_path / "q.golden.json").read_text())
    # sum(w**2) with w <- w - 0.25 * 2w = w / 2: the loss at step k is 10 / 4**(k-1)
    assert [golden["metrics"][s]["loss"] for s in ("1", "2")] == [10.0, 2.5]
    assert check_fixture(tmp_path / "q.yaml") == []


def test_no_fixtures_is_a_usage_error(tmp_path, capsys):
    assert main([str(tmp_path)]) == 2
    assert main([str(tmp_path / "absent.yaml")]) == 2
    assert "no fixture file" in capsys.readouterr().err


@pytest.mark.parametrize("actual, expected, ok", [
    (1.0, 1.0 + 0.9e-5, True), (1.0, 1.0 + 1.1e-5, False), (0.0, 0.9e-7, True),
    (None, None, True), (None, 1.0, False), (1.0, None, False), (float("nan"), float("nan"), True),
    (3, 3, True), (3, 4, False), ([1.0, 2.0], [1.0, 2.0], True), ([1.0], [1.0, 2.0], False)])
def test_close_is_atol_plus_rtol_times_the_golden(actual, expected, ok):
    assert close(actual, expected, rtol=1e-5, atol=1e-7) is ok
