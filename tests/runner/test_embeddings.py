"""Runs of embedding models: integer inputs (generated, npz and csv id columns), the
``embedding_lookup`` expression function, sparse gradients through the runner (their norms
logged, the non-finite gate, gradcheck) and exact resume with sparse optimizer state."""

from __future__ import annotations

import json

import numpy as np
import pytest
import yaml
from runner_helpers import compose_config, read_metrics, run_config

from runner.data_synthetic import bag_of_words

ROWS = 2000
MODEL = {
    "inputs": {"x": {"shape": [None, 5], "dtype": "int32"}, "y": {"shape": [None, 1]}},
    "variables": {"E": {"shape": [ROWS, 4], "init": {"name": "normal", "stddev": 0.1}},
              "W": {"shape": [4, 1], "init": {"name": "normal", "stddev": 0.1}}},
    "graph": {"bag": "mean(embedding_lookup(E, x), axis=1)", "pred": "bag @ W",
              "loss": "mean((pred - y) ** 2)"},
    "loss": "loss",
}
GROUPS = {"all": {"select": {"collection": "trainable_variables"},
                  "optimizer": {"name": "adagrad_decay", "learning_rate": 0.5,
                                "accumulator_decay_step": 20}}}


def _experiment(tmp_path, data, model=MODEL, **extra):
    """A --config-dir holding experiment 'emb' with ``model`` (MODEL), GROUPS and ``data``."""
    folder = tmp_path / "configs" / "experiment"
    folder.mkdir(parents=True, exist_ok=True)
    text = "# @package _global_\n" + yaml.safe_dump({
        "defaults": [{"override /model": None}, {"override /data": None},
                     {"override /groups": None}],
        "model": model, "data": data, "groups": GROUPS, **extra}, sort_keys=False)
    (folder / "emb.yaml").write_text(text)
    return tmp_path / "configs"


GENERATED = {"source": "bag_of_words", "n": 2048, "vocab": ROWS, "length": 5, "batch_size": 64}


def _run(tmp_path, data, *overrides, out="run", model=MODEL):
    cfg = compose_config("+experiment=emb", *overrides,
                         config_dir=_experiment(tmp_path / out, data, model))
    assert run_config(cfg, tmp_path / out) == 0
    return read_metrics(tmp_path / out)


def test_bag_of_words_has_a_learnable_signal():
    data = bag_of_words(np.random.default_rng(0), n=4096, vocab=ROWS, length=5)
    assert data["x"].dtype == np.int64 and data["x"].shape == (4096, 5)
    assert data["x"].min() >= 0 and data["x"].max() < ROWS
    counts = np.bincount(data["x"].ravel(), minlength=ROWS)
    assert counts[0] > counts[10] > counts[1000]  # Zipf: id 0 the most frequent


def test_an_embedding_model_learns_below_the_predict_the_mean_baseline(tmp_path):
    records = _run(tmp_path, GENERATED, "train.steps=300", "train.log_every=100")
    baseline = np.var(bag_of_words(np.random.default_rng([0, 0]), n=2048, vocab=ROWS,
                                   length=5)["y"])
    assert records[-1]["loss"] < 0.6 * baseline
    norms = [r["all/grad_norm"] for r in records]
    assert all(np.isfinite(norms)) and min(norms) > 0  # the sparse gradient's norm is logged


def test_resume_with_sparse_optimizer_state_is_bit_identical(tmp_path):
    steps = ["train.log_every=2", "train.checkpoint_every=3"]
    straight = _run(tmp_path, GENERATED, "train.steps=6", *steps, out="straight")
    _run(tmp_path, GENERATED, "train.steps=3", *steps, out="stopped")
    resumed = _run(tmp_path, GENERATED, "train.steps=6", "train.resume=true", *steps,
                   out="stopped")
    assert resumed[-1] == straight[-1]  # the stopped run also logged its last step, 3
    assert [r for r in resumed if r["step"] != 3] == straight
    with np.load(tmp_path / "straight" / "checkpoint.npz") as a, \
            np.load(tmp_path / "stopped" / "checkpoint.npz") as b:
        assert any(k.startswith("slot/E/") for k in a.files)
        for key in a.files:
            if key != "meta/wall_time_s":
                assert np.array_equal(a[key], b[key]), key


@pytest.mark.parametrize("kind", ["npz", "csv"])
def test_id_columns_from_files_feed_integer_inputs(tmp_path, kind):
    rng = np.random.default_rng(1)
    ids = rng.integers(0, ROWS, (64, 5))
    y = rng.standard_normal((64, 1))
    if kind == "npz":
        np.savez(tmp_path / "d.npz", x=ids, y=y)
        data = {"source": "npz", "path": str(tmp_path / "d.npz"), "batch_size": 16}
    else:
        header = ",".join([f"w{i}" for i in range(5)] + ["y"])
        rows = [",".join(map(str, list(r) + [float(t)])) for r, t in zip(ids, y[:, 0])]
        (tmp_path / "d.csv").write_text("\n".join([header, *rows]) + "\n")
        data = {"source": "csv", "path": str(tmp_path / "d.csv"), "batch_size": 16,
                "columns": {"x": [f"w{i}" for i in range(5)], "y": ["y"]}}
    records = _run(tmp_path, data, "train.steps=4", "train.log_every=2")
    assert [r["step"] for r in records] == [2, 4]


def test_gradcheck_checks_the_rows_a_sparse_gradient_names(tmp_path):
    cfg = compose_config("+experiment=emb", "mode=gradcheck",
                         config_dir=_experiment(tmp_path, GENERATED))
    assert run_config(cfg, tmp_path / "check") == 0
    report = json.loads((tmp_path / "check" / "gradcheck.json").read_text())
    embedding = next(v for v in report["variables"] if v["variable"] == "E")
    assert report["passed"] and embedding["checked"] == 32
    assert embedding["engine"] != 0  # an entry of a row looked up, not one of the zeros


@pytest.mark.parametrize("strategy", ["mod", "div"])
def test_a_table_split_over_variables_trains_as_the_whole_table(tmp_path, strategy):
    """embedding_lookup([E0, E1, E2], x, partition_strategy=...) on TF's split of a 20-row table
    ('mod': id i in part i % 3 at row i // 3; 'div': rows 0-6, 7-13, 14-19): the losses and
    gradient norms of the whole table's run, each part updated by its own sparse gradient."""
    rows, parts = 20, 3
    table = np.round(np.random.default_rng(4).normal(0, 0.5, (rows, 4)), 3)
    if strategy == "mod":
        split = [table[p::parts] for p in range(parts)]
    else:
        split = np.split(table, [7, 14])
    head = {"shape": [4, 1], "init": {"name": "normal", "stddev": 0.1}}
    whole = {**MODEL, "variables": {"E": {"init": table.tolist()}, "W": head}}
    split_model = {**MODEL, "graph": {
        **MODEL["graph"],
        "bag": f"mean(embedding_lookup([E0, E1, E2], x, partition_strategy='{strategy}'), "
               "axis=1)"},
        "variables": {**{f"E{p}": {"init": part.tolist()} for p, part in enumerate(split)},
                      "W": head}}
    data = {**GENERATED, "vocab": rows}
    steps = ["train.steps=30", "train.log_every=10"]
    expected = _run(tmp_path, data, *steps, out="whole", model=whole)
    got = _run(tmp_path, data, *steps, out="split", model=split_model)
    assert [r["step"] for r in got] == [10, 20, 30]
    for a, b in zip(got, expected):
        for key in ("loss", "all/grad_norm"):
            np.testing.assert_allclose(a[key], b[key], rtol=1e-5)
    assert got[-1]["loss"] < got[0]["loss"]
