"""sparse_bag_of_words.py (tensor-bound slicing, tile and broadcast_to with tensor sizes, the
SparseTensor functions) run as a user runs it, against the lines TensorFlow printed for the same
file with its import line changed (``import tensorflow.compat.v1 as tf;
tf.disable_v2_behavior()``, TensorFlow 2.21 CPU): the same to the last printed digit."""

from __future__ import annotations

import numpy as np

from tests.programs.test_programs import run

TF_LOSSES = [1.117103, 0.876526, 0.737480, 0.637944, 0.564285, 0.508011, 0.463698, 0.427866]


def test_sparse_bag_of_words_gives_tf_numbers():
    lines = run("sparse_bag_of_words.py")
    assert lines[:2] == ["seen 3 5 2 6 4 5", "cropped [6, 6]"]
    rows = [line.split() for line in lines if line.startswith("loss ")]
    assert [int(r[1]) for r in rows] == list(range(8))
    np.testing.assert_allclose([float(r[2]) for r in rows], TF_LOSSES, rtol=2e-5, atol=2e-6)
    np.testing.assert_allclose([float(p) for p in lines[-1].split()[1:]],
                               [0.095082, 0.802530, 0.102388], atol=2e-6)
