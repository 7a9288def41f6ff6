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


def _program_module(name):
    """A program's data and initial values (its functions; ``main`` is not run)."""
    import importlib.util

    from engine.app import flags

    spec = importlib.util.spec_from_file_location(f"_program_{name}", HERE / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    saved = dict(flags.FLAGS._flags)
    try:
        spec.loader.exec_module(module)
    finally:  # the program's flag definitions stay out of this process's FLAGS
        flags.FLAGS._flags.clear()
        flags.FLAGS._flags.update(saved)
    return module


def test_autoencoder_program_matches_numpy(tmp_path):
    """Two sigmoid layers each way, RMSProp on the mean squared error: every step's loss
    against numpy's backpropagation and TF1's RMSProp; the loss summaries read back."""
    from tests.programs.numpy_reference import RMSProp, sigmoid_layers, sigmoid_layers_grads
    program = _program_module("autoencoder")
    lines = run("autoencoder.py", "--steps=300", f"--logdir={tmp_path}")
    data = program.images().astype(np.float64)
    init = program.initial_weights()
    names = ["encoder_h1", "encoder_h2", "decoder_h1", "decoder_h2"]
    layers = [(init[k].astype(np.float64), np.zeros(init[k].shape[1])) for k in names]
    opt = RMSProp(0.01)
    losses = []
    for i in range(300):
        batch = data[(i * 32) % len(data):][:32]
        acts = sigmoid_layers(batch, layers)
        err = acts[-1] - batch
        losses.append(np.mean(err ** 2))
        grads, _ = sigmoid_layers_grads(acts, layers, 2 * err / err.size)
        for j, ((w, b), (gw, gb)) in enumerate(zip(layers, grads)):
            opt.step(("w", j), w, gw)
            opt.step(("b", j), b, gb)
    got = [float(line.split()[-1]) for line in lines]
    # float32 against float64 over 300 steps: 9e-6 at most, Haswell and SkylakeX kernels
    np.testing.assert_allclose(got, losses, rtol=5e-5)
    assert losses[-1] < 0.25 * losses[0]  # it learned the prototypes
    (events,) = tmp_path.glob("events.out.tfevents.*")
    scalars = scalars_in(read_records(events))
    assert [(s, t) for s, t, _ in scalars] == [(i, "loss") for i in range(1, 301)]
    np.testing.assert_allclose([v for *_, v in scalars], losses, rtol=5e-5)


def _gan_numpy(program, steps):
    """The GAN program's training in numpy: both losses' gradients by hand from one forward
    pass, then TF1's Adam on each player's variables."""
    from tests.programs.numpy_reference import Adam, sigmoid
    images = program.data().astype(np.float64)
    p = {k: v.astype(np.float64) for k, v in program.initial_weights().items()}
    p.update({"b_gen_hidden1": np.zeros(12), "b_gen_out": np.zeros(16),
              "b_disc_hidden1": np.zeros(12), "b_disc_out": np.zeros(1)})
    gen_opt, disc_opt = Adam(0.002), Adam(0.002)
    losses = []

    def disc(x):
        z1 = x @ p["disc_hidden1"] + p["b_disc_hidden1"]
        h = np.maximum(z1, 0)
        return z1, h, sigmoid(h @ p["disc_out"] + p["b_disc_out"])

    def disc_back(x, z1, h, d_logit):
        """Gradients of the disc's variables and of its input from d loss / d logit."""
        dh = d_logit @ p["disc_out"].T * (z1 > 0)
        return {"disc_out": h.T @ d_logit, "b_disc_out": d_logit.sum(0),
                "disc_hidden1": x.T @ dh, "b_disc_hidden1": dh.sum(0)}, dh @ p["disc_hidden1"].T

    for i in range(steps):
        x = images[(i * 16) % len(images):][:16]
        z = program.noise(i).astype(np.float64)
        g1 = z @ p["gen_hidden1"] + p["b_gen_hidden1"]
        gh = np.maximum(g1, 0)
        sample = sigmoid(gh @ p["gen_out"] + p["b_gen_out"])
        r1, rh, d_real = disc(x)
        f1, fh, d_fake = disc(sample)
        n = len(x)
        losses.append((-np.mean(np.log(d_fake)),
                       -np.mean(np.log(d_real) + np.log(1.0 - d_fake))))
        # d(-log s)/dlogit = s - 1; d(-log(1 - s))/dlogit = s
        _, d_sample = disc_back(sample, f1, fh, (d_fake - 1) / n)
        d_out = d_sample * sample * (1 - sample)
        dgh = d_out @ p["gen_out"].T * (g1 > 0)
        gen_grads = {"gen_out": gh.T @ d_out, "b_gen_out": d_out.sum(0),
                     "gen_hidden1": z.T @ dgh, "b_gen_hidden1": dgh.sum(0)}
        real, _ = disc_back(x, r1, rh, (d_real - 1) / n)
        fake, _ = disc_back(sample, f1, fh, d_fake / n)
        disc_grads = {k: real[k] + fake[k] for k in real}
        for opt, grads in ((gen_opt, gen_grads), (disc_opt, disc_grads)):
            opt.begin_step()
            for k, g in grads.items():
                opt.step(k, p[k], g)
    return losses


def test_gan_program_matches_numpy():
    """Two Adam optimizers with var_list, both applied from one forward pass each step: the
    first 200 steps' losses against numpy's; after 1500 steps the generator draws images
    bright on the first half (0.8) and dark on the second (0.2), as the data."""
    program = _program_module("gan")
    lines = run("gan.py", "--steps=1500")
    want = _gan_numpy(program, 200)
    got = [(float(line.split()[4].rstrip(",")), float(line.split()[7])) for line in lines[:200]]
    np.testing.assert_allclose(got, want, rtol=1e-5)  # 9e-7 at most, Haswell and SkylakeX
    first, second = (float(v) for v in lines[-1].split()[4::3])
    assert abs(first - 0.8) < 0.1 and abs(second - 0.2) < 0.1


def test_rnn_classifier_program_matches_numpy(tmp_path):
    """tf.contrib.rnn's BasicLSTMCell and static_rnn over unstacked steps, softmax on the
    last output, gradient descent: from the initial variables the program saved (read as the
    npz they are), every step's loss and the trained variables against numpy's BPTT."""
    from tests.programs.numpy_reference import lstm_backward, lstm_forward
    program = _program_module("rnn_classifier")
    steps = 100
    lines = run("rnn_classifier.py", f"--steps={steps}", f"--logdir={tmp_path}")
    with np.load(tmp_path / "model.ckpt-0.data-00000-of-00001") as saved:
        v = {k: saved[k].astype(np.float64) for k in saved}
    kernel, bias = v["rnn/basic_lstm_cell/kernel"], v["rnn/basic_lstm_cell/bias"]
    w, b = v["w_out"], v["b_out"]
    data_x, data_y = program.sequences()
    for step in range(1, steps + 1):
        start = ((step - 1) * 32) % len(data_x)
        x, y = data_x[start:start + 32].astype(np.float64), data_y[start:start + 32]
        hs, cache = lstm_forward(x.transpose(1, 0, 2), kernel, bias)
        logits = hs[-1] @ w + b
        p = np.exp(logits - logits.max(1, keepdims=True))
        p /= p.sum(1, keepdims=True)
        loss = -np.mean(np.sum(y * np.log(p), 1))
        accuracy = np.mean(p.argmax(1) == y.argmax(1))
        fields = lines[step - 1].replace(",", "").split()
        assert fields[:2] == ["Step", str(step)]
        np.testing.assert_allclose(float(fields[4]), loss, rtol=1e-4)
        assert abs(float(fields[7]) - accuracy) < 1e-3
        dlogits = (p - y) / len(x)
        dhs = [np.zeros_like(h) for h in hs]
        dhs[-1] = dlogits @ w.T
        dk, db = lstm_backward(dhs, kernel, cache)
        w, b = w - 0.5 * hs[-1].T @ dlogits, b - 0.5 * dlogits.sum(0)
        kernel, bias = kernel - 0.5 * dk, bias - 0.5 * db
    with np.load(tmp_path / f"model.ckpt-{steps}.data-00000-of-00001") as saved:
        for name, want in [("rnn/basic_lstm_cell/kernel", kernel),
                           ("rnn/basic_lstm_cell/bias", bias), ("w_out", w), ("b_out", b)]:
            np.testing.assert_allclose(saved[name], want, rtol=1e-3, atol=1e-4)
    assert float(lines[-1].split()[-1]) > 0.8  # it learned the task


def test_import_meta_graph_program_resumes_as_if_never_stopped(tmp_path):
    """Trained 12 steps, then resumed twice in new processes through import_meta_graph (the
    second from the .meta the first import wrote): every loss and the final logits are those
    of one uninterrupted run of 20 steps, bit for bit."""
    parts = run("restore_meta_graph.py", f"--logdir={tmp_path / 'a'}", "--steps=12")
    parts += run("restore_meta_graph.py", f"--logdir={tmp_path / 'a'}", "--steps=5",
                 "--mode=resume")
    parts += run("restore_meta_graph.py", f"--logdir={tmp_path / 'a'}", "--steps=3",
                 "--mode=resume")
    whole = run("restore_meta_graph.py", f"--logdir={tmp_path / 'b'}", "--steps=20")
    losses = [line for line in parts if line.startswith("step")]
    assert losses == whole[:-1] and len(losses) == 20
    assert parts[-1] == whole[-1] and parts[-1].startswith("probe")
    assert float(losses[-1].split()[-1]) < float(losses[0].split()[-1])
