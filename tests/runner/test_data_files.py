"""File sources met by new users: npz arrays under other names, 1-D label columns, a CSV split by
another delimiter than the one configured; their contents never stored in a run's files."""

from __future__ import annotations

import json
import zipfile

import numpy as np
import pytest
from runner_helpers import compose_config

from runner import sweep
from runner.app import EXIT_CONFIG, run
from runner.data import load_data
from runner.errors import ConfigError

XY = {"x": {"shape": [None, 2], "dtype": "float32"}, "y": {"shape": [None, 1],
                                                          "dtype": "float32"}}


def test_npz_arrays_map_input_names_and_a_1d_label_column_becomes_n_by_1(tmp_path):
    features, labels = np.arange(10.0).reshape(5, 2), np.arange(5.0)
    np.savez(tmp_path / "d.npz", features=features, labels=labels)
    data = load_data({"source": "npz", "path": "d.npz", "arrays": {"x": "features",
                                                                   "y": "labels"}},
                     XY, 0, tmp_path).train
    np.testing.assert_array_equal(data["x"], features.astype(np.float32))
    np.testing.assert_array_equal(data["y"], labels.astype(np.float32)[:, None])


@pytest.mark.parametrize("arrays, key, message", [
    ({"x": "feature", "y": "labels"}, "data.arrays.x",
     "has no array 'feature' for model.inputs.x (did you mean 'features'?)"),
    ({"z": "features"}, "data.arrays.z", "no model input 'z'"),
    (None, "data.path", "data.arrays: {input: array} maps other names"),
])
def test_npz_array_errors_name_the_key(tmp_path, arrays, key, message):
    np.savez(tmp_path / "d.npz", features=np.zeros((3, 2)), labels=np.zeros(3))
    cfg = {"source": "npz", "path": "d.npz"}
    if arrays is not None:
        cfg["arrays"] = arrays
    with pytest.raises(ConfigError) as error:
        load_data(cfg, XY, 0, tmp_path)
    assert error.value.key == key and message in error.value.message


def test_csv_split_by_another_delimiter_names_the_delimiter_option(tmp_path):
    (tmp_path / "d.csv").write_text("a;b;label\n1;2;0\n3;4;1\n")
    cfg = {"source": "csv", "path": "d.csv", "columns": {"x": ["a", "b"], "y": ["label"]}}
    with pytest.raises(ConfigError) as error:
        load_data(cfg, XY, 0, tmp_path)
    assert error.value.key == "data.columns.x"
    assert "(the header looks split by ';': set data.delimiter: ';')" in error.value.message
    data = load_data({**cfg, "delimiter": ";"}, XY, 0, tmp_path).train
    np.testing.assert_array_equal(data["y"], [[0.0], [1.0]])


SECRET = "sk-live-7f3a9c"


def _npz_with_a_bad_header(path):
    np.savez(path, x=np.zeros((3, 1)), y=np.zeros((3, 1)))
    with zipfile.ZipFile(path) as archive:
        members = {info.filename: archive.read(info) for info in archive.infolist()}
    # the .npy header dict gains a key holding the secret: numpy quotes the header in its error
    members["x.npy"] = members["x.npy"].replace(b"'shape': (3, 1), }",
                                                f"'shape': (3, 1), '{SECRET}': 1}}".encode())
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)


@pytest.mark.parametrize("case", ["header", "cell", "array name", "npy header"])
def test_a_failed_start_stores_no_file_contents(tmp_path, capsys, case):
    """The terminal shows a short excerpt of the file; summary.json and the sweep's job.json
    keep the key and what is wrong, never the file's contents."""
    if case == "header":
        (tmp_path / "d.csv").write_text(f"{SECRET},b\n1,2\n")
        data = {"source": "csv", "path": "d.csv", "columns": {"x": ["a"], "y": ["b"]}}
    elif case == "cell":
        (tmp_path / "d.csv").write_text(f"a,b\n1,2\n{SECRET},3\n")
        data = {"source": "csv", "path": "d.csv", "columns": {"x": ["a"], "y": ["b"]}}
    elif case == "array name":
        np.savez(tmp_path / "d.npz", **{SECRET: np.zeros((3, 1))}, y=np.zeros((3, 1)))
        data = {"source": "npz", "path": "d.npz"}
    else:
        _npz_with_a_bad_header(tmp_path / "d.npz")
        data = {"source": "npz", "path": "d.npz"}
    cfg = compose_config("train.steps=2")
    cfg["data"] = {**data, "batch_size": 2}
    out = tmp_path / "run"
    stamp = sweep.start_job(out, 0, ["seed=0"])
    assert run(cfg, out, tmp_path) == EXIT_CONFIG
    sweep.finish_job(out, EXIT_CONFIG, None, stamp)
    assert SECRET in capsys.readouterr().err
    summary = (out / "summary.json").read_text()
    assert json.loads(summary)["errors"][0].startswith("data.")
    assert SECRET not in summary
    assert SECRET not in (out / "job.json").read_text()
