"""``tf.data``: ``Dataset`` pipelines and the iterators that walk them (TF1 graph iterators
with ``get_next`` and ``OutOfRangeError``; eager iteration in a ``for`` loop).

- ``structure``: element structures (tuples and dicts of components) and ``TensorSpec``;
- ``dataset_ops``: ``Dataset``, its sources and transformations;
- ``iterator_ops``: ``Iterator`` (one-shot, initializable, reinitializable) and ``EagerIterator``.
"""

import types as _types

from .dataset_ops import AUTOTUNE, Dataset  # noqa: F401
from .iterator_ops import (  # noqa: F401
    EagerIterator,
    Iterator,
    get_output_shapes,
    get_output_types,
    make_initializable_iterator,
    make_one_shot_iterator,
)
from .structure import TensorSpec  # noqa: F401

#: ``tf.data.experimental``: the names tutorials pass (``AUTOTUNE``).
experimental = _types.SimpleNamespace(AUTOTUNE=AUTOTUNE)
