"""``tf.test``: TF 1.x's ``TestCase`` (a ``unittest.TestCase`` with a fresh default graph per
test, ``test_session`` / ``session`` / ``cached_session``, ``evaluate`` and the array
assertions), ``main``, ``get_temp_dir``, ``mock`` and the GPU queries (no GPU here), so that
the tests TF1 tutorials ship with their code run as they are."""

from __future__ import annotations

import contextlib
import sys
import tempfile
import unittest
from unittest import mock  # noqa: F401  (tf.test.mock)

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework import errors as _errors
from ..framework.graph import get_default_graph, reset_default_graph
from ..runtime.session import Session, get_default_session

_TEMP_DIR = None


def get_temp_dir():
    """One temporary directory for the process, as TF's (removed when the process ends)."""
    global _TEMP_DIR
    if _TEMP_DIR is None:
        _TEMP_DIR = tempfile.TemporaryDirectory(prefix="tf_test_")
    return _TEMP_DIR.name


def main(argv=None):
    """Run the ``TestCase`` classes of ``__main__`` (TF's ``tf.test.main``; unittest's
    command-line arguments)."""
    return unittest.main(argv=argv if argv is not None else sys.argv)


def is_gpu_available(cuda_only=False, min_cuda_compute_capability=None):
    return False


def gpu_device_name():
    return ""


def is_built_with_cuda():
    return False


def _is_tensor(value):
    return hasattr(value, "op") and hasattr(value, "graph")


def _evaluated(value):
    """``value`` with its tensors (at any depth of lists, tuples and dicts) replaced by their
    values in the default session, as TF's assertions evaluate them."""
    if _is_tensor(value):
        return get_default_session().run(value)
    if isinstance(value, dict):
        return {k: _evaluated(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_evaluated(v) for v in value) if not hasattr(value, "_fields") \
            else type(value)(*(_evaluated(v) for v in value))
    return value


def _numpy(value):
    return np.asarray(_evaluated(value))


class TestCase(unittest.TestCase):
    """TF 1.x's ``tf.test.TestCase``: each test starts on a fresh default graph."""

    _cached_session = None  # also for a subclass whose setUp does not call this one

    def setUp(self):
        super().setUp()
        reset_default_graph()
        self._cached_session = None

    def tearDown(self):
        if self._cached_session is not None:
            self._cached_session.close()
            self._cached_session = None
        super().tearDown()

    def get_temp_dir(self):
        return tempfile.mkdtemp(dir=get_temp_dir())

    @contextlib.contextmanager
    def session(self, graph=None, config=None, use_gpu=False, force_gpu=False):
        """A new session on ``graph`` (the default graph), installed as the default session and
        its graph as the default graph while the block runs; closed after it."""
        graph = graph if graph is not None else get_default_graph()
        sess = Session(graph=graph, config=config)
        with graph.as_default(), sess.as_default():
            try:
                yield sess
            finally:
                sess.close()

    test_session = session  # TF's name; unittest also runs it as a test, harmlessly, as TF's
    test_session.__test__ = False  # (not pytest)

    @contextlib.contextmanager
    def cached_session(self, graph=None, config=None, use_gpu=False, force_gpu=False):
        """One session for the whole test, reused by every call."""
        if self._cached_session is None:
            graph = graph if graph is not None else get_default_graph()
            self._cached_session = Session(graph=graph, config=config)
        sess = self._cached_session
        with sess.graph.as_default(), sess.as_default():
            yield sess

    def evaluate(self, tensors):
        """The values of ``tensors`` (any nesting) in the default session."""
        sess = get_default_session()
        if sess is None:
            with self.session() as sess:
                return sess.run(tensors)
        return sess.run(tensors)

    def assertAllEqual(self, a, b, msg=None):  # noqa: N802 (TF's names)
        a, b = _numpy(a), _numpy(b)
        self.assertEqual(a.shape, b.shape, f"shape mismatch: {a.shape} vs {b.shape}. {msg or ''}")
        np.testing.assert_array_equal(a, b, err_msg=msg or "")

    def assertAllClose(self, a, b, rtol=1e-6, atol=1e-6, msg=None):  # noqa: N802
        """Nested lists, tuples and dicts compared element by element, as TF's."""
        a, b = _evaluated(a), _evaluated(b)
        if isinstance(a, dict):
            self.assertEqual(set(a), set(b), msg)
            for k in a:
                self.assertAllClose(a[k], b[k], rtol, atol, msg)
            return
        if isinstance(a, (list, tuple)):
            try:  # a nested list of numbers is one array; of ragged parts, compared part by part
                a_arr, b_arr = np.array(a, dtype=float), np.array(b, dtype=float)
            except (ValueError, TypeError):
                self.assertEqual(len(a), len(b), msg)
                for x, y in zip(a, b):
                    self.assertAllClose(x, y, rtol, atol, msg)
                return
            a, b = a_arr, b_arr
        a, b = _numpy(a), _numpy(b)
        self.assertEqual(a.shape, b.shape, f"shape mismatch: {a.shape} vs {b.shape}. {msg or ''}")
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, err_msg=msg or "", equal_nan=True)

    def assertAllCloseAccordingToType(self, a, b, rtol=1e-6, atol=1e-6, float_rtol=1e-6,  # noqa: N802
                                      float_atol=1e-6, half_rtol=1e-3, half_atol=1e-3, msg=None):
        a, b = _numpy(a), _numpy(b)
        if a.dtype == np.float32 or b.dtype == np.float32:
            rtol, atol = max(rtol, float_rtol), max(atol, float_atol)
        elif a.dtype == np.float16 or b.dtype == np.float16:
            rtol, atol = max(rtol, half_rtol), max(atol, half_atol)
        self.assertAllClose(a, b, rtol, atol, msg)

    def assertNear(self, f1, f2, err, msg=None):  # noqa: N802
        self.assertTrue(abs(f1 - f2) <= err, f"{f1} != {f2} +/- {err}. {msg or ''}")

    def assertArrayNear(self, farray1, farray2, err, msg=None):  # noqa: N802
        self.assertEqual(len(farray1), len(farray2), msg)
        for f1, f2 in zip(farray1, farray2):
            self.assertNear(float(f1), float(f2), err, msg)

    def assertShapeEqual(self, np_array, tf_tensor, msg=None):  # noqa: N802
        self.assertAllEqual(np.asarray(np_array).shape, tf_tensor.get_shape().as_list(), msg)

    def assertDTypeEqual(self, target, expected_dtype):  # noqa: N802
        expected = _dtypes.as_dtype(expected_dtype).np
        self.assertEqual(np.asarray(target).dtype, expected)

    def assertAllGreater(self, a, comparison_target):  # noqa: N802
        self.assertGreater(np.min(_numpy(a)), comparison_target)

    def assertAllLess(self, a, comparison_target):  # noqa: N802
        self.assertLess(np.max(_numpy(a)), comparison_target)

    def assertAllInRange(self, target, lower_bound, upper_bound, open_lower_bound=False,  # noqa: N802
                         open_upper_bound=False):
        t = _numpy(target)
        low = t > lower_bound if open_lower_bound else t >= lower_bound
        high = t < upper_bound if open_upper_bound else t <= upper_bound
        self.assertTrue(np.all(low & high), f"{t} not in range [{lower_bound}, {upper_bound}]")

    def assertStartsWith(self, actual, expected_start, msg=None):  # noqa: N802
        self.assertTrue(actual.startswith(expected_start), msg or
                        f"{actual!r} does not start with {expected_start!r}")

    def assertRaisesOpError(self, expected_err_re_or_predicate):  # noqa: N802
        return self.assertRaisesRegex(_errors.OpError, expected_err_re_or_predicate)

    def assertRaisesWithPredicateMatch(self, exception_type, expected_err_re):  # noqa: N802
        return self.assertRaisesRegex(exception_type, expected_err_re)


__all__ = ["TestCase", "main", "get_temp_dir", "mock", "is_gpu_available", "gpu_device_name",
           "is_built_with_cuda"]
