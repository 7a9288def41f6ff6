"""logger: [mlflow]: params, metrics, artifacts and status of a run, read back with MLflow's own
client from a local store and from a real ``mlflow server`` started on 127.0.0.1 (skipped where
mlflow is not installed: pip install 'gradpipe[mlflow]')."""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request

import pytest
from runner_helpers import compose_config, read_metrics, read_summary, run_config

from runner import loggers
from runner.mlflow_logger import RUN_FILE, MLflow, flatten

requires_mlflow = pytest.mark.skipif(importlib.util.find_spec("mlflow") is None,
                                     reason="mlflow is not installed")
SERVER_START_S = 90  # mlflow server imports for 20 s on a loaded 2-core machine


def _config(*overrides):
    cfg = compose_config("train.steps=12", "train.log_every=4", "train.eval_every=4",
                         "train.keep_best={monitor: eval/loss}", "logger=[mlflow]", *overrides)
    cfg["data"]["eval_fraction"] = 0.25
    return cfg


def _assert_run_matches(client, run_dir, first_steps="12"):
    """The MLflow run recorded in run_dir holds its config (as its first run had it: MLflow's
    params do not change), every logged number at its step, its files and its end."""
    record = json.loads((run_dir / RUN_FILE).read_text())
    run = client.get_run(record["run_id"])
    summary = read_summary(run_dir)
    assert run.info.status == "FINISHED"
    assert run.data.tags["gradpipe.stop_reason"] == summary["stop_reason"] == "12 steps done"
    params = run.data.params
    assert params["model.graph.pred"] == "x @ W + b"
    assert params["groups.all.optimizer.learning_rate"] == "0.1"
    assert params["train.steps"] == first_steps and params["seed"] == "0"
    assert params["train.keep_best.monitor"] == "eval/loss"
    assert params["model.metrics"] == '["loss"]'
    records = read_metrics(run_dir)
    for key in ("loss", "eval/loss", "epoch", "all/lr", "all/grad_norm",
                "all/grad_norm_processed"):
        history = sorted((m.step, m.value) for m in client.get_metric_history(run.info.run_id,
                                                                              key))
        assert history == [(r["step"], r[key]) for r in records if key in r], key
    names = {a.path for a in client.list_artifacts(run.info.run_id)}
    assert {"summary.json", "metrics.jsonl", "checkpoint.npz", "best.npz"} <= names
    if importlib.util.find_spec("matplotlib") is not None:
        assert "loss.png" in names
    return run


@requires_mlflow
def test_a_run_in_a_local_store_and_its_resume(tmp_path, monkeypatch):
    from mlflow.tracking import MlflowClient

    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"file:{tmp_path / 'mlruns'}")
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")  # MLflow 3 wants it for file stores
    monkeypatch.delenv("MLFLOW_EXPERIMENT_NAME", raising=False)
    run_dir = tmp_path / "run"
    assert run_config(_config("train.steps=8"), run_dir) == 0
    first = json.loads((run_dir / RUN_FILE).read_text())["run_id"]
    # resumed with more steps: the same MLflow run goes on from step 8
    assert run_config(_config("train.resume=true"), run_dir) == 0
    client = MlflowClient(f"file:{tmp_path / 'mlruns'}")
    run = _assert_run_matches(client, run_dir, first_steps="8")
    assert run.info.run_id == first
    assert client.get_experiment(run.info.experiment_id).name == "gradpipe"
    local = tmp_path / "downloaded"
    local.mkdir()
    path = client.download_artifacts(run.info.run_id, "summary.json", str(local))
    assert json.loads(open(path).read()) == read_summary(run_dir)


@pytest.fixture(scope="module")
def mlflow_server(tmp_path_factory):
    """A real tracking server on a free port of 127.0.0.1 (file store, proxied artifacts),
    killed with its workers after the module's tests."""
    root = tmp_path_factory.mktemp("mlflow-server")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = {**os.environ, "MLFLOW_ALLOW_FILE_STORE": "true"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "mlflow", "server", "--host", "127.0.0.1", "--port", str(port),
         "--workers", "1", "--backend-store-uri", f"file:{root / 'store'}",
         "--artifacts-destination", str(root / "artifacts")],
        stdout=subprocess.DEVNULL, stderr=open(root / "server.log", "wb"), env=env,
        start_new_session=True)
    uri = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + SERVER_START_S
        while True:
            try:
                with urllib.request.urlopen(f"{uri}/health", timeout=2) as response:
                    if response.status == 200:
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"mlflow server did not start: {(root / 'server.log').read_text()}")
            time.sleep(0.25)
        yield uri
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # the server and the workers it started
        proc.wait()


@requires_mlflow
def test_a_run_through_an_mlflow_server(mlflow_server, tmp_path, monkeypatch):
    from mlflow.tracking import MlflowClient

    monkeypatch.setenv("MLFLOW_TRACKING_URI", mlflow_server)
    monkeypatch.setenv("MLFLOW_EXPERIMENT_NAME", "through a server")
    assert run_config(_config(), tmp_path) == 0
    client = MlflowClient(mlflow_server)
    run = _assert_run_matches(client, tmp_path)
    assert client.get_experiment(run.info.experiment_id).name == "through a server"
    local = tmp_path / "downloaded"
    local.mkdir()
    path = client.download_artifacts(run.info.run_id, "checkpoint.npz", str(local))
    assert open(path, "rb").read() == (tmp_path / "checkpoint.npz").read_bytes()


@requires_mlflow
def test_a_store_that_cannot_be_reached_is_a_config_error(tmp_path, monkeypatch, capsys):
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"http://127.0.0.1:{port}")
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "0")
    assert run_config(_config(), tmp_path) == 2
    assert f"logger: MLflow at http://127.0.0.1:{port}: cannot connect (Connection refused)" in \
        capsys.readouterr().err
    assert not (tmp_path / "checkpoint.npz").exists()


@requires_mlflow
def test_without_a_tracking_uri_the_store_is_mlflows_default_here(tmp_path, monkeypatch):
    import mlflow

    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    monkeypatch.chdir(tmp_path)
    uri = MLflow(tmp_path / "run").uri  # the store itself is only opened when the run starts
    assert uri == mlflow.get_tracking_uri() and str(tmp_path) in uri


def test_mlflow_not_installed_is_one_line_at_the_logger_key(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(loggers, "_installed", lambda module: module != "mlflow")
    assert run_config(_config("logger=[tensorboard, mlflow]"), tmp_path) == 2
    assert capsys.readouterr().err.strip() == \
        "logger[1]: mlflow is not installed: pip install 'gradpipe[mlflow]' (or pip install mlflow)"


def test_flatten_joins_keys_by_dots_and_writes_lists_as_json():
    assert flatten({"a": {"b": 1, "c": {"d": "x"}}, "e": [1, 2], "f": None, "g": {}}) == {
        "a.b": "1", "a.c.d": "x", "e": "[1, 2]", "f": "null", "g": "{}"}
    assert len(flatten({"w": list(range(5000))})["w"]) == 6000
