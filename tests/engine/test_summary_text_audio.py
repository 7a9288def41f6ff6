"""tf.summary.text and tf.summary.audio: event records TensorBoard's EventAccumulator reads
(when tensorboard is installed), the WAV clips checked with the standard library's wave
module."""

from __future__ import annotations

import io
import wave

import numpy as np
import pytest

import engine as tf


def _write(tmp_path):
    with tf.Graph().as_default():
        note = tf.summary.text("note", tf.constant(["**hello**", "world"]))
        t = np.arange(8, dtype=np.float32) / 8
        clips = np.stack([np.sin(2 * np.pi * t), 0.5 * np.ones(8, np.float32)])
        sound = tf.summary.audio("sound", tf.constant(clips), 8000, max_outputs=2)
        merged = tf.summary.merge_all()
        with tf.Session() as sess:
            writer = tf.summary.FileWriter(str(tmp_path))
            writer.add_summary(sess.run(merged), 3)
            writer.close()
            return sess.run([note, sound]), clips


def test_audio_clips_are_16_bit_wavs_of_the_samples(tmp_path):
    _, clips = _write(tmp_path)
    with tf.Graph().as_default(), tf.Session() as sess:
        raw = sess.run(tf.summary.audio("a", tf.constant(clips[:1, :, None]), 8000, 1))
    wav = raw[raw.index(b"RIFF"):raw.index(b"audio/wav") - 2]
    with wave.open(io.BytesIO(wav)) as w:
        assert (w.getnchannels(), w.getsampwidth(), w.getframerate(), w.getnframes()) == \
            (1, 2, 8000, 8)
        pcm = np.frombuffer(w.readframes(8), "<i2")
    # TF: roundf(x * 32768) clamped to int16; sin(pi/2) = 1 saturates at 32767
    want = np.clip(np.round(clips[0].astype(np.float32) * 32768), -32768, 32767)
    np.testing.assert_array_equal(pcm, want)
    assert pcm[2] == 32767 and pcm[0] == 0


def test_text_and_audio_read_by_tensorboard(tmp_path):
    accumulator = pytest.importorskip("tensorboard.backend.event_processing.event_accumulator")
    _write(tmp_path)
    ea = accumulator.EventAccumulator(str(tmp_path), size_guidance={"audio": 0, "tensors": 0})
    ea.Reload()
    assert ea.Tags()["audio"] == ["sound/audio/0", "sound/audio/1"]
    clip = ea.Audio("sound/audio/1")[0]
    assert (clip.step, clip.sample_rate, clip.length_frames, clip.content_type) == \
        (3, 8000.0, 8, "audio/wav")
    assert ea.Tags()["tensors"] == ["note"]
    event = ea.Tensors("note")[0]
    assert event.step == 3
    assert list(event.tensor_proto.string_val) == [b"**hello**", b"world"]
    assert [d.size for d in event.tensor_proto.tensor_shape.dim] == [2]
    assert ea.SummaryMetadata("note").plugin_data.plugin_name == "text"


def test_bad_summary_inputs_are_named():
    with tf.Graph().as_default():
        with pytest.raises(TypeError, match="'n'.*string"):
            tf.summary.text("n", tf.constant([1.0]))
        with pytest.raises(TypeError, match="'s'.*float"):
            tf.summary.audio("s", tf.constant([[1, 2]]), 100)
