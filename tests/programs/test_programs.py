"""The TF1-style programs of this folder, run end to end as a user runs them (``python
prog.py``, with ``import engine as tf``), against numpy re-implementations of the same
arithmetic."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np

from tests.engine.test_summary import read_records, scalars_in

HERE = Path(__file__).parent
ROOT = HERE.parent.parent


def run(program, *args):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, str(HERE / program), *args], capture_output=True,
                          text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.splitlines()


def test_softmax_regression_matches_numpy():
    lines = run("softmax_regression.py")
    rng = np.random.RandomState(0)
    x = rng.rand(200, 784)
    y = np.eye(10)[rng.randint(0, 10, 200)]
    w, b = np.zeros((784, 10)), np.zeros(10)
    for step in range(20):
        logits = x @ w + b
        p = np.exp(logits - logits.max(1, keepdims=True))
        p /= p.sum(1, keepdims=True)
        loss = -np.mean(np.sum(y * np.log(p), 1))
        assert lines[step].split()[:2] == ["loss", str(step)]
        np.testing.assert_allclose(float(lines[step].split()[2]), loss, rtol=1e-4)
        grad = (p - y) / len(x)
        w, b = w - 0.01 * x.T @ grad, b - 0.01 * grad.sum(0)
    accuracy = np.mean(np.argmax(x @ w + b, 1) == np.argmax(y, 1))
    assert abs(float(lines[20].split()[1]) - accuracy) <= 1 / 200 + 1e-9


def test_save_restore_summaries_program(tmp_path):
    lines = run("save_restore_summaries.py", f"--logdir={tmp_path}", "--steps=30",
                "--learning_rate=0.2")
    xs = np.linspace(-1, 1, 16).reshape(-1, 1)
    ys = 3 * xs - 1
    w = b = 0.0
    losses = []
    for _ in range(30):
        err = xs[:, 0] * w + b - ys[:, 0]
        losses.append(np.mean(err ** 2))
        w, b = w - 0.2 * np.mean(2 * err * xs[:, 0]), b - 0.2 * np.mean(2 * err)
    trained = [float(v) for v in lines[0].split()[1:]]
    restored = [float(v) for v in lines[1].split()[1:]]
    np.testing.assert_allclose(trained, [w, b], rtol=1e-5)
    assert restored == trained  # the last checkpoint is step 30, the trained state
    names = sorted(p.name for p in tmp_path.iterdir() if "ckpt" in p.name)
    assert names == [f"model.ckpt-{s}.{ext}" for s in (20, 30)
                     for ext in ("data-00000-of-00001", "index", "meta")]
    (events,) = tmp_path.glob("events.out.tfevents.*")
    got = scalars_in(read_records(events))
    assert [(s, t) for s, t, _ in got] == [(i, "loss") for i in range(1, 31)]
    np.testing.assert_allclose([v for *_, v in got], losses, rtol=1e-5, atol=1e-7)


def _unigram_tries(counts, p, num_sampled):
    """The draws a unique sampler made, from the expected counts it gave: p * num_sampled when
    no draw repeated, else 1 - (1 - p)^tries (TF's ExpectedCountHelper)."""
    if np.allclose(counts, p * num_sampled, rtol=1e-6):
        return num_sampled
    tries = np.log1p(-counts) / np.log1p(-p)
    assert np.allclose(tries, np.round(tries[0]), rtol=1e-4) and tries[0] > num_sampled
    return int(np.round(tries[0]))


def test_word2vec_nce_program_matches_numpy():
    """Skip-gram with nce_loss and a fixed-unigram sampler: every step's loss against numpy's
    NCE (sigmoid cross-entropy of the logits minus log Q) with the printed sampled ids, the
    SGD updates of the looked-up rows, and words of one topic nearest after training."""
    from tests.programs.synthetic_text import TOPIC, VOCAB, batches, corpus
    steps = 300
    lines = run("word2vec_nce.py", f"--steps={steps}")
    data = corpus()
    unigram = np.bincount(data, minlength=VOCAB) ** 0.75
    unigram = unigram / unigram.sum()
    rng = np.random.RandomState(2)
    emb = rng.uniform(-1.0, 1.0, (VOCAB, 8)).astype(np.float32).astype(np.float64)
    w = (rng.randn(VOCAB, 8) / np.sqrt(8)).astype(np.float32).astype(np.float64)
    b = np.zeros(VOCAB)
    feed = batches(data, 16)
    for step in range(steps):
        fields = lines[step].split()
        sampled = np.array([int(v) for v in fields[5].split(",")])
        counts = np.array([float(v) for v in fields[7].split(",")])
        assert len(set(sampled)) == 6 and fields[:2] == ["step", str(step)]
        tries = _unigram_tries(counts, unigram[sampled], 6)
        inputs, labels = next(feed)
        labels = labels[:, 0]
        q_true, q_sampled = (p * 6 if tries == 6 else -np.expm1(tries * np.log1p(-p))
                             for p in (unigram[labels], unigram[sampled]))
        x = emb[inputs]
        z = np.concatenate([(x * w[labels]).sum(1, keepdims=True) + b[labels, None]
                            - np.log(q_true)[:, None],
                            x @ w[sampled].T + b[sampled] - np.log(q_sampled)], 1)
        y = np.zeros_like(z)
        y[:, 0] = 1
        loss = np.mean((np.maximum(z, 0) - z * y + np.log1p(np.exp(-np.abs(z)))).sum(1))
        np.testing.assert_allclose(float(fields[3]), loss, rtol=2e-4)
        dz = (1 / (1 + np.exp(-z)) - y) / len(z)  # d mean(loss) / d logits
        gx = dz[:, :1] * w[labels] + dz[:, 1:] @ w[sampled]
        gw = np.zeros_like(w)
        np.add.at(gw, labels, dz[:, :1] * x)
        np.add.at(gw, sampled, dz[:, 1:].T @ x)
        gb = np.zeros_like(b)
        np.add.at(gb, labels, dz[:, 0])
        np.add.at(gb, sampled, dz[:, 1:].sum(0))
        np.add.at(emb, inputs, -1.0 * gx)
        w -= gw
        b -= gb
    normalized = emb / np.linalg.norm(emb, axis=1, keepdims=True)
    for word, line in zip([0, 1, 8, 9], lines[steps:]):
        fields = line.split()
        assert fields[:2] == ["nearest", str(word)]
        sims = np.array([float(v) for v in fields[3:]])
        np.testing.assert_allclose(sims, normalized[word] @ normalized.T, atol=2e-3)
        nearest = [int(v) for v in fields[2].split(",")]
        assert all(n // TOPIC == word // TOPIC for n in nearest)  # the topic was learned
