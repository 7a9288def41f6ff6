"""The programs that use the array, nn and image ops of issue 18 (cnn_lrn_augment.py,
masked_sequence_model.py), run as a user runs them, against the numbers TensorFlow itself
printed for the same files.

The expected lines were recorded by running each program unchanged except for its import line
(``import tensorflow.compat.v1 as tf; tf.disable_v2_behavior()``, TensorFlow 2.21 CPU): the
initial values are numpy's, the augmentations deterministic, so TF and the engine compute the
same arithmetic in float32; they agreed to the sixth digit."""

from __future__ import annotations

import numpy as np

from tests.programs.test_programs import run

CNN_TF_LOSSES = [1.119337, 1.012791, 0.966097, 0.931614, 0.901138, 0.869977, 0.834589, 0.798357,
                 0.756765, 0.710494, 0.656151, 0.594545, 0.524484, 0.454916, 0.391394]
SEQ_TF_LOSSES = [1.065802, 0.900531, 0.768511, 0.658791, 0.565181, 0.480265, 0.399763, 0.324678,
                 0.258534, 0.203561, 0.159300, 0.123833]


def _losses(lines):
    rows = [line.split() for line in lines if line.startswith("loss ")]
    assert [int(r[1]) for r in rows] == list(range(len(rows)))
    return [float(r[2]) for r in rows]


def test_cnn_with_lrn_and_image_augmentation_gives_tf_numbers():
    lines = run("cnn_lrn_augment.py")
    np.testing.assert_allclose(_losses(lines), CNN_TF_LOSSES, rtol=2e-5, atol=2e-6)
    assert lines[-1] == "accuracy 1.000000"


def test_masked_sequence_model_gives_tf_numbers():
    lines = run("masked_sequence_model.py")
    assert lines[0] == "real steps 21"  # sum of the lengths: boolean_mask kept the real steps
    np.testing.assert_allclose(_losses(lines), SEQ_TF_LOSSES, rtol=2e-5, atol=2e-6)
    assert lines[-1] == "predictions 2 1 2 1 1 0"
