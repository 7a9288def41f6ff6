"""boosted_trees_cluster.py run as a user runs it: the regressor's predictions and loss are
the numbers TF's own estimator tests pin for these five examples (testInferRegressor,
testTrainRegressorWithRankOneLabel), and the in-process cluster's losses are gradient descent
on least squares replayed in numpy."""

from __future__ import annotations

import json

import numpy as np

from tests.programs.test_programs import run


def test_boosted_trees_and_in_process_cluster_program(tmp_path):
    records = [json.loads(line) for line in run("boosted_trees_cluster.py", str(tmp_path))]
    trees = records[0]
    np.testing.assert_allclose(trees["predictions"],
                               [0.571619, 0.262821, 0.124549, 0.956801, 1.769801], atol=1e-6)
    np.testing.assert_allclose(trees["average_loss"], 2.478283, rtol=1e-6)
    assert trees["global_step"] == 5
    x, y = np.arange(1.0, 5.0), np.array([3.0, 5.0, 7.0, 9.0])
    w = b = 0.0
    for step, record in enumerate(records[1:]):
        r = w * x + b - y
        assert record["step"] == step
        np.testing.assert_allclose(record["loss"], (r ** 2).mean(), rtol=1e-5)  # float32
        w, b = w - 0.05 * 2 * (r * x).mean(), b - 0.05 * 2 * r.mean()
    assert len(records) == 6
