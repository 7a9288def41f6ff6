"""``Session``: holds variable values and runs fetches through cached execution plans.

The first ``run`` of a set of fetches and feeds compiles a plan (see ``plan.py``); later runs of
the same set reuse it, so the per-step cost is one pass over a flat list of steps.
"""

from __future__ import annotations

import collections
from collections.abc import Mapping

import numpy as np

from ..framework.default_session import DefaultSession, get_default_session
from ..framework.default_session import stack as _session_stack
from ..framework.errors import FailedPreconditionError, InvalidArgumentError
from ..framework.graph import Operation, Tensor, default_graph_stack, get_default_graph
from ..framework.indexed_slices import IndexedSlices, IndexedSlicesValue
from ..framework.threads import blas_threads_of, invalidate, use_blas_threads
from ..ops.embedding_ops import SparseTensor, SparseTensorValue
from .allocator import keep_freed_memory
from .plan import compile_plan
from .server_lib import check_target


class SessionState:
    """What a session owns: variable values, the generators of random ops, the scratch
    buffers of update kernels and the flat buffers of a group's small variables (see
    ``update_ops.py``) and its resources (``tf.data`` iterators, keyed by their iterator
    object)."""

    def __init__(self, graph):
        self.graph = graph
        self.variables: dict[Operation, np.ndarray] = {}
        self.rngs: dict[Operation, np.random.Generator] = {}
        self.scratch: dict[tuple, list[list[np.ndarray]]] = {}
        self.flat_updates: dict[tuple, object] = {}
        self.resources: dict = {}
        #: how long an op may wait (ms; 0: forever): ConfigProto.operation_timeout_in_ms, or
        #: RunOptions.timeout_in_ms for one run. Ops that would block read it (queues).
        self.timeout_ms = 0

    def storage(self, var_op) -> np.ndarray:
        """The live array of a variable; reading one never initialized is TF's precondition error."""
        try:
            return self.variables[var_op]
        except KeyError:
            raise FailedPreconditionError(
                f"Attempting to use uninitialized value {var_op.name}: run its initializer first "
                "(e.g. sess.run(tf.global_variables_initializer()))") from None

    def rng_for(self, op) -> np.random.Generator:
        rng = self.rngs.get(op)
        if rng is None:
            graph_seed, op_seed = op.graph.seed, op.attrs.get("seed")
            if graph_seed is None and op_seed is None:
                rng = np.random.default_rng()
            else:
                rng = np.random.default_rng(
                    [0 if graph_seed is None else int(graph_seed),
                     op._id if op_seed is None else int(op_seed)])
            self.rngs[op] = rng
        return rng


# -- fetch structures ----------------------------------------------------------------------


def _flatten_fetches(fetches, graph, leaves):
    """Collect graph elements in order and return a function that rebuilds the structure."""
    if fetches is None:
        raise TypeError(f"Fetch argument None has invalid type {type(None)}")
    if isinstance(fetches, IndexedSlices):  # TF returns an IndexedSlicesValue of its parts
        parts = [fetches.values, fetches.indices, fetches.dense_shape]
        builders = [None if p is None else _flatten_fetches(p, graph, leaves) for p in parts]
        return lambda vals: IndexedSlicesValue(*[b and b(vals) for b in builders])
    if isinstance(fetches, SparseTensor):  # TF returns a SparseTensorValue of its parts
        builders = [_flatten_fetches(p, graph, leaves)
                    for p in (fetches.indices, fetches.values, fetches.dense_shape)]
        return lambda vals: SparseTensorValue(*[b(vals) for b in builders])
    if isinstance(fetches, list | tuple) and not isinstance(fetches, str):
        builders = [_flatten_fetches(f, graph, leaves) for f in fetches]
        if hasattr(fetches, "_fields"):  # namedtuple
            return lambda vals: type(fetches)(*[b(vals) for b in builders])
        kind = type(fetches) if isinstance(fetches, list | tuple) else list
        return lambda vals: kind(b(vals) for b in builders)
    if isinstance(fetches, Mapping):
        keys = list(fetches)
        builders = [_flatten_fetches(fetches[k], graph, leaves) for k in keys]
        if isinstance(fetches, collections.defaultdict):
            factory = fetches.default_factory

            def build(vals):
                out = collections.defaultdict(factory)
                out.update(zip(keys, [b(vals) for b in builders]))
                return out

            return build
        kind = type(fetches) if isinstance(fetches, dict) else dict
        return lambda vals: kind(zip(keys, [b(vals) for b in builders]))
    element = fetches._as_graph_element() if hasattr(fetches, "_as_graph_element") else fetches
    try:
        element = graph.as_graph_element(element)
    except TypeError as exc:
        raise TypeError(f"Fetch argument {fetches!r} has invalid type {type(fetches)}, must be a "
                        f"string or Tensor. ({exc})") from None
    except KeyError as exc:
        raise ValueError(f"Fetch argument {fetches!r} cannot be interpreted as a Tensor. "
                         f"({exc.args[0]})") from None
    # A repeated fetch is computed once and returned as the same object, as in TF.
    index = next((i for i, leaf in enumerate(leaves) if leaf is element), len(leaves))
    if index == len(leaves):
        leaves.append(element)
    return lambda vals: vals[index]


def _feed_value(tensor: Tensor, value):
    """Convert a fed value to the tensor's dtype as TF does (``np.asarray(value, dtype)``, so a
    float fed to an int tensor truncates) and check its shape against the tensor's."""
    if value is None:
        raise TypeError(f"The value of a feed cannot be None (feeding {tensor.name}).")
    if isinstance(value, Tensor):
        raise TypeError(f"The value of a feed cannot be a tf.Tensor object (feeding "
                        f"{tensor.name}). Acceptable feed values include Python scalars, "
                        "strings, lists, numpy ndarrays, or TensorHandles.")
    target = tensor.dtype.np
    if isinstance(value, int) and not isinstance(value, bool) and tensor.dtype.is_integer \
            and not np.iinfo(target).min <= value <= np.iinfo(target).max:
        raise TypeError(f"Type of feed value {value} with type {type(value)} is not compatible "
                        f"with Tensor type {tensor.dtype.name} of {tensor.name}. Try explicitly "
                        "setting the type of the feed tensor to a larger type (e.g. int64).")
    if np.asarray(value).dtype == object:
        raise TypeError(f"Cannot feed {type(value).__name__} value to tensor {tensor.name} "
                        f"of type {tensor.dtype.name}")
    try:
        arr = np.asarray(value, dtype=target)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"Cannot feed {value!r} to tensor {tensor.name} of type "
                         f"{tensor.dtype.name}: {exc}") from None
    if not tensor.shape.is_compatible_with(arr.shape):
        raise ValueError(f"Cannot feed value of shape {arr.shape} for Tensor '{tensor.name}', "
                         f"which has shape '{tensor.shape}'")
    return arr


def _feed_pairs(items):
    """The (key, value) pairs of a feed_dict's items, flattened as TF's ``nest.flatten_dict_items``: a
    tuple key (an ``LSTMStateTuple`` state, a tuple of placeholders) is fed the elements of a
    value of the same structure; a SparseTensor key (``tf.sparse_placeholder``) its three parts
    from a SparseTensorValue or an (indices, values, dense_shape) tuple."""
    for key, value in items:
        if isinstance(key, tuple):
            if not isinstance(value, tuple | list) or len(value) != len(key):
                size = len(value) if isinstance(value, tuple | list) else 1
                raise ValueError(f"Could not flatten dictionary. Key had {len(key)} elements, but "
                                 f"value had {size} elements. Key: {key!r}, value: {value!r}.")
            yield from _feed_pairs(zip(key, value))
            continue
        if not isinstance(key, SparseTensor):
            yield key, value
            continue
        if not isinstance(value, tuple | list | SparseTensorValue) or len(value) != 3:
            raise TypeError(f"A SparseTensor is fed a SparseTensorValue or an (indices, values, "
                            f"dense_shape) tuple, got {type(value).__name__} (feeding "
                            f"{key.values.name})")
        yield from zip((key.indices, key.values, key.dense_shape), value)


def _feed_converter(tensor: Tensor):
    """``_feed_value`` for one tensor, with the common cases decided without building shapes:
    an ndarray already of the tensor's dtype and a compatible shape is used as it is (what
    ``np.asarray`` returns for it), a Python float fed to a floating scalar becomes a 0-d array."""
    target = tensor.dtype.np
    dims = tensor.shape.dims
    fixed = None if dims is None else tuple(dims)
    float_ok = target.kind == "f" and (fixed is None or fixed == ())

    if fixed is not None and fixed[:1] == (None,) and None not in fixed[1:]:
        rank, tail = len(fixed), fixed[1:]  # a batch of any size: the common case, decided fast

        def shape_ok(shape):
            return len(shape) == rank and shape[1:] == tail
    else:
        def shape_ok(shape):
            return fixed is None or shape == fixed or (len(shape) == len(fixed) and all(
                d is None or d == n for d, n in zip(fixed, shape)))

    def convert(value):
        kind = type(value)
        if kind is np.ndarray and value.dtype == target and shape_ok(value.shape):
            return value
        if kind is float and float_ok:
            return np.asarray(value, dtype=target)
        return _feed_value(tensor, value)

    return convert


class Session:
    """``tf.Session``: ``run(fetches, feed_dict)`` with nested fetches; a context manager.

    Every run computes with the session's BLAS thread count (``config.intra_op_parallelism_threads``
    when positive, else the engine's default: see ``threads.py``), whatever the environment's
    thread variables say or other code set before the session was made, so that its numbers do
    not depend on how the process was started."""

    def __init__(self, target="", graph=None, config=None):
        check_target(target)  # '' or a tf.train.Server of this process (server_lib)
        keep_freed_memory()
        self.blas_threads = blas_threads_of(config)
        invalidate()  # a new session sets the count at its first run, whoever changed it since
        self.graph = graph or get_default_graph()
        self._state = SessionState(self.graph)
        self._timeout_ms = int(getattr(config, "operation_timeout_in_ms", 0) or 0)
        self._plans: dict = {}
        self._closed = False
        self._default_ctx = None

    # -- running -------------------------------------------------------------------------
    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        if self._closed:
            raise RuntimeError("Attempted to use a closed Session.")
        leaves: list = []
        rebuild = _flatten_fetches(fetches, self.graph, leaves)
        feeds = {}
        for key, value in _feed_pairs((feed_dict or {}).items()):
            tensor = self._feed_key(key)
            feeds[tensor] = _feed_value(tensor, value)
        plan = self.plan(leaves, feeds)
        use_blas_threads(self.blas_threads)
        self._state.timeout_ms = int(getattr(options, "timeout_in_ms", 0) or 0) or self._timeout_ms
        values = plan.run([feeds[t] for t in plan.feeds])
        return rebuild(values)

    def _feed_key(self, key) -> Tensor:
        """A feed_dict key (a Tensor, a Variable or a tensor name) as a tensor of this graph."""
        element = key._as_graph_element() if hasattr(key, "_as_graph_element") else key
        if isinstance(element, str) and ":" not in element:
            raise TypeError(f"Cannot interpret feed_dict key as Tensor: The name '{element}' "
                            "refers to an Operation, not a Tensor. Tensor names must be of the "
                            'form "<op_name>:<output_index>".')
        try:
            tensor = self.graph.as_graph_element(element)
        except (KeyError, ValueError, TypeError) as exc:
            msg = exc.args[0] if exc.args else exc
            raise TypeError(f"Cannot interpret feed_dict key as Tensor: {msg}") from None
        if not isinstance(tensor, Tensor):
            raise TypeError(f"Cannot interpret feed_dict key as Tensor: {key!r}")
        return tensor

    def plan(self, fetches, feeds=()):
        """The compiled plan for these fetches and fed tensors (made once, then cached)."""
        key = (tuple(fetches), tuple(feeds))
        plan = self._plans.get(key)
        if plan is None:
            plan = compile_plan(self._state, list(fetches), list(feeds))
            self._plans[key] = plan
        return plan

    def make_callable(self, fetches, feed_list=None):
        """A function of the feed values that runs ``fetches``; skips all per-call lookups."""
        leaves: list = []
        rebuild = _flatten_fetches(fetches, self.graph, leaves)
        feed_tensors = [self._feed_key(f) for f in (feed_list or [])]
        if len(set(feed_tensors)) != len(feed_tensors):
            raise ValueError("make_callable: a tensor appears twice in feed_list")
        plan = self.plan(leaves, feed_tensors)
        converters = [_feed_converter(t) for t in feed_tensors]
        run, n_feeds, threads = plan.run, len(feed_tensors), self.blas_threads
        if n_feeds == 1:
            (convert,) = converters

            def feed(values):
                return [convert(values[0])]
        elif n_feeds == 2:
            convert0, convert1 = converters

            def feed(values):
                return [convert0(values[0]), convert1(values[1])]
        else:
            def feed(values):
                return [c(v) for c, v in zip(converters, values)]

        def call(*feed_values):
            if self._closed:
                raise RuntimeError("Attempted to use a closed Session.")
            if len(feed_values) != n_feeds:
                raise TypeError(f"The callable takes {n_feeds} feed values, got "
                                f"{len(feed_values)}.")
            use_blas_threads(threads)
            return rebuild(run(feed(feed_values)))

        return call

    # -- state access (checkpoints, load) ------------------------------------------------
    def _load_variable(self, var, value):
        op = var.op
        self._state.variables[op] = _feed_value(var, value).copy()

    def variable_values(self) -> dict:
        """name -> current value (a copy) of every initialized variable."""
        return {op.name: arr.copy() for op, arr in self._state.variables.items()}

    # -- lifetime ------------------------------------------------------------------------
    def close(self):
        self._closed = True
        self._plans.clear()

    def as_default(self):
        return DefaultSession(self)

    def __enter__(self):
        """As TF: the session becomes the default session and its graph the default graph."""
        self._graph_ctx = self.graph.as_default()
        self._graph_ctx.__enter__()
        self._default_ctx = self.as_default()
        self._default_ctx.__enter__()
        return self

    def __exit__(self, *exc):
        self._default_ctx.__exit__(*exc)
        self._graph_ctx.__exit__(*exc)
        self.close()
        return False


class InteractiveSession(Session):
    """A session that makes itself the default session, and its graph the default graph, from
    creation until ``close()`` (as TF's, for ``t.eval()`` / ``op.run()`` in a shell)."""

    def __init__(self, target="", graph=None, config=None):
        super().__init__(target, graph, config)
        _session_stack().append(self)
        default_graph_stack().append(self.graph)

    def close(self):
        if self in _session_stack():
            _session_stack().remove(self)
            stack = default_graph_stack()
            for i in range(len(stack) - 1, -1, -1):
                if stack[i] is self.graph:
                    del stack[i]
                    break
        super().close()


__all__ = ["Session", "InteractiveSession", "get_default_session", "InvalidArgumentError"]
