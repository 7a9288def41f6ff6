"""Gradient-processing stages and the Pipeline: each stage's output and reports against numpy
re-derivations, state and gating (accumulate, skip_nonfinite), parameter validation, and a
pipeline + optimizer run against TF1's numbers."""

import inspect

import numpy as np
import pytest
import tf1_train_reference as ref

import engine as tf
from engine.train import STAGES, Pipeline
from engine.train.stages import StageParameterError, make_stage

V0 = np.array([1.0, -2.0, 0.5], np.float32)
M0 = np.array([[0.5, 0.25], [-1.0, 2.0]], np.float32)


def build(stages, with_optimizer=None):
    """Two variables with fed gradients, a Pipeline, optionally an optimizer gated by it."""
    v = tf.Variable(V0, name="v")
    m = tf.Variable(M0, name="m")
    gv = tf.placeholder(tf.float32, [3])
    gm = tf.placeholder(tf.float32, [2, 2])
    step = tf.train.get_or_create_global_step()
    pipeline = Pipeline(stages)
    pairs, reports, gate = pipeline.apply([(gv, v), (gm, m)], step)
    if with_optimizer is None:
        train = tf.assign_add(step, 1)
    else:
        train = with_optimizer.apply_gradients(pairs, global_step=step, gate=gate)
    return dict(v=v, m=m, gv=gv, gm=gm, step=step, pairs=pairs, reports=reports, gate=gate,
                train=train, pipeline=pipeline)


def run_steps(parts, feeds, fetch, after=None):
    """Run ``fetch`` with the train op for each (grad_v, grad_m), then ``after`` on its own (a
    variable fetched with the train op would show its updated value); return the fetched
    values per step and finally the variables."""
    out = []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for g_v, g_m in feeds:
            values, _ = sess.run([fetch, parts["train"]],
                                 {parts["gv"]: g_v, parts["gm"]: g_m})
            out.append(values if after is None else (values, sess.run(after)))
        out.append(sess.run([parts["v"], parts["m"]]))
    return out


GV = np.array([3.0, -4.0, 12.0], np.float32)
GM = np.array([[0.5, -0.5], [0.25, 1.0]], np.float32)


def norm(*xs):
    return np.sqrt(sum(float((np.asarray(x, np.float64) ** 2).sum()) for x in xs))


def test_clip_by_value_stage_clips_and_reports():
    with tf.Graph().as_default():
        p = build([STAGES["clip_by_value"](clip_value_min=-1.0, clip_value_max=1.0)])
        (pairs, reports), (_, small), _ = run_steps(
            p, [(GV, GM), (GV / 100, GM)], [[g for g, _ in p["pairs"]], p["reports"]])
    np.testing.assert_array_equal(pairs[0], np.clip(GV, -1, 1))
    np.testing.assert_array_equal(pairs[1], GM)
    assert reports["clipped"] == 1
    assert small["clipped"] == 0
    assert reports["grad_norm"] == pytest.approx(norm(GV, GM), rel=1e-6)
    assert reports["grad_norm_processed"] == pytest.approx(norm(np.clip(GV, -1, 1), GM), rel=1e-6)


def test_clip_by_norm_stage_clips_each_tensor():
    with tf.Graph().as_default():
        p = build([STAGES["clip_by_norm"](clip_norm=5.0)])
        (pairs, reports), _ = run_steps(p, [(GV, GM)], [[g for g, _ in p["pairs"]], p["reports"]])
    np.testing.assert_allclose(pairs[0], GV * 5.0 / 13.0, rtol=1e-6)  # |GV| = 13
    np.testing.assert_array_equal(pairs[1], GM)
    assert reports["clipped"] == 1


def test_clip_by_global_norm_stage_scales_the_group_together():
    with tf.Graph().as_default():
        p = build([STAGES["clip_by_global_norm"](clip_norm=2.0)])
        (pairs, reports), (nan_pairs, nan_reports), _ = run_steps(
            p, [(GV, GM), (np.array([np.nan, 0, 0], np.float32), GM)],
            [[g for g, _ in p["pairs"]], p["reports"]])
    n = norm(GV, GM)
    np.testing.assert_allclose(pairs[0], GV * 2.0 / n, rtol=1e-6)
    np.testing.assert_allclose(pairs[1], GM * 2.0 / n, rtol=1e-6)
    assert reports["clipped"] == 1
    assert reports["grad_norm_processed"] == pytest.approx(2.0, rel=1e-6)
    assert np.isnan(nan_pairs[1]).all() and nan_reports["clipped"] == 1


def test_scale_and_weight_decay_stages():
    with tf.Graph().as_default():
        p = build([STAGES["scale"](factor=0.5), STAGES["weight_decay"](weight_decay=0.1)])
        (pairs,), _ = run_steps(p, [(GV, GM)], [[g for g, _ in p["pairs"]]])
    np.testing.assert_allclose(pairs[0], GV * 0.5 + 0.1 * V0, rtol=1e-6)
    np.testing.assert_allclose(pairs[1], GM * 0.5 + 0.1 * M0, rtol=1e-6)


def test_zero_nans_stage_zeroes_nans_and_counts_them():
    with tf.Graph().as_default():
        p = build([STAGES["zero_nans"]()])
        g = np.array([np.nan, 1.0, np.inf], np.float32)
        (pairs, reports), _ = run_steps(p, [(g, np.full((2, 2), np.nan, np.float32))],
                                        [[x for x, _ in p["pairs"]], p["reports"]])
    np.testing.assert_array_equal(pairs[0], [0.0, 1.0, np.inf])  # only NaN, as optax's zero_nans
    np.testing.assert_array_equal(pairs[1], np.zeros((2, 2)))
    assert reports["nan_count"] == 5


def test_add_noise_stage_is_seeded_and_decays_as_stddev_over_one_plus_t_to_gamma():
    def sample():
        with tf.Graph().as_default():
            big = tf.Variable(np.zeros(20000, np.float32), name="big")
            g = tf.placeholder(tf.float32, [20000])
            step = tf.train.get_or_create_global_step()
            stage = STAGES["add_noise"](stddev=0.5, gamma=0.55, seed=7)
            pairs, reports = stage.apply([(g, big)], step)
            noisy = pairs[0][0]
            with tf.Session() as sess:
                sess.run(tf.global_variables_initializer())
                out = []
                for _ in range(3):
                    out.append(sess.run([noisy, reports["noise_stddev"]],
                                        {g: np.zeros(20000, np.float32)}))
                    sess.run(tf.assign_add(step, 9))
                return out

    first, second = sample(), sample()
    for (noise, _), (again, _) in zip(first, second):
        np.testing.assert_array_equal(noise, again)  # reproducible with its seed
    for t, (noise, std) in zip([0, 9, 18], first):
        expected = np.float32(0.5) / np.float32(1 + t) ** np.float32(0.55)
        assert std == pytest.approx(expected, rel=1e-6)
        assert np.std(noise) == pytest.approx(expected, rel=0.03)
        assert abs(np.mean(noise)) < 4 * expected / np.sqrt(20000)
    assert not np.array_equal(first[0][0], first[1][0])


def test_accumulate_applies_the_mean_of_k_steps_on_every_kth_step():
    feeds = [(GV * (i + 1), GM * (i - 2)) for i in range(6)]
    with tf.Graph().as_default():
        p = build([STAGES["accumulate"](k=3)], tf.train.GradientDescentOptimizer(0.1))
        out = run_steps(p, feeds, [p["gate"], p["reports"]["accumulated"]], after=p["v"])
        names = sorted(v.name for v in p["pipeline"].variables())
    assert [o[0][0] for o in out[:-1]] == [False, False, True, False, False, True]
    assert [o[0][1] for o in out[:-1]] == [1, 2, 3, 1, 2, 3]
    v_after = [o[1] for o in out[:-1]]
    for i in (0, 1):
        np.testing.assert_array_equal(v_after[i], V0)
    mean_v = [np.mean([f[0] for f in feeds[k:k + 3]], axis=0) for k in (0, 3)]
    mean_m = [np.mean([f[1] for f in feeds[k:k + 3]], axis=0) for k in (0, 3)]
    for i in (2, 3, 4):
        np.testing.assert_allclose(v_after[i], V0 - np.float32(0.1) * mean_v[0], rtol=1e-6)
    np.testing.assert_allclose(out[-1][0], V0 - 0.1 * mean_v[0] - 0.1 * mean_v[1], rtol=1e-6)
    np.testing.assert_allclose(out[-1][1], M0 - 0.1 * mean_m[0] - 0.1 * mean_m[1], rtol=1e-6,
                               atol=1e-7)
    assert names == ["m/accumulate:0", "pipeline/accumulate/count:0", "v/accumulate:0"]


def test_skip_nonfinite_skips_the_update_and_counts_the_skips():
    bad = np.array([np.inf, 0.0, 0.0], np.float32)
    feeds = [(GV, GM), (bad, GM), (GV, GM * np.nan), (GV, GM)]
    with tf.Graph().as_default():
        adam = tf.train.AdamOptimizer(0.1)
        p = build([STAGES["skip_nonfinite"]()], adam)
        out = run_steps(p, feeds, [p["reports"]["skipped"], p["reports"]["skips"]],
                        after=adam._get_beta_accumulators()[0])
    assert [o[0][0] for o in out[:-1]] == [0, 1, 1, 0]
    assert [o[0][1] for o in out[:-1]] == [0, 1, 2, 2]
    # Adam's state advanced on the two finite steps only (beta1_power after each step)
    np.testing.assert_allclose([o[1] for o in out[:-1]], [0.81, 0.81, 0.81, 0.729], rtol=1e-6)
    with tf.Graph().as_default():
        v = tf.Variable(V0, name="v")
        m = tf.Variable(M0, name="m")
        op = tf.train.AdamOptimizer(0.1).apply_gradients([(tf.constant(GV), v), (tf.constant(GM), m)])
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(op)
            sess.run(op)
            expected = sess.run([v, m])
    np.testing.assert_array_equal(out[-1][0], expected[0])
    np.testing.assert_array_equal(out[-1][1], expected[1])


def test_a_skipped_step_does_not_count_towards_an_accumulation_window():
    bad = np.array([np.nan, 0.0, 0.0], np.float32)
    feeds = [(GV, GM), (bad, GM), (GV * 3, GM)]
    with tf.Graph().as_default():
        p = build([STAGES["skip_nonfinite"](), STAGES["accumulate"](k=2)],
                  tf.train.GradientDescentOptimizer(1.0))
        out = run_steps(p, feeds, [p["gate"], p["reports"]["accumulated"], p["reports"]["skips"]])
    assert [bool(o[0]) for o in out[:-1]] == [False, False, True]
    assert [o[1] for o in out[:-1]] == [1, 1, 2]
    assert [o[2] for o in out[:-1]] == [0, 1, 1]
    np.testing.assert_allclose(out[-1][0], V0 - (GV + 3 * GV) / 2, rtol=1e-6)


def test_pipeline_with_adam_reproduces_tf1_clip_by_global_norm():
    # Seed 001 answer 1 (Adam(1e-3) after clip_by_global_norm(5.0)), as a one-stage pipeline.
    with tf.Graph().as_default():
        X = tf.constant([[0.5, -1.0], [1.5, 2.0], [-0.5, 0.25], [1.0, 1.0]])
        Y = tf.constant([[1.0], [-2.0], [0.5], [3.0]])
        W1 = tf.Variable([[0.1, -0.2, 0.3], [0.4, 0.5, -0.6]], name="W1")
        b1 = tf.Variable([0.05, -0.05, 0.1], name="b1")
        W2 = tf.Variable([[0.7], [-0.8], [0.9]], name="W2")
        b2 = tf.Variable([0.2], name="b2")
        h = tf.tanh(tf.matmul(X, W1) + b1)
        cost = tf.reduce_mean(tf.square(tf.matmul(h, W2) + b2 - 10.0 * Y))
        opt = tf.train.AdamOptimizer(1e-3)
        step = tf.train.get_or_create_global_step()
        pairs, reports, gate = Pipeline.from_config({"clip_by_global_norm": {"clip_norm": 5.0}}) \
            .apply(opt.compute_gradients(cost, [W1, b1, W2, b2]), step)
        assert gate is None
        train = opt.apply_gradients(pairs, global_step=step)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            first_norm = sess.run(reports["grad_norm"])
            for _ in range(3):
                sess.run(train)
            final = sess.run([W1, b1, W2, b2])
    expected = ref.SEEDS["answer1_clip_by_global_norm"]
    assert first_norm == pytest.approx(expected["fetched"], rel=1e-5)
    for a, e in zip(final, expected["final"]):
        np.testing.assert_allclose(a, np.asarray(e, np.float32), rtol=1e-5, atol=1e-6)


def test_an_empty_pipeline_reports_the_norm_twice_and_never_gates():
    with tf.Graph().as_default():
        p = build([])
        assert p["gate"] is None
        assert p["reports"]["grad_norm"] is p["reports"]["grad_norm_processed"]


def test_report_names_shared_by_stages_keep_the_largest_value():
    with tf.Graph().as_default():
        p = build([STAGES["clip_by_value"](clip_value_min=-100.0, clip_value_max=100.0),
                   STAGES["clip_by_norm"](clip_norm=1.0)])
        (reports,), _ = run_steps(p, [(GV, GM)], [p["reports"]])
    assert reports["clipped"] == 1


# -- parameters -------------------------------------------------------------------------


def test_stage_registry_and_parameter_names():
    assert set(STAGES) == {"clip_by_value", "clip_by_norm", "clip_by_global_norm", "scale",
                           "weight_decay", "add_noise", "zero_nans", "accumulate",
                           "skip_nonfinite"}
    assert STAGES["clip_by_value"].param_names() == ["clip_value_min", "clip_value_max"]
    assert STAGES["add_noise"].param_names() == ["stddev", "gamma", "seed"]
    assert "steps" in STAGES["accumulate"].accepted_params()
    params = inspect.signature(STAGES["clip_by_norm"].__init__).parameters
    assert list(params) == ["self", "clip_norm", "axes", "max_norm"]


def test_stage_parameters_are_validated_with_their_names():
    with pytest.raises(TypeError) as exc:
        STAGES["clip_by_norm"](clipnorm=5.0)
    assert exc.value.param == "clipnorm" and "clip_norm" in exc.value.accepted
    assert isinstance(exc.value, StageParameterError)
    with pytest.raises(TypeError, match="missing required parameter 'clip_norm'"):
        STAGES["clip_by_global_norm"]()
    with pytest.raises(ValueError, match=r"clip_by_norm.clip_norm: Invalid clip_norm: -1.0"):
        STAGES["clip_by_norm"](clip_norm=-1.0)
    with pytest.raises(ValueError, match="greater than clip_value_max"):
        STAGES["clip_by_value"](clip_value_min=1.0, clip_value_max=-1.0)
    with pytest.raises(TypeError, match="k must be an integer"):
        STAGES["accumulate"](k=2.5)
    with pytest.raises(ValueError, match="Invalid k: 0"):
        STAGES["accumulate"](k=0)
    with pytest.raises(TypeError, match="clip_norm must be a number, got 'big'"):
        STAGES["clip_by_global_norm"](clip_norm="big")
    with pytest.raises(TypeError, match="unknown stage 'clip_by_nrom'"):
        make_stage("clip_by_nrom", {})


def test_make_stage_accepts_a_bare_value_for_the_primary_parameter_and_aliases():
    assert make_stage("clip_by_global_norm", 5).params == {"clip_norm": 5.0}
    assert make_stage("accumulate", {"steps": 4}).params == {"k": 4}
    assert make_stage("skip_nonfinite", None).params == {}
    with pytest.raises(TypeError, match="mapping"):
        make_stage("clip_by_value", 1.0)


def test_every_stage_passes_none_gradients_through():
    with tf.Graph().as_default():
        v = tf.Variable(V0, name="v")
        frozen = tf.Variable(1.0, name="frozen")
        step = tf.train.get_or_create_global_step()
        spec = {"clip_by_value": {"clip_value_min": -1.0, "clip_value_max": 1.0},
                "clip_by_norm": 5.0, "clip_by_global_norm": 5.0, "scale": 2.0,
                "weight_decay": 0.1, "add_noise": {"stddev": 0.0, "seed": 1}, "zero_nans": None,
                "accumulate": 2, "skip_nonfinite": None}
        pairs, reports, gate = Pipeline.from_config(spec).apply(
            [(tf.constant(GV), v), (None, frozen)], step)
        assert pairs[1] == (None, frozen) and pairs[0][1] is v
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            out, rep, g = sess.run([pairs[0][0], reports, gate])
    expected = np.clip(GV, -1, 1)
    expected = expected * min(1.0, 5.0 / norm(expected))
    expected = (expected * 2 + 0.1 * V0) / 2  # half of the first of two accumulated steps
    np.testing.assert_allclose(out, expected, rtol=1e-6)
    assert not g and rep["accumulated"] == 1 and rep["skips"] == 0


def test_an_incoming_gate_keeps_a_step_out_of_accumulate():
    """k=2 with the incoming gate False on step 2 (a step the caller skips, say for a NaN in
    another group): the window is steps 1 and 3, and the update applies their mean on step 3."""
    feeds = [(GV * (i + 1), GM) for i in range(3)]
    with tf.Graph().as_default():
        v = tf.Variable(V0, name="v")
        m = tf.Variable(M0, name="m")
        gv = tf.placeholder(tf.float32, [3])
        gm = tf.placeholder(tf.float32, [2, 2])
        ok = tf.placeholder(tf.bool, [])
        pairs, reports, gate = Pipeline([STAGES["accumulate"](k=2)]).apply(
            [(gv, v), (gm, m)], gate=ok)
        train = tf.train.GradientDescentOptimizer(0.1).apply_gradients(pairs, gate=gate)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            seen = [sess.run([gate, reports["accumulated"], train],
                             {gv: a, gm: b, ok: i != 1})[:2] for i, (a, b) in enumerate(feeds)]
            v_end = sess.run(v)
    assert [s[0] for s in seen] == [False, False, True]
    assert [s[1] for s in seen] == [1, 1, 2]
    np.testing.assert_allclose(v_end, V0 - np.float32(0.1) * (feeds[0][0] + feeds[2][0]) / 2,
                               rtol=1e-6)
