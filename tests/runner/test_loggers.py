"""logger: [tensorboard]: event files read back with TensorBoard's own EventAccumulator."""

from __future__ import annotations

import numpy as np
import pytest
from runner_helpers import compose_config, read_metrics, run_config

pytest.importorskip("tensorboard")
from tensorboard.backend.event_processing.event_accumulator import (  # noqa: E402
    EventAccumulator,
)


def test_tensorboard_scalars_and_gradient_histograms(tmp_path):
    cfg = compose_config("train.steps=12", "train.log_every=4", "train.eval_every=8",
                         "logger=[tensorboard]")
    cfg["data"]["eval_fraction"] = 0.25
    cfg["groups"]["all"]["pipeline"] = {"clip_by_global_norm": {"clip_norm": 0.05}}
    assert run_config(cfg, tmp_path) == 0
    records = read_metrics(tmp_path)
    events = EventAccumulator(str(tmp_path), size_guidance={"histograms": 0, "scalars": 0})
    events.Reload()
    for key in ("loss", "eval/loss", "all/lr", "all/grad_norm", "all/grad_norm_processed"):
        logged = [(r["step"], np.float32(r[key])) for r in records if key in r]
        assert [(e.step, np.float32(e.value)) for e in events.Scalars(key)] == logged, key
    before = events.Histograms("all/gradients")
    after = events.Histograms("all/gradients_processed")
    assert [h.step for h in before] == [h.step for h in after] == [4, 8, 12]
    for record, raw, clipped in zip(records, before, after):
        # W [1, 1] and b [1]: two gradient entries whose squares sum to the logged norm squared
        assert raw.histogram_value.num == clipped.histogram_value.num == 2
        np.testing.assert_allclose(raw.histogram_value.sum_squares,
                                   record["all/grad_norm"] ** 2, rtol=1e-5)
        np.testing.assert_allclose(clipped.histogram_value.sum_squares,
                                   min(record["all/grad_norm"], 0.05) ** 2, rtol=1e-5)


def test_an_unknown_logger_is_a_config_error(tmp_path, capsys):
    cfg = compose_config("train.steps=2", "logger=[tensorbord]")
    assert run_config(cfg, tmp_path) == 2
    assert "logger[0]: unknown logger 'tensorbord' (did you mean 'tensorboard'?)" in \
        capsys.readouterr().err


def test_a_resumed_run_replaces_what_the_killed_one_logged_past_its_checkpoint(tmp_path):
    """A run killed after its checkpoint at step 4 had logged steps 6 and 8; the resumed run
    logs them anew, and TensorBoard shows each step once, the resumed run's values."""
    from runner.loggers import TensorBoard

    killed = TensorBoard(tmp_path)
    killed.start(0)
    for step in (2, 4, 6, 8):
        killed.log({"step": step, "loss": float(step)}, {})
    killed.close()
    resumed = TensorBoard(tmp_path)
    resumed.start(4)
    for step in (6, 8):
        resumed.log({"step": step, "loss": -float(step)}, {})
    resumed.close()
    events = EventAccumulator(str(tmp_path), size_guidance={"scalars": 0})
    events.Reload()
    assert [(e.step, e.value) for e in events.Scalars("loss")] == [
        (2, 2.0), (4, 4.0), (6, -6.0), (8, -8.0)]
