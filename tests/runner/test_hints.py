"""The one-line hints for config mistakes Hydra reports in its own words: an experiment not
found (--config-dir), an experiment writing a section over a kept default (override /model:
null), and Hydra's options placed between the overrides."""

from __future__ import annotations

import textwrap

import pytest
from runner_helpers import run_cli

from runner import hints
from runner.app import options_first

INLINE_MODEL = """\
    # @package _global_
    defaults:
      - override /data: null
    model:
      inputs: {x: {shape: [null, 2]}, t: {shape: [null, 1]}}
      variables: {V: {shape: [2, 1], init: zeros}}
      graph: {out: x @ V, mse: mean((out - t) ** 2)}
      loss: mse
    data: {source: moons, n: 64}
    """


def _experiment(folder, name, text):
    (folder / "experiment").mkdir(parents=True, exist_ok=True)
    path = folder / "experiment" / f"{name}.yaml"
    path.write_text(textwrap.dedent(text))
    return path


def _last_line(proc) -> str:
    return proc.stderr.strip().splitlines()[-1]


def test_an_inline_model_over_the_kept_default_model_gets_the_override_line(tmp_path):
    """The default model's entries (model.graph.pred: x @ W + b) meet the user's inputs: the
    config errors are printed, then what to add."""
    path = _experiment(tmp_path / "mine", "inline", INLINE_MODEL)
    proc = run_cli("--config-dir", "mine", "+experiment=inline",
                   f"hydra.run.dir={tmp_path / 'run'}", cwd=tmp_path, check_code=2)
    assert proc.stderr.startswith("model.graph.pred")
    assert _last_line(proc) == (
        f"hint: {path} writes model: inline while the default model stays merged under it: "
        "add '- override /model: null' to its defaults list")


def test_a_section_hydra_cannot_merge_with_the_default_gets_the_override_lines(tmp_path):
    _experiment(tmp_path / "mine", "lists", """\
        # @package _global_
        model:
          inputs: {x: [null, 2]}
        groups:
          all: {optimizer: {name: adam}}
        """)
    proc = run_cli("--config-dir", "mine", "+experiment=lists",
                   f"hydra.run.dir={tmp_path / 'run'}", cwd=tmp_path, check_code=2)
    assert "Cannot merge DictConfig with ListConfig" in proc.stderr
    assert _last_line(proc) == (
        "hint: mine/experiment/lists.yaml writes model:, groups: inline while the default "
        "model and groups stay merged under it: add '- override /model: null', "
        "'- override /groups: null' to its defaults list")


def test_an_experiment_not_found_points_to_config_dir(tmp_path):
    proc = run_cli("+experiment=my_own", f"hydra.run.dir={tmp_path / 'run'}", cwd=tmp_path,
                   check_code=2)
    assert _last_line(proc) == (
        "hint: no experiment 'my_own' is shipped; your own are found with python -m runner "
        "--config-dir DIR (DIR/experiment/my_own.yaml)")
    _experiment(tmp_path / "mine", "my_own", INLINE_MODEL)
    proc = run_cli("+experiment=my_onw", "--config-dir", "mine", cwd=tmp_path, check_code=2)
    assert _last_line(proc) == \
        "hint: no mine/experiment/my_onw.yaml (did you mean 'my_own'?)"


def test_kept_defaults_are_the_inline_sections_without_an_override(tmp_path):
    path = _experiment(tmp_path, "a", INLINE_MODEL)
    assert hints.kept_defaults(path) == ["model"]
    path.write_text(path.read_text().replace("  - override /data: null",
                                             "  - override /data: null\n"
                                             "  - override /model: null"))
    assert hints.kept_defaults(path) == []
    # without '# @package _global_' the sections are not global: another message says so
    path.write_text(INLINE_MODEL.replace("# @package _global_", "# mine"))
    assert hints.kept_defaults(path) == []
    path.write_text("# @package _global_\nmodel: [unclosed\n")
    assert hints.kept_defaults(path) == []


@pytest.mark.parametrize("argv, expected", [
    (["+experiment=a", "--config-dir", "d", "seed=1"],
     ["--config-dir", "d", "+experiment=a", "seed=1"]),
    (["seed=1,2", "-m", "--config-dir=d", "x=1"], ["-m", "--config-dir=d", "seed=1,2", "x=1"]),
    (["seed=1", "--info", "defaults", "-cd", "d"], ["--info", "defaults", "-cd", "d", "seed=1"]),
    (["seed=1", "--info"], ["--info", "seed=1"]),
    (["seed=-1", "~train.plots"], ["seed=-1", "~train.plots"])])
def test_options_go_before_the_overrides(argv, expected):
    assert options_first(argv) == expected


def test_a_mapping_override_hydra_cannot_merge_gets_the_replace_line(tmp_path):
    _experiment(tmp_path / "mine", "stops", INLINE_MODEL.replace(
        "    data: {source: moons, n: 64}",
        "    data: {source: moons, n: 64}\n    train: {early_stopping: {monitor: loss}}"))
    value = "{monitor: loss, min_delta: 0.01}"
    proc = run_cli("--config-dir", "mine", "+experiment=stops", f"train.early_stopping={value}",
                   cwd=tmp_path, check_code=2)
    assert "Key 'min_delta' is not in struct" in proc.stderr
    assert _last_line(proc) == (
        "hint: train.early_stopping holds a mapping already, and Hydra merges a mapping into it "
        f"key by key: replace it whole with '~train.early_stopping' "
        f"'+train.early_stopping={value}'")
