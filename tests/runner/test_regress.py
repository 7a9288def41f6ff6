"""Regression fixtures: every shipped experiment has one and it passes; a drift, a failing run or
a broken fixture is reported readably; --update re-records and measures how far rounding moves each
value; users' own configs next to a fixture."""

import json
import shutil
import textwrap

import pytest
from runner_helpers import EXPERIMENTS, REPO

from runner import regress
from runner.regress import assert_fixture, check_fixture, close, fixture_paths, main

FIXTURES = REPO / "tests" / "fixtures"
#: a rounding variant: the engine's blocked kernels and numexpr on every chain they can take
OTHER_SUMMATION_ORDER = {"GRADPIPE_FUSE_MIN_ELEMENTS": "0", "GRADPIPE_BLOCKED_MIN_ELEMENTS": "0"}
#: OpenBLAS's SSE3 and AVX-512 kernel families: at least one is not what this CPU picks by itself
OTHER_KERNELS = ({"OPENBLAS_CORETYPE": "Prescott"}, {"OPENBLAS_CORETYPE": "SkylakeX"})


def _x86_openblas() -> bool:
    import platform

    from threadpoolctl import threadpool_info

    return platform.machine() in ("x86_64", "AMD64") and any(
        info.get("internal_api") == "openblas" for info in threadpool_info())


@pytest.fixture(autouse=True)
def few_variants(monkeypatch):
    """Recording re-runs a fixture once per rounding variant: two of them keep these tests fast
    (test_determinism.py runs the shipped fixtures under every kernel family)."""
    monkeypatch.setattr(regress, "VARIANTS", (OTHER_SUMMATION_ORDER, {"GRADPIPE_BLAS_THREADS": "2"}))


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


def _quadratic(folder, name, init, steps):
    """A user's experiment in ``folder``/experiment: sum(w ** 2) by SGD at 0.25, which halves w
    at each step (w <- w - 0.25 * 2w), so the loss falls 4x a step."""
    (folder / "experiment").mkdir(parents=True)
    (folder / "experiment" / f"{name}.yaml").write_text(textwrap.dedent(f"""\
        # @package _global_
        defaults:
          - override /model: null
          - override /data: null
          - override /groups: null
        model:
          variables: {{w: {{init: {init}}}}}
          graph: {{loss: sum(w ** 2)}}
          loss: loss
        groups:
          all: {{select: {{variables: [w]}}, optimizer: {{name: sgd, learning_rate: 0.25}}}}
        train: {{steps: {steps}, log_every: 1}}
    """))


def test_a_fixture_of_the_users_own_experiment(tmp_path):
    """An experiment in the fixture's config_dir, found as with --config-dir."""
    _quadratic(tmp_path / "configs", "quadratic", [3.0, -1.0], 2)
    (tmp_path / "q.yaml").write_text('overrides: ["+experiment=quadratic"]\nconfig_dir: configs\n')
    assert check_fixture(tmp_path / "q.yaml", update=True) == []
    golden = json.loads((tmp_path / "q.golden.json").read_text())
    # sum(w**2) with w <- w - 0.25 * 2w = w / 2: the loss at step k is 10 / 4**(k-1)
    assert [golden["metrics"][s]["loss"] for s in ("1", "2")] == [10.0, 2.5]
    assert check_fixture(tmp_path / "q.yaml") == []


def test_config_dir_finds_the_users_experiments_and_is_named_when_one_is_missing(tmp_path,
                                                                                capsys):
    """Experiments kept apart from the fixtures: ``--config-dir DIR`` (also for the recording
    processes of --update); without it the failure says how to name the folder."""
    _quadratic(tmp_path / "experiments", "half", [4.0], 3)
    (tmp_path / "fixtures").mkdir()
    fixture = tmp_path / "fixtures" / "half.yaml"
    fixture.write_text('overrides: ["+experiment=half"]\n')
    assert main([str(fixture), "--update"]) == 1
    assert "hint: no experiment 'half' is shipped; your own are found with python -m " \
        "runner.regress --config-dir DIR or the fixture's config_dir: DIR " \
        "(DIR/experiment/half.yaml)" in capsys.readouterr().out
    experiments = str(tmp_path / "experiments")
    assert main([str(fixture), "--config-dir", experiments, "--update"]) == 0
    # w <- w - 0.25 * 2w = w / 2: the loss at step k is 16 / 4**(k-1)
    golden = json.loads((tmp_path / "fixtures" / "half.golden.json").read_text())
    assert [golden["metrics"][s]["loss"] for s in ("1", "2", "3")] == [16.0, 4.0, 1.0]
    assert main([str(fixture), "--config-dir", experiments]) == 0
    assert main([str(fixture), "--config-dir", str(tmp_path / "absent")]) == 2


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


def _fixture(tmp_path, rtol=1e-5, atol=1e-7):
    path = tmp_path / "f.yaml"
    path.write_text(f"overrides: []\ntolerance: {{rtol: {rtol:.1e}, atol: {atol:.1e}}}\n")
    return regress.load_fixture(path)


def test_a_measured_tolerance_is_ten_times_the_spread_and_never_below_the_fixtures(tmp_path):
    fixture = _fixture(tmp_path)
    recorded = {"1": {"loss": 2.0, "lr": 0.1, "count": 3, "norm": 100.0, "zero": 0.0}}
    runs = [{"1": {"loss": 2.0 + 4e-4, "lr": 0.1, "count": 3, "norm": 100.0 - 1e-6, "zero": 0.0}},
            {"1": {"loss": 2.0 - 1e-4, "lr": 0.1, "count": 3, "norm": 100.0, "zero": 5e-8}}]
    golden = regress.measured_golden(fixture, recorded, runs)
    assert golden.metrics == recorded and golden.left_out == {}
    # loss: 10 x its farthest variant (4e-4); zero: 10 x 5e-8 (within atol, so not left out);
    # norm: 10 x 1e-6 = 1e-5 is below the fixture's own 1e-7 + 1e-5 * 100 = 1e-3, which it keeps
    assert golden.tolerances == {"1": {"loss": pytest.approx(4e-3), "zero": pytest.approx(5e-7)}}


def test_values_rounding_moves_by_more_than_one_percent_are_left_out(tmp_path):
    fixture = _fixture(tmp_path)
    recorded = {"1": {"loss": 1.0}, "4": {"loss": 0.4, "clipped": 1, "norm": 3.0, "x": None}}
    runs = [{"1": {"loss": 1.0}, "4": {"loss": 0.39, "clipped": 0, "norm": 3.01, "x": 2.0}},
            {"1": {"loss": 1.0}, "4": {"loss": 0.4, "clipped": 1, "norm": 3.0}}]
    golden = regress.measured_golden(fixture, recorded, runs)
    assert golden.metrics == {"1": {"loss": 1.0}, "4": {"norm": 3.0}}
    assert golden.tolerances == {"4": {"norm": pytest.approx(0.1)}}
    assert golden.left_out == {"4": {"loss": {"value": 0.4, "spread": pytest.approx(0.01)},
                                     "clipped": {"value": 1, "spread": 1},
                                     "x": {"value": None, "spread": None}}}


def test_a_count_may_flip_where_rounding_moved_the_step_but_a_counter_not(tmp_path):
    """No variant flipped ``clipped`` at step 4, but rounding moved the loss there by more than
    1% (left out): on another machine the count may flip, so it is left out too (a large count
    gets a tolerance of one instead); at step 1, where rounding moved values by less, and for
    the loop's epoch counter, it is compared exactly."""
    fixture = _fixture(tmp_path)
    recorded = {"1": {"loss": 1.0, "clipped": 2, "epoch": 1},
                "4": {"loss": 0.5, "clipped": 2, "many": 400, "epoch": 1}}
    runs = [{"1": {"loss": 1.0 + 1e-4, "clipped": 2, "epoch": 1},  # moved, not chaotic
             "4": {"loss": 0.5 + 0.1, "clipped": 2, "many": 400, "epoch": 1}}]
    golden = regress.measured_golden(fixture, recorded, runs)
    assert golden.metrics == {"1": {"loss": 1.0, "clipped": 2, "epoch": 1},
                              "4": {"many": 400, "epoch": 1}}
    assert golden.left_out == {"4": {"clipped": {"value": 2, "spread": 1},
                                     "loss": {"value": 0.5, "spread": pytest.approx(0.1)}}}
    assert golden.tolerances == {"1": {"loss": pytest.approx(1e-3)}, "4": {"many": 10.0}}


def _tamper(golden_file, step, name, factor):
    golden = json.loads(golden_file.read_text())
    golden["metrics"][step][name] *= factor
    golden_file.write_text(json.dumps(golden))


def test_a_golden_tampered_by_1e_3_on_an_early_value_of_clip_adam_fails(tmp_path):
    """clip_adam is chaotic from step 2 on, yet its first step is compared tightly."""
    path = _copy(tmp_path, "clip_adam")
    golden = json.loads((tmp_path / "m.golden.json").read_text())
    assert {"loss", "encoder/grad_norm", "head/grad_norm"} <= set(golden["metrics"]["1"])
    assert check_fixture(path) == []
    _tamper(tmp_path / "m.golden.json", "1", "loss", 1 + 1e-3)
    problems = check_fixture(path)
    assert problems[0].startswith("1 of ") and problems[2].split()[:2] == ["1", "loss"]
    _tamper(tmp_path / "m.golden.json", "1", "loss", 1 / (1 + 1e-3))
    _tamper(tmp_path / "m.golden.json", "1", "head/grad_norm", 1 - 1e-3)
    assert check_fixture(path)[2].split()[:2] == ["1", "head/grad_norm"]


def test_left_out_values_are_not_compared_and_the_output_says_so(tmp_path, capsys):
    path = _copy(tmp_path, "clip_adam")
    golden = json.loads((tmp_path / "m.golden.json").read_text())
    assert "loss" in golden["left_out"]["4"] and "loss" not in golden["metrics"]["4"]
    golden["left_out"]["4"]["loss"]["value"] *= 1.5
    (tmp_path / "m.golden.json").write_text(json.dumps(golden))
    assert main([str(path)]) == 0
    out = capsys.readouterr().out
    assert "left out (rounding alone moves them by more than 0.01 of themselves)" in out
    assert "4/loss" in out


def test_update_measures_each_value_under_the_rounding_variants(tmp_path, capsys, monkeypatch):
    """Recording clip_adam under other BLAS kernels: its chaotic late values are left out and said
    so, its first step is kept, and the golden names the variants it was measured on."""
    if not _x86_openblas():
        pytest.skip("OPENBLAS_CORETYPE selects kernels of an x86 OpenBLAS only")
    monkeypatch.setattr(regress, "VARIANTS", OTHER_KERNELS)
    path = _copy(tmp_path, "clip_adam")
    (tmp_path / "m.golden.json").unlink()
    assert main([str(path), "--update"]) == 0
    out = capsys.readouterr().out
    assert "left out (rounding alone moves them" in out
    golden = json.loads((tmp_path / "m.golden.json").read_text())
    assert golden["measured"]["variants"] == ["OPENBLAS_CORETYPE=Prescott",
                                              "OPENBLAS_CORETYPE=SkylakeX"]
    assert "4" in golden["left_out"]
    assert set(golden["metrics"]["1"]) >= {"loss", "encoder/grad_norm", "head/grad_norm"}
    assert main([str(path)]) == 0


def test_a_variant_whose_process_fails_is_a_failed_update(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(regress, "VARIANTS", ({"GRADPIPE_BLAS_THREADS": "none"},))
    path = _copy(tmp_path)
    assert main([str(path), "--update"]) == 1
    assert "re-running under GRADPIPE_BLAS_THREADS=none failed" in capsys.readouterr().out
