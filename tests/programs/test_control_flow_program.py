"""control_flow_switch.py run as a user runs it, against a numpy replay: the same forward
arithmetic written out (the row centring, the training switch's mask, the three refinement
steps) and gradient descent on central finite differences of it."""

from __future__ import annotations

import numpy as np

from tests.programs.test_programs import run


def test_control_flow_program_matches_a_numpy_replay():
    lines = run("control_flow_switch.py")
    rng = np.random.RandomState(7)
    data = rng.normal(size=(16, 3))
    target = np.sin(data.sum(axis=1))
    mask = (rng.rand(16, 4) < 0.75) / 0.75
    params = [rng.normal(size=(3, 4)) * 0.5, np.zeros(4), rng.normal(size=(4, 2)) * 0.5,
              rng.normal(size=(2, 2)) * 0.5]

    def loss(params, training):
        w1, b1, w2, u = params
        centred = data - data.mean(axis=1, keepdims=True)
        hidden = np.tanh(centred @ w1 + b1)
        z = (hidden * mask if training else hidden) @ w2
        for _ in range(3):
            z = z + 0.5 * np.tanh(z @ u)
        return np.mean((z[:, 0] - target) ** 2)

    def gradient(params):
        grads = []
        for k, p in enumerate(params):
            g = np.zeros_like(p)
            for j in np.ndindex(p.shape):
                shifted = [q.copy() for q in params]
                shifted[k][j] += 1e-6
                up = loss(shifted, True)
                shifted[k][j] -= 2e-6
                g[j] = (up - loss(shifted, True)) / 2e-6
            grads.append(g)
        return grads

    for step in range(10):
        assert lines[step].split()[:2] == ["loss", str(step)]
        np.testing.assert_allclose(float(lines[step].split()[2]), loss(params, True), rtol=1e-7)
        params = [p - 0.2 * g for p, g in zip(params, gradient(params))]
    _, value, steps = lines[10].split()
    np.testing.assert_allclose(float(value), loss(params, False), rtol=1e-7)
    assert steps == "3"
