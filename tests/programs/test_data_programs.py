"""The tf.data and tf.estimator programs of this folder, run as a user runs them, against numpy
re-implementations of the same arithmetic (the shuffled order is replayed from the ids the
program prints: it is checked for its properties, not against TF's generator)."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np

from tests.programs.test_programs import HERE, ROOT, run


def softmax(logits):
    p = np.exp(logits - logits.max(1, keepdims=True))
    return p / p.sum(1, keepdims=True)


def sgd_step(W, b, x, onehot, lr):
    """One gradient-descent step of mean softmax cross-entropy; returns (loss, W, b)."""
    p = softmax(x @ W + b)
    loss = -np.mean(np.sum(onehot * np.log(p), 1))
    grad = (p - onehot) / len(x)
    return loss, W - lr * x.T @ grad, b - lr * grad.sum(0)


def test_data_pipeline_program_replays_in_numpy():
    lines = run("data_pipeline.py", "--epochs=3", "--batch_size=16")
    rng = np.random.RandomState(0)
    pixels = rng.randint(0, 256, size=(60, 6)).astype(np.float32)
    labels = np.argmax(pixels.reshape(60, 3, 2).sum(2), 1)
    valid = rng.randint(0, 256, size=(25, 6)).astype(np.float32)
    valid_labels = np.argmax(valid.reshape(25, 3, 2).sum(2), 1)

    steps = [line.split() for line in lines if line.startswith("step")]
    valids = [line.split() for line in lines if line.startswith("valid")]
    assert len(steps) == 3 * 4 and len(valids) == 3  # 60 rows in batches of 16: 4 per epoch
    W, b = np.zeros((6, 3)), np.zeros(3)
    orders = []
    for epoch in range(3):
        order = []
        for fields in steps[4 * epoch:4 * epoch + 4]:
            assert int(fields[2]) == epoch
            ids = [int(i) for i in fields[4:]]
            order += ids
            x = pixels[ids].astype(np.float64) / np.float32(255.0)
            loss, W, b = sgd_step(W, b, x, np.eye(3)[labels[ids]], 0.5)
            np.testing.assert_allclose(float(fields[3]), loss, rtol=2e-6)
        assert sorted(order) == list(range(60)) and order != list(range(60))
        # a buffer of 20: row j leaves it no earlier than position j - 19
        assert all(pos >= j - 19 for pos, j in enumerate(order))
        orders.append(order)
        logits = (valid / np.float32(255.0)) @ W + b
        top2 = np.sort(logits, 1)[:, -2:]
        near_ties = int(np.sum(top2[:, 1] - top2[:, 0] < 1e-5))
        right = int(np.sum(np.argmax(logits, 1) == valid_labels))
        assert valids[epoch][1:] == [str(epoch), valids[epoch][2], "25"]
        assert abs(int(valids[epoch][2]) - right) <= near_ties
    # the seeded shuffle restarts with each initialization of the iterator (TF1)
    assert orders[0] == orders[1] == orders[2]


def test_estimator_program_matches_numpy(tmp_path):
    args = [f"--model_dir={tmp_path / 'model'}", "--learning_rate=0.5"]
    lines = run("estimator_numpy_input.py", *args)
    rng = np.random.RandomState(0)

    def synthetic(n):
        features = rng.normal(size=(n, 4)).astype(np.float32)
        return features, (np.argmax(features[:, :3], 1) + (features[:, 3] > 1.5)) % 3

    train_x, train_y = synthetic(50)
    test_x, test_y = synthetic(30)
    # numpy_input_fn(batch_size=20, num_epochs=None, shuffle=False): rows in order, batches
    # across epochs; each train() call starts the stream again and continues the weights
    stream = np.concatenate([np.arange(50)] * 12)
    batches = [stream[i:i + 20] for i in range(0, 600, 20)]
    W, b = np.zeros((4, 3)), np.zeros(3)
    for rows in batches[:30] + batches[:15]:
        _, W, b = sgd_step(W, b, train_x[rows].astype(np.float64), np.eye(3)[train_y[rows]],
                           0.5)
    logits = test_x @ W + b
    p = softmax(logits)
    xent = -np.log(p[np.arange(30), test_y])
    eval_loss = np.mean([xent[i:i + 8].mean() for i in range(0, 30, 8)])  # mean of batch losses
    accuracy = np.mean(np.argmax(logits, 1) == test_y)

    eval_line = lines[0].split()
    assert eval_line[0] == "eval" and eval_line[3] == "45"
    np.testing.assert_allclose(float(eval_line[1]), eval_loss, rtol=1e-5)
    np.testing.assert_allclose(float(eval_line[2]), accuracy, rtol=1e-6)
    predicted = [line.split() for line in lines if line.startswith("predict")]
    assert [int(f[1]) for f in predicted] == np.argmax(p[:4], 1).tolist()
    np.testing.assert_allclose([[float(v) for v in f[2:]] for f in predicted], p[:4], rtol=1e-5)
    assert lines[-1].split() == ["checkpoints", "model.ckpt-30.index", "model.ckpt-40.index",
                                 "model.ckpt-45.index"]


def test_estimator_program_logs_with_tf_logging(tmp_path):
    """tf.logging.set_verbosity(INFO) shows the Estimator's progress and the hook's tensors."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, str(HERE / "estimator_numpy_input.py"),
                           f"--model_dir={tmp_path}"], capture_output=True, text=True, env=env,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    info = [line for line in proc.stderr.splitlines() if line.startswith("INFO:engine:")]
    text = "\n".join(info)
    for expected in ["Saving checkpoints for 0 into", "loss = ", ", step = 1\n",
                     "Saving checkpoints for 45 into", "classes = [", "Loss for final step",
                     "Saving dict for global step 45"]:
        assert expected in text + "\n", expected


def test_eager_program_matches_numpy():
    lines = run("eager_linear_regression.py")
    rng = np.random.RandomState(0)
    x = rng.normal(size=(40, 2)).astype(np.float32).astype(np.float64)
    y = x @ np.array([[3.0], [-1.5]]) + 0.5
    W, b = np.zeros((2, 1)), 0.0
    lr = float(np.float32(0.1))
    for epoch in range(5):
        losses = []
        for i in range(0, 40, 10):
            xb, yb = x[i:i + 10], y[i:i + 10]
            err = xb @ W + b - yb
            losses.append(np.mean(err ** 2))
            W, b = W - lr * 2 * xb.T @ err / 10, b - lr * 2 * err.mean()
        assert lines[epoch].split()[:2] == ["epoch", str(epoch)]
        np.testing.assert_allclose(float(lines[epoch].split()[2]), np.mean(losses), rtol=1e-4)
    np.testing.assert_allclose([float(v) for v in lines[5].split()[1:]], [*W.ravel(), b],
                               rtol=1e-5)
