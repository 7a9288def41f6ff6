"""The TF1-style programs of the training infrastructure (MonitoredTrainingSession, canned
estimators on feature columns, SavedModel), run as a user runs them, against numpy replays."""

from __future__ import annotations

import numpy as np

from tests.programs.test_programs import run


def momentum_replay(steps):
    """monitored_training.py's arithmetic: batch (step % 4) of the 16 points, momentum 0.9 SGD
    at 0.1 (TF's accum = 0.9 accum + g; var -= 0.1 accum); the losses before each update."""
    xs = np.linspace(-1, 1, 16, dtype=np.float32).reshape(-1, 1)
    ys = 3 * xs - 1
    w = b = 0.0
    accum_w = accum_b = 0.0
    losses = []
    for step in range(steps):
        x, y = xs[4 * (step % 4):4 * (step % 4) + 4, 0], ys[4 * (step % 4):4 * (step % 4) + 4, 0]
        err = x * w + b - y
        losses.append(np.mean(err ** 2))
        accum_w = 0.9 * accum_w + np.mean(2 * err * x)
        accum_b = 0.9 * accum_b + np.mean(2 * err)
        w, b = w - 0.1 * accum_w, b - 0.1 * accum_b
    return losses


def test_monitored_training_session_program_resumes(tmp_path):
    first = run("monitored_training.py", f"--checkpoint_dir={tmp_path}", "--last_step=6")
    second = run("monitored_training.py", f"--checkpoint_dir={tmp_path}", "--last_step=10")
    printed = [line.split() for line in first[:-1] + second[:-1]]
    assert [int(p[1]) for p in printed] == list(range(1, 11))
    np.testing.assert_allclose([float(p[3]) for p in printed], momentum_replay(10), rtol=1e-5)
    assert first[-1].endswith("model.ckpt-6") and second[-1].endswith("model.ckpt-10")
    steps = sorted(int(p.name[len("model.ckpt-"):-len(".index")])
                   for p in tmp_path.glob("model.ckpt-*.index"))
    assert steps == [0, 4, 6, 10]  # made, every 4 steps, at the end; made again at 6, then 10
