"""tf.image against TF's own expected values (image_ops_test's ResizeMethodV1 cases) and
hand-worked ones; the random augmentations are checked for their invariants and their seeding."""

from __future__ import annotations

import numpy as np
import pytest

import engine as tf


def run(t, feed=None):
    with tf.Session() as sess:
        return sess.run(t, feed)


# image_ops_test.py, testResizeUpAlignCornersFalse / testResizeUpAlignCornersTrue (V1 methods)
UP_DATA = [64, 32, 32, 64, 50, 100]
UP_FALSE = {
    tf.image.ResizeMethod.BILINEAR: [64.0, 48.0, 32.0, 32.0, 48.0, 48.0, 48.0, 48.0, 32.0, 48.0,
                                     64.0, 64.0, 41.0, 61.5, 82.0, 82.0, 50.0, 75.0, 100.0,
                                     100.0, 50.0, 75.0, 100.0, 100.0],
    tf.image.ResizeMethod.NEAREST_NEIGHBOR: [64.0, 64.0, 32.0, 32.0, 64.0, 64.0, 32.0, 32.0,
                                             32.0, 32.0, 64.0, 64.0, 32.0, 32.0, 64.0, 64.0,
                                             50.0, 50.0, 100.0, 100.0, 50.0, 50.0, 100.0, 100.0],
    tf.image.ResizeMethod.AREA: [64.0, 64.0, 32.0, 32.0, 64.0, 64.0, 32.0, 32.0, 32.0, 32.0, 64.0,
                                 64.0, 32.0, 32.0, 64.0, 64.0, 50.0, 50.0, 100.0, 100.0, 50.0,
                                 50.0, 100.0, 100.0],
    # printed by TensorFlow 2.21's compat.v1 resize_images(..., BICUBIC, align_corners=False)
    tf.image.ResizeMethod.BICUBIC: [64.0, 48.0, 32.0, 29.0, 46.3125, 45.46875, 44.625,
                                    44.466801, 32.0, 48.0, 64.0, 67.0, 38.0, 61.5, 85.0, 89.40625,
                                    50.0, 75.0, 100.0, 104.6875, 51.6875, 77.53125, 103.375,
                                    108.220703],
}
UP_TRUE_DATA = [6, 3, 3, 6, 6, 9]
UP_TRUE = {
    tf.image.ResizeMethod.BILINEAR: [6.0, 5.0, 4.0, 3.0, 4.5, 4.5, 4.5, 4.5, 3.0, 4.0, 5.0, 6.0,
                                     4.5, 5.5, 6.5, 7.5, 6.0, 7.0, 8.0, 9.0],
    tf.image.ResizeMethod.NEAREST_NEIGHBOR: [6.0, 6.0, 3.0, 3.0, 3.0, 3.0, 6.0, 6.0, 3.0, 3.0,
                                             6.0, 6.0, 6.0, 6.0, 9.0, 9.0, 6.0, 6.0, 9.0, 9.0],
    tf.image.ResizeMethod.AREA: [6.0, 6.0, 6.0, 3.0, 6.0, 6.0, 6.0, 3.0, 3.0, 3.0, 3.0, 6.0, 3.0,
                                 3.0, 3.0, 6.0, 6.0, 6.0, 6.0, 9.0],
}


@pytest.mark.parametrize("method", sorted(UP_FALSE))
@pytest.mark.parametrize("nptype", [np.uint8, np.int32, np.float32, np.float64])
def test_resize_images_matches_tf_v1(method, nptype):
    img = np.array(UP_DATA, nptype).reshape(1, 3, 2, 1)
    got = run(tf.image.resize_images(img, [6, 4], method, align_corners=False))
    np.testing.assert_allclose(got.reshape(-1), UP_FALSE[method], atol=1e-5)
    if method not in UP_TRUE:
        return
    img = np.array(UP_TRUE_DATA, nptype).reshape(1, 3, 2, 1)
    got = run(tf.image.resize_images(img, [5, 4], method, align_corners=True))
    np.testing.assert_allclose(got.reshape(-1), UP_TRUE[method], atol=1e-5)


def test_resize_ops_dtypes_shapes_and_gradient():
    img = np.arange(12, dtype=np.uint8).reshape(1, 3, 4, 1)
    assert run(tf.image.resize_bilinear(img, [2, 2])).dtype == np.float32
    assert run(tf.image.resize_nearest_neighbor(img, [2, 2])).dtype == np.uint8
    assert run(tf.image.resize_images(img[0], [6, 8])).shape == (6, 8, 1)
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float64, [None, 3, 2, 1])
        y = tf.image.resize_images(x, [6, 4])
        assert y.shape.as_list() == [None, 6, 4, 1]
        (g,) = tf.gradients(tf.reduce_sum(y), [x])
        # every output pixel's weights sum to 1: the input gradient is how often each input
        # pixel is read, weighted; the rows and columns of 6x4 from 3x2 read in total 24
        with tf.Session() as sess:
            gv = sess.run(g, {x: np.ones((2, 3, 2, 1))})
        np.testing.assert_allclose(gv.sum(axis=(1, 2, 3)), [24.0, 24.0])
    # area down by 2: the means of 2x2 blocks
    block = np.arange(16.0).reshape(1, 4, 4, 1)
    np.testing.assert_allclose(run(tf.image.resize_area(block, [2, 2]))[0, :, :, 0],
                               [[2.5, 4.5], [10.5, 12.5]])
    with pytest.raises(NotImplementedError, match="method"):
        tf.image.resize_images(img, [2, 2], 7)


def test_flips_and_crops():
    img = np.arange(24).reshape(2, 4, 3)
    np.testing.assert_array_equal(run(tf.image.flip_left_right(img)), img[:, ::-1])
    np.testing.assert_array_equal(run(tf.image.flip_up_down(img)), img[::-1])
    np.testing.assert_array_equal(run(tf.image.flip_left_right(img[None])), img[None, :, ::-1])
    for k in range(-1, 5):  # numpy's rot90 turns the same way as TF's
        np.testing.assert_array_equal(run(tf.image.rot90(img, k)), np.rot90(img, k))
        np.testing.assert_array_equal(run(tf.image.rot90(img[None], k)),
                                      np.rot90(img, k)[None])
    np.testing.assert_array_equal(run(tf.image.transpose_image(img)), img.transpose(1, 0, 2))
    # central_crop: TF's start int((size - size * fraction) / 2)
    big = np.arange(8 * 6).reshape(8, 6, 1)
    np.testing.assert_array_equal(run(tf.image.central_crop(big, 0.5)), big[2:6, 1:5])
    np.testing.assert_array_equal(run(tf.image.resize_image_with_crop_or_pad(big, 4, 10)),
                                  np.pad(big[2:6], [[0, 0], [2, 2], [0, 0]]))
    np.testing.assert_array_equal(run(tf.image.crop_to_bounding_box(big, 1, 2, 3, 2)),
                                  big[1:4, 2:4])
    with pytest.raises(ValueError, match="does not fit"):
        tf.image.crop_to_bounding_box(big, 6, 0, 3, 2)


def test_random_ops_are_seeded_by_the_graph_seed_and_keep_their_invariants():
    img = np.arange(2 * 5 * 4 * 1, dtype=np.float32).reshape(2, 5, 4, 1)

    def draw():
        with tf.Graph().as_default():
            tf.set_random_seed(7)
            ops = [tf.image.random_flip_left_right(img), tf.image.random_crop(img, [2, 3, 2, 1]),
                   tf.image.random_brightness(img, 0.5), tf.image.random_contrast(img, 0.2, 1.8),
                   tf.image.random_flip_up_down(img[0])]
            with tf.Session() as sess:
                return [sess.run(ops) for _ in range(6)]

    first, again = draw(), draw()
    for a, b in zip(first, again):
        for x, y in zip(a, b):
            np.testing.assert_array_equal(x, y)
    flips = {tuple(bool(np.array_equal(f[i], img[i])) for i in range(2)) for f, *_ in first}
    assert len(flips) > 1  # different draws flip different images
    for flip, crop, bright, contrast, ud in first:
        for i in range(2):
            assert np.array_equal(flip[i], img[i]) or np.array_equal(flip[i], img[i, :, ::-1])
        # the crop is a window of img
        assert any(np.array_equal(crop, img[:, r:r + 3, c:c + 2]) for r in range(3)
                   for c in range(3))
        delta = bright - img
        assert np.ptp(delta) < 1e-4 and abs(delta.ravel()[0]) <= 0.5
        mean = img.mean(axis=(1, 2), keepdims=True)
        factor = (contrast - mean) / (img - mean)
        assert 0.2 <= factor.ravel()[0] < 1.8 and np.ptp(factor) < 1e-4
        assert np.array_equal(ud, img[0]) or np.array_equal(ud, img[0, ::-1])


def test_per_image_standardization_and_dtype_conversion():
    img = np.arange(2 * 2 * 3, dtype=np.uint8).reshape(1, 2, 2, 3)
    got = run(tf.image.per_image_standardization(img))
    x = img.astype(np.float64)
    expected = (x - x.mean()) / max(x.std(), 1 / np.sqrt(x.size))
    np.testing.assert_allclose(got, expected, rtol=1e-6)
    # a constant image: stddev 0, divided by 1/sqrt(N) instead
    np.testing.assert_array_equal(run(tf.image.per_image_standardization(np.ones((2, 2, 1)))), 0)
    np.testing.assert_allclose(run(tf.image.convert_image_dtype(
        np.array([0, 51, 255], np.uint8), tf.float32)), [0.0, 0.2, 1.0], rtol=1e-7)
    np.testing.assert_array_equal(run(tf.image.convert_image_dtype(
        np.array([0.0, 0.5, 1.0], np.float32), tf.uint8)), [0, 127, 255])  # x * 255.5, truncated
    np.testing.assert_array_equal(run(tf.image.convert_image_dtype(
        np.array([-0.5, 2.0], np.float32), tf.uint8, saturate=True)), [0, 255])
    gray = run(tf.image.rgb_to_grayscale(np.array([[[1.0, 0.0, 0.0], [0.0, 1.0, 1.0]]])))
    np.testing.assert_allclose(gray[..., 0], [[0.2989, 0.5870 + 0.1140]])


def test_hsv_conversions_and_colour_adjustments_hand_worked():
    rgb = np.array([[[1.0, 0.0, 0.0], [0.2, 0.9, 0.9], [0.5, 0.5, 0.5], [0.0, 0.0, 0.0]]])
    hsv = run(tf.image.rgb_to_hsv(rgb))
    # red: hue 0; cyan-ish (0.2, 0.9, 0.9): hue 1/2, saturation 0.7 / 0.9; grey and black: 0, 0
    np.testing.assert_allclose(hsv[0], [[0, 1, 1], [0.5, 0.7 / 0.9, 0.9], [0, 0, 0.5], [0, 0, 0]],
                               atol=1e-12)
    rng = np.random.default_rng(4)
    img = rng.uniform(size=(2, 3, 3))
    np.testing.assert_allclose(run(tf.image.hsv_to_rgb(tf.image.rgb_to_hsv(img))), img, atol=1e-12)
    # a third of the colour circle turns red into green, and -1/3 into blue
    np.testing.assert_allclose(run(tf.image.adjust_hue(rgb[:, :1], 1 / 3)), [[[0, 1, 0]]],
                               atol=1e-12)
    np.testing.assert_allclose(run(tf.image.adjust_hue(rgb[:, :1], -1 / 3)), [[[0, 0, 1]]],
                               atol=1e-12)
    # saturation 0 leaves the value as grey
    np.testing.assert_allclose(run(tf.image.adjust_saturation(rgb, 0.0))[0, 1], [0.9] * 3)
    with tf.Graph().as_default():
        tf.set_random_seed(2)
        hue, sat = tf.image.random_hue(img, 0.2), tf.image.random_saturation(img, 0.5, 1.5)
        with tf.Session() as sess:
            h, s = sess.run([hue, sat])
    assert h.shape == s.shape == img.shape
    np.testing.assert_allclose(h.max(axis=-1), img.max(axis=-1), atol=1e-12)  # value kept
    with pytest.raises(ValueError, match="max_delta"):
        tf.image.random_hue(img, 0.7)
