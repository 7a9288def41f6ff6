"""``tf.debugging``: the run-time checks under the namespace TF 1.13+ programs name them by
(``tf.debugging.assert_equal``, ``tf.debugging.check_numerics`` ...), the same functions as the
top-level names."""

from ..ops.assertions import (  # noqa: F401
    Assert,
    assert_equal,
    assert_greater,
    assert_greater_equal,
    assert_less,
    assert_less_equal,
    assert_negative,
    assert_non_negative,
    assert_non_positive,
    assert_none_equal,
    assert_positive,
    assert_rank,
    assert_scalar,
    assert_type,
)
from ..ops.math import is_finite, is_inf, is_nan  # noqa: F401
from ..ops.numerics import check_numerics  # noqa: F401
