"""The TF1-style programs of the training infrastructure (MonitoredTrainingSession, canned
estimators on feature columns, SavedModel), run as a user runs them, against numpy replays."""

from __future__ import annotations

import json

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


def _checkpoint_arrays(prefix):
    """A checkpoint's arrays read as the format documents them (saver.py): the data file is an
    npz keyed by variable name."""
    with np.load(f"{prefix}.data-00000-of-00001") as data:
        return {k: data[k] for k in data.files}


def _softmax(z):
    e = np.exp(z - z.max(1, keepdims=True))
    return e / e.sum(1, keepdims=True)


def test_dnn_classifier_program_matches_a_numpy_replay(tmp_path):
    """DNNClassifier on feature columns: input_layer's columns in name order (color_indicator,
    x), ReLU hidden layer, softmax cross-entropy summed over the batch (TF 1.x's SUM), Adagrad
    at 0.05 from accumulators of 0.1, from the initial variables of model.ckpt-0; evaluate's
    loss is the mean of the batches' summed losses, average_loss the mean per example."""
    lines = run("dnn_classifier.py", str(tmp_path))
    rng = np.random.RandomState(3)
    x = rng.randn(24, 2).astype(np.float32)
    color = rng.randint(0, 3, 24)
    label = (x[:, 0] > 0).astype(np.int64) + (color == 2)
    inputs = np.concatenate([np.eye(3)[color], x], 1)
    v = {k: w.astype(np.float64) for k, w in _checkpoint_arrays(tmp_path / "model.ckpt-0").items()
         if k.startswith("dnn/")}
    names = ["dnn/hiddenlayer_0/kernel", "dnn/hiddenlayer_0/bias", "dnn/logits/kernel",
             "dnn/logits/bias"]
    accum = {n: np.full_like(v[n], 0.1) for n in names}

    def forward(rows):
        h = np.maximum(inputs[rows] @ v[names[0]] + v[names[1]], 0)
        return h, _softmax(h @ v[names[2]] + v[names[3]])

    for step in range(10):
        rows = np.arange(8 * (step % 3), 8 * (step % 3) + 8)
        h, p = forward(rows)
        dz = p - np.eye(3)[label[rows]]  # d(summed loss)/d logits
        dh = dz @ v[names[2]].T * (h > 0)
        grads = [inputs[rows].T @ dh, dh.sum(0), h.T @ dz, dz.sum(0)]
        for n, g in zip(names, grads):
            accum[n] += g * g
            v[n] -= 0.05 * g / np.sqrt(accum[n])
    _, p = forward(np.arange(24))
    losses = -np.log(p[np.arange(24), label])
    metrics = json.loads(lines[0])
    np.testing.assert_allclose(metrics["average_loss"], losses.mean(), rtol=1e-4)
    np.testing.assert_allclose(metrics["loss"], losses.reshape(3, 8).sum(1).mean(), rtol=1e-4)
    assert metrics["accuracy"] == np.float32(np.mean(p.argmax(1) == label))
    assert metrics["global_step"] == 10
    predictions = [json.loads(line) for line in lines[1:]]
    np.testing.assert_allclose([q["probabilities"] for q in predictions], p[:4], rtol=1e-4,
                               atol=1e-6)
    assert [q["class_ids"] for q in predictions] == [[int(i)] for i in p[:4].argmax(1)]
    assert [q["classes"] for q in predictions] == [[str(i)] for i in p[:4].argmax(1)]
    final = _checkpoint_arrays(tmp_path / "model.ckpt-10")
    for n in names:
        np.testing.assert_allclose(final[n], v[n], rtol=1e-4, atol=1e-6)
