"""``tf.data.Dataset``: input pipelines as chains of transformations, iterated on numpy.

A dataset is a description: its element structure (``TensorSpec`` leaves, so ``get_next``
tensors have static shapes), the datasets it transforms, and the graph tensors it *captures*
(its source arrays as constants, a placeholder of ``from_tensor_slices``, a batch size given as
a tensor, the outer tensors a ``map`` function reads). Nothing computes until an iterator starts
a pass (``engine/data/iterator_ops.py``): its initializer op evaluates the captured tensors in
the session (with the feeds of that ``run``), and ``start`` returns a Python generator of
elements, flat lists of arrays, made from those values.

``map`` and ``filter`` trace their function once, as TF1 does: on placeholders of the element's
components, in the dataset's graph, at the time ``map`` is called. Each element then runs that
piece of graph as a plan of the session's own state (its variables and random streams). Eagerly
(``import engine.v2 as tf``) the function runs on each element's eager values instead, so it
may read eager variables; its result structure is known after the first element.

``shuffle`` keeps TF's buffer algorithm (a uniform pick from a buffer of ``buffer_size``
elements, refilled from the input), seeded as TF1 seeds ops: graph seed and op seed, from
``tf.set_random_seed`` and the ``seed`` argument. Each pass over a shuffled input (each epoch of
a ``repeat``) draws a new order unless ``reshuffle_each_iteration=False``; re-initializing an
iterator restarts the sequence of orders, so a seeded pipeline repeats itself. The orders are
not TF's (another random generator).

Rows of arrays (``from_tensor_slices``, shuffled, repeated, taken or skipped) are batched by
gathering each batch's rows at once, with the order and values of the element-by-element path
(a ``map`` before ``batch`` takes that path: its function runs per element).

``prefetch``, ``cache`` and ``num_parallel_calls`` change nothing here: elements are made when
``get_next`` asks for them, in one thread.
"""

from __future__ import annotations

import glob
import itertools

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework.eager import EAGER, executing_eagerly, is_eager
from ..framework.errors import InvalidArgumentError
from ..framework.graph import Tensor, TensorShape, get_default_graph
from ..framework.registry import apply
from . import structure as nest
from .functions import TracedFunction, as_tensor, function
from .iterator_ops import EagerIterator, Iterator
from .structure import TensorSpec

#: ``tf.data.experimental.AUTOTUNE``: accepted wherever a parallelism or buffer size is.
AUTOTUNE = -1
_INFINITE = -1
_ALL = 1 << 31  # a shuffle buffer holding every file name list_files found
_DEFAULT_GRAPH_SEED = 87654321  # TF's, for an op seed given without a graph seed
_DRAWS = 4096  # shuffle's random numbers drawn at a time
_eager_op_seeds = itertools.count(1)


class _Pass:
    """What one pass over a pipeline (one initialization of an iterator) knows: the values of
    the captured tensors, the session state the traced functions run in, and per shuffle the
    number of passes made over it so far."""

    def __init__(self, state, captured):
        self.state = state
        self.captured = captured
        self.epochs: dict = {}
        self.entropy: dict = {}

    def value(self, t):
        """The value of a captured tensor (eager tensors hold theirs)."""
        if is_eager(t):
            return EAGER.state.storage(t.op) if t.op.type == "VariableV2" else t._value
        return self.captured[t]

    def scalar(self, param) -> int:
        return int(self.value(param)) if isinstance(param, Tensor) else int(param)

    def next_epoch(self, node) -> int:
        if self.state is None:  # eager: a dataset object's passes continue across iterations
            node._eager_epochs += 1
            return node._eager_epochs - 1
        n = self.epochs.get(node, 0)
        self.epochs[node] = n + 1
        return n


def _param(value, name):
    """A scalar argument (batch size, count...): a Python int, or a tensor the dataset captures."""
    if hasattr(value, "_as_graph_element"):
        value = value._as_graph_element()
    if isinstance(value, Tensor):
        if value.shape.ndims not in (None, 0) or not value.dtype.is_integer:
            raise TypeError(f"{name} must be a scalar integer, got {value!r}")
        return value
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise TypeError(f"{name} must be an integer, got {value!r}")
    return int(value)


def _static(param):
    """The value of a parameter known when the graph is built (an int or a constant), else None."""
    if isinstance(param, Tensor):
        if is_eager(param) and param.op.type != "VariableV2":
            return int(param._value)
        return int(param.op.attrs["value"]) if param.op.type == "Const" else None
    return param


class Dataset(nest.HasElementSpec):
    """``tf.data.Dataset``: a source or a transformation of other datasets (see module doc)."""

    _inputs: tuple = ()
    _own_captures: tuple = ()

    def __init__(self, element_spec):
        self._structure = element_spec

    def __repr__(self):
        return f"<{type(self).__name__} element_spec={nest.describe(self._structure)}>"

    # -- iteration -----------------------------------------------------------------------
    def _captures(self) -> list:
        """Every tensor the pipeline reads, in order, once."""
        out: list = []
        stack = [self]
        while stack:
            ds = stack.pop()
            out.extend(t for t in ds._own_captures if all(t is not o for o in out))
            stack.extend(reversed(ds._inputs))
        return out

    def start(self, state, captured):
        """A new pass: a generator of elements (flat lists of arrays); ``state`` is the
        session's (None eagerly), ``captured`` maps each captured tensor to its value."""
        return self._iterate(_Pass(state, captured))

    def _iterate(self, ctx):
        raise NotImplementedError

    def _rows(self, ctx):
        """For a dataset whose elements are rows of arrays (``from_tensor_slices``, then
        ``shuffle``, ``repeat``, ``take`` or ``skip``, which only pick and order rows): the
        arrays and an iterator of row numbers, so that ``batch`` gathers a whole batch at once
        (the same values and order as element by element); None for others."""
        return None

    def __iter__(self):
        if not executing_eagerly():
            raise RuntimeError("__iter__() is only supported when eager execution is enabled: "
                               "in a graph, use make_one_shot_iterator() or "
                               "make_initializable_iterator() and run get_next().")
        return EagerIterator(self)

    def as_numpy_iterator(self):
        """The elements as numpy values (TF2's ``as_numpy_iterator``)."""
        for element in self.start(None, {}) if executing_eagerly() else iter(self):
            yield nest.pack(self._structure, [np.asarray(v) if np.ndim(v) else np.asarray(v)[()]
                                              for v in element])

    def make_one_shot_iterator(self):
        """An iterator that starts at its first ``get_next`` and cannot be re-initialized; the
        dataset may not capture placeholders (TF1's rule). Eagerly: a Python iterator."""
        if executing_eagerly():
            return EagerIterator(self)
        return Iterator(self._structure, self, one_shot=True)

    def make_initializable_iterator(self, shared_name=None):
        """An iterator whose ``initializer`` op (re)starts a pass, evaluating what the dataset
        captured (feed its placeholders to that run)."""
        if executing_eagerly():
            raise RuntimeError("dataset.make_initializable_iterator is not supported when eager "
                               "execution is enabled. Use `for element in dataset` instead.")
        return Iterator(self._structure, self, one_shot=False)

    # -- sources -------------------------------------------------------------------------
    @staticmethod
    def from_tensor_slices(tensors):
        """One element per row of the tensors (tuples and dicts of them slice together)."""
        return _TensorSlices(tensors)

    @staticmethod
    def from_tensors(tensors):
        """The tensors as one element."""
        return _Tensors(tensors)

    @staticmethod
    def range(*args, output_type=_dtypes.int64):
        """``range(stop)``, ``range(start, stop[, step])``: int64 scalars, as Python's range."""
        return _Range(*args, output_type=output_type)

    @staticmethod
    def from_generator(generator, output_types=None, output_shapes=None, args=None,
                       output_signature=None):
        """Elements from calling ``generator()`` anew for each pass (values converted to
        ``output_types``, checked against ``output_shapes``)."""
        return _FromGenerator(generator, output_types, output_shapes, args, output_signature)

    @staticmethod
    def list_files(file_pattern, shuffle=None, seed=None, name=None):
        """The names of the files matching the glob pattern(s), sorted, then shuffled (the
        default; seeded as ``shuffle``) unless ``shuffle=False``. The patterns are matched when
        a pass starts; no match raises InvalidArgumentError naming them."""
        files = _ListFiles(file_pattern)
        return files if shuffle is False else files.shuffle(_ALL, seed=seed)

    @staticmethod
    def zip(datasets):
        """Elements of several datasets side by side (a tuple or dict of them), to the shortest."""
        return _Zip(datasets)

    # -- transformations -----------------------------------------------------------------
    def batch(self, batch_size, drop_remainder=False):
        """Consecutive elements stacked along a new first dimension; the last batch is smaller
        unless ``drop_remainder``."""
        return _Batch(self, batch_size, drop_remainder)

    def padded_batch(self, batch_size, padded_shapes=None, padding_values=None,
                     drop_remainder=False):
        """``batch`` of elements of different shapes: each component padded (with 0, or
        ``padding_values``) to ``padded_shapes`` (None dims: the longest in the batch)."""
        return _Batch(self, batch_size, drop_remainder, padded=True,
                      padded_shapes=padded_shapes, padding_values=padding_values)

    def unbatch(self):
        """The rows of each element as elements (the inverse of ``batch``)."""
        return _Unbatch(self)

    def shuffle(self, buffer_size, seed=None, reshuffle_each_iteration=None):
        """Elements in random order, drawn from a buffer of ``buffer_size`` (see module doc)."""
        return _Shuffle(self, buffer_size, seed,
                        True if reshuffle_each_iteration is None else reshuffle_each_iteration)

    def repeat(self, count=None):
        """The dataset ``count`` times over (None or -1: forever)."""
        return _Repeat(self, _INFINITE if count is None else count)

    def map(self, map_func, num_parallel_calls=None, deterministic=None, name=None):
        """``map_func`` applied to each element (a tuple element is passed as arguments)."""
        return _Map(self, map_func)

    def filter(self, predicate, name=None):
        """The elements for which ``predicate`` (a scalar bool) is true."""
        return _Filter(self, predicate)

    def flat_map(self, map_func, name=None):
        """The elements of the datasets ``map_func`` returns for each element, one dataset
        after the other."""
        return _Interleave(self, map_func, 1, 1, "flat_map")

    def interleave(self, map_func, cycle_length=None, block_length=None,
                   num_parallel_calls=None, deterministic=None, name=None):
        """The datasets ``map_func`` returns for ``cycle_length`` elements at a time, taken
        ``block_length`` elements from each in turn (TF's order: an exhausted one's place is
        refilled from the next input element when the cycle comes back to it)."""
        cycle = 1 if cycle_length in (None, AUTOTUNE) else cycle_length
        return _Interleave(self, map_func, cycle, 1 if block_length is None else block_length,
                           "interleave")

    def shard(self, num_shards, index, name=None):
        """Every ``num_shards``-th element, starting at element ``index``."""
        return _Shard(self, num_shards, index)

    def reduce(self, initial_state, reduce_func, name=None):
        """``reduce_func(state, element)`` folded over the elements from ``initial_state``: the
        final state, as tensors (run in a session) or eager values."""
        return _reduce(self, initial_state, reduce_func)

    def take(self, count, name=None):
        """The first ``count`` elements (-1: all)."""
        return _Take(self, count)

    def skip(self, count, name=None):
        """All but the first ``count`` elements (-1: none)."""
        return _Skip(self, count)

    def concatenate(self, dataset):
        """This dataset's elements, then ``dataset``'s (of the same structure and dtypes)."""
        return _Concatenate(self, dataset)

    def enumerate(self, start=0):
        """``(index, element)`` pairs, the index an int64 counting from ``start``."""
        return Dataset.zip((Dataset.range(start, np.iinfo(np.int64).max), self))

    def prefetch(self, buffer_size, name=None):
        """The same dataset: elements are made when asked for, nothing runs ahead here."""
        return self

    def cache(self, filename="", name=None):
        """The same dataset: sources here are arrays already in memory."""
        return self

    def with_options(self, options, name=None):
        return self

    def apply(self, transformation_func):
        """``transformation_func(self)``, which must return a Dataset."""
        result = transformation_func(self)
        if not isinstance(result, Dataset):
            raise TypeError("`transformation_func` must return a Dataset object, got "
                            f"{type(result).__name__}")
        return result


# -- sources -------------------------------------------------------------------------------


def _component_tensors(tensors, what):
    if tensors is None:
        raise TypeError(f"{what}: the tensors must not be None")
    flat = nest.flatten(tensors)
    if not flat:
        raise ValueError(f"{what}: an element needs at least one component")
    return tensors, [as_tensor(v) for v in flat]


class _TensorSlices(Dataset):
    def __init__(self, tensors):
        structure, flat = _component_tensors(tensors, "from_tensor_slices")
        specs = []
        rows = set()
        for t in flat:
            if t.shape.ndims == 0:
                raise ValueError(f"Unbatching a tensor is only supported for rank >= 1: "
                                 f"{t.name} is a scalar")
            specs.append(TensorSpec(TensorShape(None) if t.shape.dims is None
                                    else t.shape.dims[1:], t.dtype))
            if t.shape.dims is not None and t.shape.dims[0] is not None:
                rows.add(t.shape.dims[0])
        if len(rows) > 1:
            raise ValueError("Dimensions of the components of from_tensor_slices differ: "
                             f"{[t.shape.dims and t.shape.dims[0] for t in flat]} rows")
        super().__init__(nest.pack(structure, specs))
        self._own_captures = tuple(flat)

    def _rows(self, ctx):
        arrays = [np.asarray(ctx.value(t)) for t in self._own_captures]
        lengths = {len(a) for a in arrays}
        if len(lengths) > 1:
            raise InvalidArgumentError(
                "from_tensor_slices: all components must have the same size in the 0th "
                f"dimension, got {[len(a) for a in arrays]}")
        return arrays, iter(range(lengths.pop()))

    def _iterate(self, ctx):
        return _elements_of(self._rows(ctx))


def _elements_of(rows):
    arrays, order = rows
    return ([a[i] for a in arrays] for i in order)


class _Tensors(Dataset):
    def __init__(self, tensors):
        structure, flat = _component_tensors(tensors, "from_tensors")
        super().__init__(nest.pack(structure, [nest.spec_of(t) for t in flat]))
        self._own_captures = tuple(flat)

    def _iterate(self, ctx):
        yield [np.asarray(ctx.value(t)) for t in self._own_captures]


class _Range(Dataset):
    def __init__(self, *args, output_type=_dtypes.int64):
        if not 1 <= len(args) <= 3:
            raise ValueError(f"range takes 1 to 3 arguments (stop; start, stop[, step]), got "
                             f"{len(args)}")
        params = [_param(a, "range argument") for a in args]
        if len(params) == 1:
            params = [0, params[0], 1]
        elif len(params) == 2:
            params.append(1)
        if _static(params[2]) == 0:
            raise InvalidArgumentError("range: step must not be 0")
        self._params = params
        self._dtype = _dtypes.as_dtype(output_type)
        super().__init__(TensorSpec([], self._dtype))
        self._own_captures = tuple(p for p in params if isinstance(p, Tensor))

    def _iterate(self, ctx):
        start, stop, step = (ctx.scalar(p) for p in self._params)
        if step == 0:
            raise InvalidArgumentError("range: step must not be 0")
        dtype = self._dtype.np
        for i in range(start, stop, step):
            yield [np.asarray(i, dtype)]


class _FromGenerator(Dataset):
    def __init__(self, generator, output_types, output_shapes, args, output_signature):
        if not callable(generator):
            raise TypeError("`generator` must be a Python callable.")
        if output_signature is not None:
            specs = output_signature
        else:
            if output_types is None:
                raise TypeError("from_generator needs output_types (or output_signature)")
            if output_shapes is None:
                output_shapes = nest.map_structure(lambda _: None, output_types)
            types = nest.flatten(output_types)
            shapes = nest.flatten(output_shapes) if nest.is_nested(output_types) \
                else [output_shapes]
            specs = nest.pack(output_types, [TensorSpec(s, d) for s, d in zip(shapes, types)])
        self._generator, self._args = generator, tuple(args or ())
        super().__init__(specs)

    def _iterate(self, ctx):
        specs = nest.flatten(self._structure)
        for n, item in enumerate(self._generator(*self._args)):
            item = _like(self._structure, item)
            if not nest.same_structure(item, self._structure):
                raise InvalidArgumentError(
                    f"from_generator: element {n} ({item!r}) does not have the declared "
                    f"structure {nest.describe(self._structure)}")
            flat = nest.flatten(item)
            out = []
            for value, spec in zip(flat, specs):
                arr = np.asarray(value, dtype=object if spec.dtype.is_string else spec.dtype.np)
                if not spec.shape.is_compatible_with(arr.shape):
                    raise InvalidArgumentError(
                        f"from_generator: element {n} has shape {list(arr.shape)}, which is "
                        f"incompatible with the declared shape {spec.shape}")
                out.append(arr)
            yield out


def _like(structure, item):
    """A generator's item read in the declared structure: a list where a tuple is declared is
    that tuple; lists at leaves are values."""
    if isinstance(structure, tuple) and isinstance(item, list | tuple) \
            and len(item) == len(structure):
        return tuple(_like(s, v) for s, v in zip(structure, item))
    if isinstance(structure, dict) and isinstance(item, dict):
        return {k: _like(structure[k], v) if k in structure else v for k, v in item.items()}
    return item


class _ListFiles(Dataset):
    def __init__(self, file_pattern):
        patterns = as_tensor(file_pattern)
        if not patterns.dtype.is_string or patterns.shape.ndims not in (None, 0, 1):
            raise TypeError(f"list_files: file_pattern must be a string or a vector of strings, "
                            f"got {patterns.dtype.name} of shape {patterns.shape}")
        super().__init__(TensorSpec([], _dtypes.string))
        self._own_captures = (patterns,)

    def _iterate(self, ctx):
        patterns = [p.decode() if isinstance(p, bytes) else str(p)
                    for p in np.asarray(ctx.value(self._own_captures[0])).reshape(-1)]
        names = sorted({name for p in patterns for name in glob.glob(p)})
        if not names:
            raise InvalidArgumentError(f"No files matched pattern: {', '.join(patterns)}")
        for name in names:
            out = np.empty((), dtype=object)
            out[()] = name.encode()
            yield [out]


class _Zip(Dataset):
    def __init__(self, datasets):
        if not nest.is_nested(datasets) or not all(
                isinstance(d, Dataset) for d in nest.flatten(datasets)):
            raise TypeError("Dataset.zip takes a tuple or dict of datasets")
        self._inputs = tuple(nest.flatten(datasets))
        super().__init__(nest.pack(datasets, [d._structure for d in self._inputs]))

    def _iterate(self, ctx):
        for parts in zip(*[d._iterate(ctx) for d in self._inputs]):
            yield [v for part in parts for v in part]


# -- transformations -------------------------------------------------------------------------


class _Unary(Dataset):
    def __init__(self, input_dataset, element_spec, captures=()):
        if not isinstance(input_dataset, Dataset):
            raise TypeError(f"expected a Dataset, got {type(input_dataset).__name__}")
        super().__init__(element_spec)
        self._inputs = (input_dataset,)
        self._own_captures = tuple(captures)

    @property
    def _input(self):
        return self._inputs[0]


def _tensor_params(*params):
    return [p for p in params if isinstance(p, Tensor)]


class _Batch(_Unary):
    def __init__(self, input_dataset, batch_size, drop_remainder, padded=False,
                 padded_shapes=None, padding_values=None):
        self._size = _param(batch_size, "batch_size")
        if _static(self._size) is not None and _static(self._size) <= 0:
            raise InvalidArgumentError(f"batch_size must be greater than zero, got "
                                       f"{_static(self._size)}")
        self._drop = bool(drop_remainder)
        self._padded = padded
        specs = nest.flatten(input_dataset._structure) if input_dataset._structure is not None \
            else None
        if padded:
            shapes = [s.shape for s in specs] if padded_shapes is None else [
                TensorShape(s) for s in (nest.flatten(padded_shapes)
                                         if nest.is_nested(padded_shapes) else [padded_shapes])]
            if len(shapes) != len(specs):
                raise ValueError("padded_shapes must have the structure of the elements")
            values = [0] * len(specs) if padding_values is None else (
                nest.flatten(padding_values) if nest.is_nested(padding_values)
                else [padding_values])
            self._pad_shapes = shapes
            self._pad_values = [np.asarray(v, dtype=s.dtype.np) for v, s in zip(values, specs)]
        leading = _static(self._size) if self._drop else None
        out = None
        if specs is not None:
            shapes = self._pad_shapes if padded else [s.shape for s in specs]
            out = nest.pack(input_dataset._structure, [
                TensorSpec(TensorShape(None) if shape.dims is None else [leading, *shape.dims],
                           s.dtype) for s, shape in zip(specs, shapes)])
        super().__init__(input_dataset, out, _tensor_params(self._size))

    def _iterate(self, ctx):
        size = ctx.scalar(self._size)
        if size <= 0:
            raise InvalidArgumentError(f"batch_size must be greater than zero, got {size}")
        source = None if self._padded else self._input._rows(ctx)
        if source is not None:  # rows of arrays: gather each batch at once
            arrays, order = source
            while True:
                batch = list(itertools.islice(order, size))
                if not batch or (len(batch) < size and self._drop):
                    return
                yield [a[batch] for a in arrays]
        rows = []
        for element in self._input._iterate(ctx):
            rows.append(element)
            if len(rows) == size:
                yield self._stack(rows)
                rows = []
        if rows and not self._drop:
            yield self._stack(rows)

    def _stack(self, rows):
        out = []
        for i, parts in enumerate(zip(*rows)):
            parts = [np.asarray(p) for p in parts]
            if self._padded:
                out.append(self._pad(i, parts))
                continue
            first = parts[0].shape
            for n, p in enumerate(parts):
                if p.shape != first:
                    raise InvalidArgumentError(
                        f"Cannot batch tensors with different shapes in component {i}. First "
                        f"element had shape {list(first)} and element {n} had shape "
                        f"{list(p.shape)}. (padded_batch pads them.)")
            out.append(np.stack(parts))
        return out

    def _pad(self, i, parts):
        shape = self._pad_shapes[i]
        ndim = parts[0].ndim
        if any(p.ndim != ndim for p in parts):
            raise InvalidArgumentError(f"padded_batch: component {i} has elements of different "
                                       "ranks")
        longest = [max(p.shape[d] for p in parts) for d in range(ndim)]
        target = longest if shape.dims is None else [
            n if d is None else d for d, n in zip(shape.dims, longest)]
        batch = np.full([len(parts), *target], self._pad_values[i], dtype=parts[0].dtype)
        for n, p in enumerate(parts):
            if any(a > b for a, b in zip(p.shape, target)):
                raise InvalidArgumentError(
                    f"padded_batch: component {i} of element {n} has shape {list(p.shape)}, "
                    f"larger than the padded shape {target}")
            batch[(n, *(slice(0, d) for d in p.shape))] = p
        return batch


class _Unbatch(_Unary):
    def __init__(self, input_dataset):
        specs = nest.flatten(input_dataset._structure)
        if any(s.shape.ndims == 0 for s in specs):
            raise ValueError("Cannot unbatch an input with scalar components.")
        super().__init__(input_dataset, nest.pack(input_dataset._structure, [
            TensorSpec(None if s.shape.dims is None else s.shape.dims[1:], s.dtype)
            for s in specs]))

    def _iterate(self, ctx):
        for element in self._input._iterate(ctx):
            arrays = [np.asarray(v) for v in element]
            for i in range(min(len(a) for a in arrays)):
                yield [a[i] for a in arrays]


class _Reordering(_Unary):
    """A transformation that picks and orders the input's elements without looking into them:
    ``_stream(ctx, items)`` works on ``items()``, a fresh iterator over the input's elements,
    or over its row numbers when the input is rows of arrays (see ``Dataset._rows``)."""

    def _stream(self, ctx, items):
        raise NotImplementedError

    def _rows(self, ctx):
        inner = self._input._rows(ctx)
        if inner is None:
            return None
        arrays, first = inner
        pending = [first]

        def items():
            return pending.pop() if pending else self._input._rows(ctx)[1]

        return arrays, self._stream(ctx, items)

    def _iterate(self, ctx):
        rows = self._rows(ctx)
        if rows is not None:
            return _elements_of(rows)
        return self._stream(ctx, lambda: self._input._iterate(ctx))


class _Shuffle(_Reordering):
    def __init__(self, input_dataset, buffer_size, seed, reshuffle):
        self._buffer = _param(buffer_size, "buffer_size")
        if _static(self._buffer) is not None and _static(self._buffer) <= 0:
            raise InvalidArgumentError(f"buffer_size must be greater than zero, got "
                                       f"{_static(self._buffer)}")
        self._reshuffle = bool(reshuffle)
        self._seeds = _seeds(seed)
        self._eager_epochs = 0
        super().__init__(input_dataset, input_dataset._structure, _tensor_params(self._buffer))

    def _rng(self, ctx):
        epoch = ctx.next_epoch(self) if self._reshuffle else 0
        seeds = self._seeds
        if seeds is None:  # unseeded: fresh entropy per pass (per iterator initialization)
            seeds = ctx.entropy.setdefault(self, tuple(np.random.SeedSequence().entropy
                                                       .to_bytes(16, "little")))
        return np.random.default_rng([*seeds, epoch])

    def _stream(self, ctx, items):
        size = ctx.scalar(self._buffer)
        if size <= 0:
            raise InvalidArgumentError(f"buffer_size must be greater than zero, got {size}")
        rng = self._rng(ctx)
        buffer = []
        uniform = []  # uniform draws in [0, 1), made in blocks; one picks a buffer slot
        for item in items():
            if len(buffer) < size:
                buffer.append(item)
                continue
            if not uniform:
                uniform = rng.random(_DRAWS).tolist()
            i = int(uniform.pop() * len(buffer))
            yield buffer[i]
            buffer[i] = item
        while buffer:
            if not uniform:
                uniform = rng.random(_DRAWS).tolist()
            i = int(uniform.pop() * len(buffer))
            buffer[i], buffer[-1] = buffer[-1], buffer[i]
            yield buffer.pop()


def _seeds(op_seed):
    """TF1's (graph seed, op seed) of an op made now (``random_seed.get_seed``); None when
    neither is set (then every pass draws fresh entropy)."""
    graph = get_default_graph()
    graph_seed = graph.seed
    if graph_seed is None and op_seed is None:
        return None
    if graph_seed is None:
        return (_DEFAULT_GRAPH_SEED, int(op_seed))
    if op_seed is None:
        op_seed = next(_eager_op_seeds) if graph is EAGER else len(graph._ops)
    return (int(graph_seed), int(op_seed))


class _Counted(_Reordering):
    """A transformation of the elements by a count (an int or a scalar tensor)."""

    def __init__(self, input_dataset, count):
        self._count = _param(count, "count")
        super().__init__(input_dataset, input_dataset._structure, _tensor_params(self._count))


class _Repeat(_Counted):

    def _stream(self, ctx, items):
        count = ctx.scalar(self._count)
        epoch = 0
        while count < 0 or epoch < count:
            empty = True
            for item in items():
                empty = False
                yield item
            if empty:  # an empty input repeated forever is empty, as in TF
                return
            epoch += 1


class _Take(_Counted):

    def _stream(self, ctx, items):
        count = ctx.scalar(self._count)
        return items() if count < 0 else itertools.islice(items(), count)


class _Skip(_Counted):

    def _stream(self, ctx, items):
        count = ctx.scalar(self._count)
        stream = items()
        if count < 0:
            for _ in stream:
                pass
            return iter(())
        return itertools.islice(stream, count, None)


class _Concatenate(Dataset):
    def __init__(self, first, second):
        a, b = first._structure, second._structure
        if not nest.same_structure(a, b) or [s.dtype for s in nest.flatten(a)] != \
                [s.dtype for s in nest.flatten(b)]:
            raise TypeError(f"Two datasets to concatenate have different types "
                            f"{nest.describe(a)} and {nest.describe(b)}")
        merged = [TensorSpec(s.shape if s.shape == t.shape else _common_shape(s.shape, t.shape),
                             s.dtype) for s, t in zip(nest.flatten(a), nest.flatten(b))]
        super().__init__(nest.pack(a, merged))
        self._inputs = (first, second)

    def _iterate(self, ctx):
        for ds in self._inputs:
            yield from ds._iterate(ctx)


def _common_shape(a, b):
    if a.dims is None or b.dims is None or len(a.dims) != len(b.dims):
        return TensorShape(None)
    return TensorShape([x if x == y else None for x, y in zip(a.dims, b.dims)])


# -- functions of elements (map, filter, flat_map, interleave, reduce) ------------------------


class _Map(_Unary):
    def __init__(self, input_dataset, fn):
        self._fn = function(fn, input_dataset, "map")
        super().__init__(input_dataset, self._fn.structure, self._fn.captures)

    def _iterate(self, ctx):
        fn = self._fn
        for element in self._input._iterate(ctx):
            yield fn(ctx, element)


class _Filter(_Unary):
    def __init__(self, input_dataset, predicate):
        self._fn = function(predicate, input_dataset, "filter")
        spec = self._fn.structure
        if spec is not None and (not isinstance(spec, TensorSpec) or not spec.dtype.is_bool
                                 or spec.shape.ndims not in (None, 0)):
            raise ValueError(f"`predicate` return type must be convertible to a scalar boolean "
                             f"tensor. Was {nest.describe(spec)}.")
        super().__init__(input_dataset, input_dataset._structure, self._fn.captures)

    def _iterate(self, ctx):
        fn = self._fn
        for element in self._input._iterate(ctx):
            keep = fn(ctx, element)
            if len(keep) != 1 or keep[0].size != 1 or keep[0].dtype != np.bool_:
                raise InvalidArgumentError("filter: the predicate must return a scalar bool")
            if keep[0].reshape(()):
                yield element


class _Interleave(_Unary):
    def __init__(self, input_dataset, fn, cycle_length, block_length, what):
        self._cycle = _param(cycle_length, "cycle_length")
        self._block = _param(block_length, "block_length")
        for value, name in ((self._cycle, "cycle_length"), (self._block, "block_length")):
            if _static(value) is not None and _static(value) <= 0:
                raise InvalidArgumentError(f"{name} must be greater than zero, got "
                                           f"{_static(value)}")
        self._fn = function(fn, input_dataset, what, returns_dataset=True)
        super().__init__(input_dataset, self._fn.structure,
                         [*self._fn.captures, *_tensor_params(self._cycle, self._block)])

    def _open(self, ctx, element):
        dataset, captured = self._fn(ctx, element)
        return dataset._iterate(_Pass(ctx.state, captured))

    def _iterate(self, ctx):
        cycle, block = ctx.scalar(self._cycle), ctx.scalar(self._block)
        if cycle <= 0 or block <= 0:
            raise InvalidArgumentError(f"cycle_length and block_length must be greater than "
                                       f"zero, got {cycle} and {block}")
        inputs = self._input._iterate(ctx)
        slots = [None] * cycle
        index = taken = opened = 0
        end_of_input = False
        while not end_of_input or opened:  # TF's InterleaveDatasetOp, step for step
            if slots[index] is not None:
                element = next(slots[index], None)
                if element is not None:
                    yield element
                    taken += 1
                    if taken == block:
                        taken, index = 0, (index + 1) % cycle
                    continue
                slots[index] = None
                opened -= 1
                taken, index = 0, (index + 1) % cycle
            elif not end_of_input:
                element = next(inputs, None)
                if element is None:
                    end_of_input = True
                else:
                    slots[index] = self._open(ctx, element)
                    opened += 1
            else:
                taken, index = 0, (index + 1) % cycle


class _Shard(_Unary):
    def __init__(self, input_dataset, num_shards, index):
        self._shards, self._index = _param(num_shards, "num_shards"), _param(index, "index")
        shards, at = _static(self._shards), _static(self._index)
        if shards is not None and shards <= 0:
            raise InvalidArgumentError(f"num_shards must be greater than zero, got {shards}")
        if shards is not None and at is not None and not 0 <= at < shards:
            raise InvalidArgumentError(f"index must be in [0, num_shards): got index {at} of "
                                       f"{shards} shards")
        super().__init__(input_dataset, input_dataset._structure,
                         _tensor_params(self._shards, self._index))

    def _iterate(self, ctx):
        shards, at = ctx.scalar(self._shards), ctx.scalar(self._index)
        if shards <= 0 or not 0 <= at < shards:
            raise InvalidArgumentError(f"shard: index {at} must be in [0, num_shards = {shards})")
        return itertools.islice(self._input._iterate(ctx), at, None, shards)


def _reduce(dataset, initial_state, reduce_func):
    state_flat = [as_tensor(v) for v in nest.flatten(initial_state)]
    state_structure = nest.pack(initial_state, [nest.spec_of(t) for t in state_flat])
    if executing_eagerly():  # Python's fold over the eager elements
        state = initial_state
        for element in dataset:
            state = reduce_func(state, element)
        return state
    fn = TracedFunction(reduce_func, (state_structure, dataset._structure), "reduce")
    if [s.dtype for s in nest.flatten(fn.structure)] != [t.dtype for t in state_flat]:
        raise TypeError(f"reduce_func must return a state of the initial state's types "
                        f"{nest.describe(state_structure)}, got {nest.describe(fn.structure)}")
    n = len(state_flat)

    def fold(state, captured):
        ctx = _Pass(state, captured)
        values = [np.asarray(captured[t]) for t in state_flat]
        for element in dataset._iterate(ctx):
            values = fn(ctx, [*values, *element])
        return tuple(values) if n > 1 else values[0]

    captures = [*state_flat, *(t for t in (*fn.captures, *dataset._captures())
                               if all(t is not s for s in state_flat))]
    out = apply("ReduceDataset", captures, name="ReduceDataset", fold=fold,
                specs=tuple((s.dtype, s.shape) for s in nest.flatten(fn.structure)))
    return nest.pack(fn.structure, [out] if isinstance(out, Tensor) else list(out))
