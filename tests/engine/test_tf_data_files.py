"""Input from files: TFRecord files (bytes pinned from TF 2.21's ``tf.io.TFRecordWriter``),
``tf.train.Example`` in protobuf's wire format (bytes pinned from TF's protobuf classes), the
parsing ops (expected values from TF's documented behaviour, checked with TF 2.21), the file
datasets and the dataset transformations that open them (``flat_map``, ``interleave``,
``list_files``, ``shard``, ``reduce``)."""

from __future__ import annotations

import gzip

import numpy as np
import pytest

import engine as tf

# tf.io.TFRecordWriter: b"hello", b"", then EXAMPLE_ONE
TF_RECORDS = bytes.fromhex(
    "0500000000000000eab2043e68656c6c6fbb1f1c19"
    "000000000000000029039807d8ea82a2"
    "0f000000000000006d532b090a0d0a0b0a017612061a040a020102c1f7440a")
# Example(features={"v": Feature(int64_list=Int64List(value=[1, 2]))}).SerializeToString()
EXAMPLE_ONE = bytes.fromhex("0a0d0a0b0a017612061a040a020102")
# label: int64 [3, -1, 300], x: float [0.5, -2.25, 0.1], name: bytes [b"ab", b""], empty: float []
# serialized with deterministic=True (keys in order) ...
EXAMPLE_SORTED = bytes.fromhex(
    "0a520a0b0a05656d707479120212000a1a0a056c6162656c12111a0f0a0d03ffffffffffffffffff01ac02"
    "0a100a046e616d6512080a060a0261620a000a150a01781210120e0a0c0000003f000010c0cdcccc3d")
# ... and as TF's default serialization ordered them (map order is not defined)
EXAMPLE_TF_ORDER = bytes.fromhex(
    "0a520a150a01781210120e0a0c0000003f000010c0cdcccc3d0a0b0a05656d707479120212000a1a0a056c61"
    "62656c12111a0f0a0d03ffffffffffffffffff01ac020a100a046e616d6512080a060a0261620a00")


def four_features():
    return tf.train.Example(features=tf.train.Features(feature={
        "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[3, -1, 300])),
        "x": tf.train.Feature(float_list=tf.train.FloatList(value=[0.5, -2.25, 0.1])),
        "name": tf.train.Feature(bytes_list=tf.train.BytesList(value=[b"ab", b""])),
        "empty": tf.train.Feature(float_list=tf.train.FloatList()),
    }))


def run_all(element):
    """Every value of a dataset element tensor until OutOfRangeError."""
    out = []
    with tf.Session() as sess:
        try:
            while True:
                out.append(sess.run(element))
        except tf.errors.OutOfRangeError:
            return out


# -- TFRecord files --------------------------------------------------------------------------


def test_tfrecord_writer_writes_tfs_bytes(tmp_path):
    path = tmp_path / "r.tfrecord"
    with tf.python_io.TFRecordWriter(str(path)) as writer:
        for record in (b"hello", b"", EXAMPLE_ONE):
            writer.write(record)
    assert path.read_bytes() == TF_RECORDS
    assert list(tf.python_io.tf_record_iterator(str(path))) == [b"hello", b"", EXAMPLE_ONE]


@pytest.mark.parametrize("kind", ["GZIP", "ZLIB"])
def test_compressed_tfrecord_files_round_trip(tmp_path, kind):
    path = str(tmp_path / "r.tfrecord")
    options = tf.python_io.TFRecordOptions(getattr(tf.python_io.TFRecordCompressionType, kind))
    with tf.python_io.TFRecordWriter(path, options) as writer:
        for record in (b"hello", b"", EXAMPLE_ONE):
            writer.write(record)
    if kind == "GZIP":
        assert gzip.decompress(open(path, "rb").read()) == TF_RECORDS
    assert list(tf.python_io.tf_record_iterator(path, options)) == [b"hello", b"", EXAMPLE_ONE]
    records = tf.data.TFRecordDataset(path, compression_type=kind)
    assert run_all(records.make_one_shot_iterator().get_next()) == [b"hello", b"", EXAMPLE_ONE]


@pytest.mark.parametrize("where, message", [
    (21 + 12 + 1, "corrupted record at offset 21"),  # a byte of the second record's crc
    (37 + 12 + 3, "corrupted record at offset 37"),  # a byte of the third record's data
    (3, "corrupted record at offset 0"),  # the first record's length
])
def test_a_corrupt_record_names_the_file_and_offset(tmp_path, where, message):
    data = bytearray(TF_RECORDS)
    data[where] ^= 0x10
    path = tmp_path / "bad.tfrecord"
    path.write_bytes(bytes(data))
    records = tf.data.TFRecordDataset([str(path)]).make_one_shot_iterator().get_next()
    with tf.Session() as sess, pytest.raises(tf.errors.DataLossError) as info:
        for _ in range(3):
            sess.run(records)
    assert str(path) in str(info.value) and message in str(info.value)


def test_a_truncated_file_and_a_missing_file_are_named(tmp_path):
    path = tmp_path / "cut.tfrecord"
    path.write_bytes(TF_RECORDS[:-3])
    with pytest.raises(tf.errors.DataLossError, match="cut.tfrecord: truncated record at "
                                                      "offset 37"):
        list(tf.python_io.tf_record_iterator(str(path)))
    names = tf.placeholder(tf.string, [None])
    iterator = tf.data.TFRecordDataset(names).make_initializable_iterator()
    record = iterator.get_next()
    with tf.Session() as sess:
        sess.run(iterator.initializer, {names: [str(tmp_path / "nope.tfrecord")]})
        with pytest.raises(tf.errors.NotFoundError, match="nope.tfrecord"):
            sess.run(record)


def test_crc32c_of_long_data_compiled_or_not(monkeypatch):
    from engine.framework import tf_record

    data = np.random.default_rng(0).integers(0, 256, 5000).astype(np.uint8).tobytes()
    compiled = tf_record.crc32c(data)
    check = 0x3AA7E87C  # of b"123456789" * 200, bit by bit from the polynomial (no table)
    assert tf_record.crc32c(b"123456789" * 200) == check
    monkeypatch.setattr(tf_record, "_COMPILED_FROM", len(data) + 1)
    assert tf_record.crc32c(data) == compiled
    assert tf_record.crc32c(b"123456789" * 200) == check


# -- tf.train.Example ------------------------------------------------------------------------


def test_example_bytes_are_tfs():
    assert four_features().SerializeToString() == EXAMPLE_SORTED
    example = tf.train.Example()
    example.features.feature["v"].int64_list.value.extend([1, 2])
    assert example.SerializeToString() == EXAMPLE_ONE


def test_example_reads_tfs_bytes_in_any_order():
    example = tf.train.Example.FromString(EXAMPLE_TF_ORDER)
    assert example == four_features()
    feature = example.features.feature
    assert feature["label"].int64_list.value == [3, -1, 300]
    assert feature["x"].float_list.value == [0.5, -2.25, float(np.float32(0.1))]
    assert feature["name"].bytes_list.value == [b"ab", b""]
    assert feature["empty"].WhichOneof("kind") == "float_list"
    assert feature["x"].HasField("float_list") and not feature["x"].HasField("int64_list")
    with pytest.raises(tf.errors.DataLossError, match="Example"):
        tf.train.Example.FromString(EXAMPLE_ONE[:-2])


# -- parsing ops -----------------------------------------------------------------------------


def test_parse_single_example_dense_sparse_and_defaults():
    features = {"x": tf.VarLenFeature(tf.float32),
                "label": tf.FixedLenFeature([3], tf.int64),
                "name": tf.FixedLenFeature([2], tf.string),
                "y": tf.FixedLenFeature([2], tf.int64, default_value=[7, 8])}
    parsed = tf.parse_single_example(EXAMPLE_TF_ORDER, features)
    assert parsed["label"].shape.as_list() == [3]
    with tf.Session() as sess:
        out = sess.run(parsed)
    np.testing.assert_array_equal(out["label"], [3, -1, 300])
    assert list(out["name"]) == [b"ab", b""]
    np.testing.assert_array_equal(out["y"], [7, 8])
    np.testing.assert_array_equal(out["x"].indices, [[0], [1], [2]])
    np.testing.assert_array_equal(out["x"].values, np.float32([0.5, -2.25, 0.1]))
    np.testing.assert_array_equal(out["x"].dense_shape, [3])


def test_parse_example_batches_and_pads_sparse_shapes():
    parsed = tf.parse_example(tf.constant([EXAMPLE_ONE, EXAMPLE_TF_ORDER]), {
        "v": tf.VarLenFeature(tf.int64), "x": tf.VarLenFeature(tf.float32)})
    with tf.Session() as sess:
        v, x = sess.run([parsed["v"], parsed["x"]])
        dense = sess.run(tf.sparse_tensor_to_dense(parsed["x"], default_value=-1.0))
    np.testing.assert_array_equal(dense, np.float32([[-1, -1, -1], [0.5, -2.25, 0.1]]))
    np.testing.assert_array_equal(v.indices, [[0, 0], [0, 1]])
    np.testing.assert_array_equal(v.values, [1, 2])
    np.testing.assert_array_equal(v.dense_shape, [2, 2])
    np.testing.assert_array_equal(x.indices, [[1, 0], [1, 1], [1, 2]])
    np.testing.assert_array_equal(x.dense_shape, [2, 3])


@pytest.mark.parametrize("features, message", [
    ({"x": tf.FixedLenFeature([2], tf.float32)}, "Key: x, Index: 0.  Number of float values "
                                                 "!= expected.  Values size: 3"),
    ({"x": tf.FixedLenFeature([3], tf.int64)}, "Key: x, Index: 0.  Data types don't match. Data "
                                               "type: float but expected type: int64"),
    ({"y": tf.FixedLenFeature([1], tf.float32)}, "Feature: y (data type: float32) is required "
                                                 "but could not be found."),
])
def test_parse_errors_name_the_key(features, message):
    parsed = tf.parse_example(tf.constant([EXAMPLE_TF_ORDER]), features)
    with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError) as info:
        sess.run(parsed)
    assert message in str(info.value)


def test_decode_csv_defaults_quotes_and_types():
    lines = tf.constant(['1,2.5,a', '3,,"b,c"', ',4,', '7,8,"x""y"'])
    columns = tf.decode_csv(lines, [[0], [1.0], ["z"]])
    assert [c.dtype for c in columns] == [tf.int32, tf.float32, tf.string]
    with tf.Session() as sess:
        a, b, c = sess.run(columns)
        picked = sess.run(tf.decode_csv(["1;2;3;4"], [[0], [0]], field_delim=";",
                                        select_cols=[1, 3]))
    np.testing.assert_array_equal(a, np.int32([1, 3, 0, 7]))
    np.testing.assert_array_equal(b, np.float32([2.5, 1.0, 4.0, 8.0]))
    assert list(c) == [b"a", b"b,c", b"z", b'x"y']
    np.testing.assert_array_equal(picked, [[2], [4]])


@pytest.mark.parametrize("line, message", [
    ("1,2", "Expect 3 fields but have 2 in record 0"),
    ("1,2,3,4", "Expect 3 fields but have 4 in record 0"),
    ("x,2,3", "Field 0 in record 0 is not a valid int32: x"),
    ("1,2,", "Field 2 is required but missing in record 0!"),
])
def test_decode_csv_errors_name_field_and_record(line, message):
    columns = tf.decode_csv([line], [[0], [0.0], tf.constant([], tf.string)])
    with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError, match=message):
        sess.run(columns)


def test_decode_raw_and_string_split():
    raw = tf.constant([b"\x01\x00\x02\x00", b"\x03\x00\x04\x00"])
    split = tf.string_split(["a b  c", "d", "a,b c"], delimiter=" ,")
    with tf.Session() as sess:
        little = sess.run(tf.decode_raw(raw, tf.int16))
        big = sess.run(tf.decode_raw(raw, tf.int16, little_endian=False))
        parts = sess.run(split)
        chars = sess.run(tf.string_split(["ab", "c"], delimiter=""))
    np.testing.assert_array_equal(little, [[1, 2], [3, 4]])
    np.testing.assert_array_equal(big, [[256, 512], [768, 1024]])
    np.testing.assert_array_equal(parts.indices, [[0, 0], [0, 1], [0, 2], [1, 0], [2, 0],
                                                  [2, 1], [2, 2]])
    assert list(parts.values) == [b"a", b"b", b"c", b"d", b"a", b"b", b"c"]
    np.testing.assert_array_equal(parts.dense_shape, [3, 3])
    assert list(chars.values) == [b"a", b"b", b"c"]
    with pytest.raises(tf.errors.InvalidArgumentError, match="element 1 has size 3 != 4"):
        tf.Session().run(tf.decode_raw(tf.constant([b"abcd", b"abc"]), tf.int32))


# -- file datasets and the transformations that open them ------------------------------------


def test_text_lines_of_several_files_with_headers_skipped(tmp_path):
    (tmp_path / "a.csv").write_bytes(b"x,y\n1,2.5\n3,4\n")
    (tmp_path / "b.csv").write_bytes(b"x,y\r\n5,6")  # CRLF, no final newline
    with gzip.open(tmp_path / "c.csv.gz", "wb") as f:
        f.write(b"x,y\n7,8\n")
    lines = tf.data.TextLineDataset([str(tmp_path / "a.csv"), str(tmp_path / "b.csv")])
    assert run_all(lines.make_one_shot_iterator().get_next()) == [
        b"x,y", b"1,2.5", b"3,4", b"x,y", b"5,6"]
    rows = (tf.data.Dataset.list_files(str(tmp_path / "*.csv"), shuffle=False)
            .flat_map(lambda name: tf.data.TextLineDataset(name).skip(1))
            .concatenate(tf.data.TextLineDataset(str(tmp_path / "c.csv.gz"), "GZIP").skip(1))
            .map(lambda line: tf.decode_csv(line, [[0], [0.0]]))
            .batch(10))
    ((x, y),) = run_all(rows.make_one_shot_iterator().get_next())
    np.testing.assert_array_equal(x, [1, 3, 5, 7])
    np.testing.assert_array_equal(y, np.float32([2.5, 4, 6, 8]))


def test_interleave_follows_tfs_documented_order():
    """The example of TF's Dataset.interleave docstring."""
    dataset = tf.data.Dataset.range(1, 6).interleave(
        lambda x: tf.data.Dataset.from_tensors(x).repeat(6), cycle_length=2, block_length=4)
    assert run_all(dataset.make_one_shot_iterator().get_next()) == [
        1, 1, 1, 1, 2, 2, 2, 2, 1, 1, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 3, 3, 4, 4, 5, 5, 5, 5, 5, 5]


def test_interleave_of_tfrecord_files_and_outer_captures(tmp_path):
    for i in range(3):
        with tf.python_io.TFRecordWriter(str(tmp_path / f"{i}.tfrecord")) as writer:
            for j in range(3):
                writer.write(f"{i}{j}".encode())
    take = tf.placeholder(tf.int64, [])
    records = tf.data.Dataset.list_files(str(tmp_path / "*.tfrecord"), shuffle=False) \
        .interleave(lambda f: tf.data.TFRecordDataset(f).take(take), cycle_length=2)
    iterator = records.make_initializable_iterator()
    element = iterator.get_next()
    out = []
    with tf.Session() as sess:
        sess.run(iterator.initializer, {take: 2})
        try:
            while True:
                out.append(sess.run(element))
        except tf.errors.OutOfRangeError:
            pass
    assert out == [b"00", b"10", b"01", b"11", b"20", b"21"]


def test_list_files_shuffles_seeded_and_reports_no_match(tmp_path):
    for name in "abcdef":
        (tmp_path / f"{name}.txt").write_text(name)
    names = tf.data.Dataset.list_files(str(tmp_path / "*.txt"), seed=3)
    first = run_all(names.make_one_shot_iterator().get_next())
    assert sorted(first) == [str(tmp_path / f"{n}.txt").encode() for n in "abcdef"]
    assert run_all(tf.data.Dataset.list_files(str(tmp_path / "*.txt"), seed=3)
                   .make_one_shot_iterator().get_next()) == first
    missing = tf.data.Dataset.list_files(str(tmp_path / "*.csv")).make_one_shot_iterator()
    with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError,
                                             match="No files matched pattern: .*csv"):
        sess.run(missing.get_next())


def test_shard_reduce_and_fixed_length_records(tmp_path):
    shard = tf.data.Dataset.range(10).shard(3, 1)
    assert run_all(shard.make_one_shot_iterator().get_next()) == [1, 4, 7]
    with pytest.raises(tf.errors.InvalidArgumentError, match="index"):
        tf.data.Dataset.range(10).shard(2, 2)
    total, count = tf.data.Dataset.range(1, 5).reduce(
        (tf.constant(0, tf.int64), tf.constant(0, tf.int64)), lambda s, x: (s[0] + x * x, s[1] + 1))
    with tf.Session() as sess:
        assert sess.run([total, count]) == [30, 4]
    (tmp_path / "f.bin").write_bytes(b"HD" + bytes(range(6)) + b"F")
    records = tf.data.FixedLengthRecordDataset(str(tmp_path / "f.bin"), 3, header_bytes=2,
                                               footer_bytes=1)
    values = tf.decode_raw(records.make_one_shot_iterator().get_next(), tf.uint8)
    assert [list(v) for v in run_all(values)] == [[0, 1, 2], [3, 4, 5]]


def test_contrib_data_transformations_are_the_datasets_own():
    drop = tf.data.Dataset.range(7).apply(tf.contrib.data.batch_and_drop_remainder(3))
    assert [list(b) for b in run_all(drop.make_one_shot_iterator().get_next())] == [
        [0, 1, 2], [3, 4, 5]]
    tf.set_random_seed(5)
    fused = tf.data.Dataset.range(6).apply(tf.data.experimental.shuffle_and_repeat(6, 2, seed=1))
    tf.set_random_seed(5)
    plain = tf.data.Dataset.range(6).shuffle(6, seed=1).repeat(2)
    first = run_all(fused.make_one_shot_iterator().get_next())
    assert first == run_all(plain.make_one_shot_iterator().get_next())
    assert sorted(first[:6]) == sorted(first[6:]) == list(range(6)) and first[:6] != first[6:]


def test_flat_map_interleave_and_reduce_eagerly(tmp_path):
    from engine.framework.eager import eager_mode

    (tmp_path / "a.txt").write_text("h\n1\n2\n")
    with eager_mode():
        repeated = tf.data.Dataset.range(1, 4).flat_map(
            lambda x: tf.data.Dataset.from_tensors(x).repeat(x))
        assert [int(v) for v in repeated] == [1, 2, 2, 3, 3, 3]
        lines = tf.data.Dataset.from_tensors(str(tmp_path / "a.txt")).interleave(
            lambda name: tf.data.TextLineDataset(name).skip(1), cycle_length=2)
        assert [bytes(v.numpy()) for v in lines] == [b"1", b"2"]
        assert int(tf.data.Dataset.range(5).reduce(tf.constant(0, tf.int64),
                                                   lambda s, x: s + x)) == 10


def test_read_and_write_file_in_a_filename_pipeline(tmp_path):
    names = [str(tmp_path / f"{i}.bin") for i in range(3)]
    with tf.Session() as sess:
        for i, name in enumerate(names):
            sess.run(tf.write_file(name, b"\x00" * i + b"end"))
    contents = tf.data.Dataset.from_tensor_slices(names).map(tf.read_file)
    assert run_all(contents.make_one_shot_iterator().get_next()) == [
        b"end", b"\x00end", b"\x00\x00end"]
    with tf.Session() as sess, pytest.raises(tf.errors.NotFoundError, match="nope.bin"):
        sess.run(tf.read_file(str(tmp_path / "nope.bin")))
