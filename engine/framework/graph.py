"""Graphs, operations and tensors with TF1 names, scopes, collections and control dependencies.

A graph only records; nothing computes here. Ops are immutable once made, which is what lets a
session plan the nodes a fetch needs once and run that plan many times.
"""

from __future__ import annotations

import contextlib
import re
import threading

from . import dtypes as _dtypes
from .default_session import get_default_session
from .tensor_shape import TensorShape

# TF's rule for op and scope names (a ':' would make tensor names ambiguous).
_VALID_NAME = re.compile(r"^[A-Za-z0-9.][A-Za-z0-9_.\\/>-]*$")
_VALID_SCOPE_PART = re.compile(r"^[A-Za-z0-9_.\\/>-]*$")


def is_valid_name(name: str) -> bool:
    """Whether ``name`` is a valid op (node) or top-level scope name: TF's rule, letters, digits
    and ``_ . - / >``, not starting with ``_ - / >``."""
    return isinstance(name, str) and _VALID_NAME.match(name) is not None


class Tensor:
    """One output of an operation: a symbolic value with a dtype and a static shape."""

    __array_priority__ = 100  # numpy defers to our reflected operators

    def __init__(self, op: Operation, index: int, dtype: _dtypes.DType, shape):
        self.op = op
        self.value_index = index
        self.dtype = dtype
        self._shape = TensorShape(shape)

    @property
    def name(self) -> str:
        return f"{self.op.name}:{self.value_index}"

    @property
    def graph(self) -> Graph:
        return self.op.graph

    @property
    def shape(self) -> TensorShape:
        return self._shape

    def get_shape(self) -> TensorShape:
        return self._shape

    def set_shape(self, shape):
        shape = TensorShape(shape)
        if not self._shape.is_compatible_with(shape):
            raise ValueError(f"Shapes {self._shape} and {shape} are incompatible")
        if shape.dims is not None:
            old = self._shape.dims or (None,) * len(shape.dims)
            self._shape = TensorShape(a if a is not None else b for a, b in zip(old, shape.dims))

    @property
    def consumers(self):
        return [op for op in self.graph._ops if self in op.inputs]

    def eval(self, feed_dict=None, session=None):
        return (session or get_default_session()).run(self, feed_dict)

    def numpy(self):
        """The value of an eager tensor or variable (see ``eager.py``); graph tensors have none."""
        return self.graph._eager_value(self)

    def __array__(self, dtype=None, copy=None):
        value = self.numpy()
        return value if dtype is None else value.astype(dtype, copy=False)

    def __repr__(self):
        return f"<tf.Tensor '{self.name}' shape={self._shape} dtype={self.dtype.name}>"

    def __str__(self):
        return f'Tensor("{self.name}", shape={self._shape}, dtype={self.dtype.name})'

    def __bool__(self):
        raise TypeError(
            "Using a `tf.Tensor` as a Python `bool` is not allowed. Use `if t is not None:` "
            "instead of `if t:` to test if a tensor is defined."
        )

    def __iter__(self):
        dims = self._shape.dims
        if dims is None or not dims or dims[0] is None:
            raise TypeError(f"Tensor {self.name} is not iterable: its first dimension is unknown.")
        return (self[i] for i in range(dims[0]))

    def __len__(self):
        dims = self._shape.dims
        if dims is None or not dims or dims[0] is None:
            raise TypeError(f"len is not well defined for tensor {self.name} of shape {self._shape}")
        return dims[0]

    __hash__ = object.__hash__


class Operation:
    """A node: an op type from the registry, its inputs, attributes and output tensors."""

    def __init__(self, graph, op_type, name, inputs, attrs, control_inputs):
        self.graph = graph
        self.type = op_type
        self.name = name
        self.inputs = list(inputs)
        self.attrs = attrs
        self.control_inputs = list(control_inputs)
        self.outputs: list[Tensor] = []
        self._id = len(graph._ops)

    def get_attr(self, name):
        return self.attrs[name]

    def run(self, feed_dict=None, session=None):
        (session or get_default_session()).run(self, feed_dict)

    def __repr__(self):
        return f"<tf.Operation '{self.name}' type={self.type}>"


class GraphKeys:
    """Standard collection names, as in TF."""

    GLOBAL_VARIABLES = "variables"
    VARIABLES = "variables"
    LOCAL_VARIABLES = "local_variables"
    TRAINABLE_VARIABLES = "trainable_variables"
    MODEL_VARIABLES = "model_variables"
    MOVING_AVERAGE_VARIABLES = "moving_average_variables"
    CONCATENATED_VARIABLES = "concatenated_variables"
    GLOBAL_STEP = "global_step"
    EVAL_STEP = "eval_step"
    LOSSES = "losses"
    REGULARIZATION_LOSSES = "regularization_losses"
    SUMMARIES = "summaries"
    UPDATE_OPS = "update_ops"
    TRAIN_OP = "train_op"
    INIT_OP = "init_op"
    LOCAL_INIT_OP = "local_init_op"
    READY_OP = "ready_op"
    SAVERS = "savers"
    ACTIVATIONS = "activations"
    WEIGHTS = "weights"
    BIASES = "biases"
    TABLE_INITIALIZERS = "table_initializer"
    QUEUE_RUNNERS = "queue_runners"
    COND_CONTEXT = "cond_context"
    RESOURCES = "resources"
    LOCAL_RESOURCES = "local_resources"


class Graph:
    """A TF1 graph: ops in creation order, unique names, scopes, collections, a random seed."""

    def __init__(self):
        self._ops: list[Operation] = []
        self._ops_by_name: dict[str, Operation] = {}
        self._names_in_use: dict[str, int] = {}
        self._name_stack = ""
        self._control_stack: list[_ControlLevel] = []
        self._collections: dict[str, list] = {}
        self._var_scope_stack: list = []
        self._var_scope_counts: dict[str, int] = {}  # variable-scope name -> times opened
        self._root_var_scope = None  # made by variables.get_variable_scope on first use
        self._variable_store: dict = {}
        self.seed = None
        self._finalized = False
        self._version = 0

    # -- naming --------------------------------------------------------------------------
    def unique_name(self, name: str, mark_as_used: bool = True) -> str:
        """TF's rule: 'mul', then 'mul_1', 'mul_2'...; case-insensitive, prefixed by the scope."""
        if self._name_stack:
            name = f"{self._name_stack}/{name}"
        key = name.lower()
        i = self._names_in_use.get(key, 0)
        if mark_as_used:
            self._names_in_use[key] = i + 1
        if i > 0:
            base = key
            while key in self._names_in_use:
                key = f"{base}_{i}"
                i += 1
            if mark_as_used:
                self._names_in_use[key] = 1
            name = f"{name}_{i - 1}"
        return name

    def get_name_scope(self) -> str:
        return self._name_stack

    @contextlib.contextmanager
    def name_scope(self, name):
        """Open a name scope; a name ending in '/' re-enters that exact scope, '' or None resets."""
        old = self._name_stack
        if name is None or name == "":
            new = ""
        elif name.endswith("/"):
            new = name[:-1]
        else:
            pattern = _VALID_SCOPE_PART if self._name_stack else _VALID_NAME
            if not pattern.match(name):
                raise ValueError(f"'{name}' is not a valid scope name. A scope name has to match "
                                 f"the pattern {pattern.pattern}")
            new = self.unique_name(name)
        self._name_stack = new
        try:
            yield (new + "/") if new else ""
        finally:
            self._name_stack = old

    # -- ops -----------------------------------------------------------------------------
    def _add_op(self, op_type, name, inputs, attrs, output_specs, output_class=None,
                exact_name=False):
        """Add an op; ``exact_name`` takes ``name`` as already made unique (by a name scope)."""
        if self._finalized:
            raise RuntimeError("Graph is finalized and cannot be modified.")
        if name.endswith("/"):  # as TF: a name scope's own name (`with name_scope(..) as scope`)
            name, exact_name = name[:-1], True
        if not _VALID_NAME.match(name if exact_name or not self._name_stack
                                 else f"{self._name_stack}/{name}"):
            raise ValueError(f"'{name}' is not a valid node name")
        if exact_name:
            if name in self._ops_by_name:
                raise ValueError(f"Duplicate node name in graph: '{name}'")
            full = name
        else:
            full = self.unique_name(name)
        input_ops = [t.op for t in inputs]
        controls = []
        for level in self._control_stack:
            # As TF: an op with an input made inside this level already runs after its control
            # inputs (through that input), and a data input needs no control edge.
            if any(op in level.made for op in input_ops):
                continue
            controls.extend(c for c in level.ops if c not in input_ops and c not in controls)
        op = Operation(self, op_type, full, inputs, attrs, controls)
        for level in self._control_stack:
            level.made.add(op)
        for i, (dtype, shape) in enumerate(output_specs):
            cls = output_class or Tensor
            op.outputs.append(cls(op, i, dtype, shape))
        self._ops.append(op)
        self._ops_by_name[full] = op
        self._version += 1
        return op

    def get_operations(self):
        return list(self._ops)

    def get_operation_by_name(self, name: str) -> Operation:
        try:
            return self._ops_by_name[name]
        except KeyError:
            raise KeyError(f"The name '{name}' refers to an Operation not in the graph.") from None

    def get_tensor_by_name(self, name: str) -> Tensor:
        op_name, _, index = name.rpartition(":")
        if not op_name or not index.isdigit():
            raise ValueError(f"The name '{name}' looks like an Operation name, not a Tensor name.")
        if op_name not in self._ops_by_name:
            raise KeyError(f"The name '{name}' refers to a Tensor which does not exist. The "
                           f"operation, '{op_name}', does not exist in the graph.")
        op = self._ops_by_name[op_name]
        if int(index) >= len(op.outputs):
            raise KeyError(f"The name '{name}' refers to a Tensor which does not exist.")
        return op.outputs[int(index)]

    def as_graph_element(self, obj):
        """Resolve a fetch or feed key: a Tensor, an Operation, a Variable or a name."""
        if isinstance(obj, Tensor | Operation):
            if obj.graph is not self:
                raise ValueError(f"{obj!r} is not an element of this graph.")
            return obj
        if isinstance(obj, str):
            return self.get_tensor_by_name(obj) if ":" in obj else self.get_operation_by_name(obj)
        raise TypeError(f"Can not convert a {type(obj).__name__} into a Tensor or Operation.")

    # -- control dependencies -------------------------------------------------------------
    @contextlib.contextmanager
    def control_dependencies(self, control_inputs):
        """Ops made inside run after ``control_inputs``; ``None`` clears the outer ones."""
        if control_inputs is None:
            saved, self._control_stack = self._control_stack, []
            try:
                yield
            finally:
                self._control_stack = saved
            return
        ops = []
        for c in control_inputs:
            c = c._as_graph_element() if hasattr(c, "_as_graph_element") else c
            if isinstance(c, Tensor):
                c = c.op
            if not isinstance(c, Operation):
                raise TypeError(f"Can not convert a {type(c).__name__} into a Tensor or "
                                "Operation.")
            if c not in ops:
                ops.append(c)
        self._control_stack.append(_ControlLevel(ops))
        try:
            yield
        finally:
            self._control_stack.pop()

    @contextlib.contextmanager
    def gradient_override_map(self, op_type_map):
        """Ops made inside whose type is a key of ``op_type_map`` differentiate with the rule
        registered (``tf.RegisterGradient``, or an op type's) under its value; an inner map wins."""
        if not all(isinstance(k, str) and isinstance(v, str) for k, v in op_type_map.items()):
            raise TypeError("op_type_map must be a dictionary mapping strings to strings")
        start = len(self._ops)
        try:
            yield
        finally:
            for op in self._ops[start:]:
                if op.type in op_type_map and not hasattr(op, "_gradient_op_type"):
                    op._gradient_op_type = op_type_map[op.type]

    # -- collections ---------------------------------------------------------------------
    def add_to_collection(self, name, value):
        self._collections.setdefault(name, []).append(value)

    def add_to_collections(self, names, value):
        for name in [names] if isinstance(names, str) else names:
            self.add_to_collection(name, value)

    def get_collection_ref(self, name):
        return self._collections.setdefault(name, [])

    def get_collection(self, name, scope=None):
        """Items of a collection; with ``scope``, only those whose name ``re.match``es it."""
        items = list(self._collections.get(name, []))
        if scope is None:
            return items
        pattern = re.compile(scope)
        return [it for it in items if getattr(it, "name", None) is not None
                and pattern.match(it.name)]

    def get_all_collection_keys(self):
        return [k for k, v in self._collections.items() if v]

    def clear_collection(self, name):
        self._collections.pop(name, None)

    # -- defaults ------------------------------------------------------------------------
    @contextlib.contextmanager
    def as_default(self):
        default_graph_stack().append(self)
        try:
            yield self
        finally:
            default_graph_stack().pop()

    def finalize(self):
        self._finalized = True

    def _eager_value(self, tensor):
        raise NotImplementedError(
            f"Cannot convert a symbolic Tensor ({tensor.name}) to a numpy array: it has a value "
            "only when a session runs it (or build it under eager execution, see tf.eager_mode).")

    @property
    def finalized(self):
        return self._finalized


class _ControlLevel:
    """One ``control_dependencies`` context: its control ops and the ops made inside it."""

    __slots__ = ("ops", "made")

    def __init__(self, ops):
        self.ops = ops
        self.made: set[Operation] = set()


class _DefaultGraphStack(threading.local):
    """Graphs entered with ``as_default`` (per thread, as in TF)."""

    def __init__(self):
        self.stack: list[Graph] = []


_state = _DefaultGraphStack()
_global_default: list[Graph] = [Graph()]  # shared by all threads, as TF's global default graph
# The eager context while ``tf.enable_eager_execution()`` is on (see eager.py); it then takes the
# global default graph's place, and graph contexts (``Graph.as_default``) still override it.
_eager_default: list = [None]


def set_eager_default(context) -> None:
    """Make the eager context (``tf.enable_eager_execution``) stand in for the global default
    graph outside graph contexts; None: back to the global default graph."""
    _eager_default[0] = context


def default_graph_stack() -> list[Graph]:
    """The graphs entered with ``as_default`` on this thread, innermost last (a Session used as a
    context manager enters its graph here too)."""
    return _state.stack


def get_default_graph() -> Graph:
    if _state.stack:
        return _state.stack[-1]
    return _global_default[0] if _eager_default[0] is None else _eager_default[0]


def reset_default_graph():
    """Replace the global default graph with a new, empty one (not inside a graph context)."""
    if _state.stack:
        raise AssertionError("Do not use tf.reset_default_graph() to clear nested graphs.")
    _global_default[0] = Graph()


def name_scope(name, default_name=None, values=None):
    """``tf.name_scope``: a scope on the default graph (or on the graph of ``values``)."""
    graph = get_default_graph()
    return graph.name_scope(name if name is not None else default_name)


def control_dependencies(control_inputs):
    return get_default_graph().control_dependencies(control_inputs)


@contextlib.contextmanager
def device(device_name_or_function):
    """``tf.device``: accepted and changes nothing. Every op runs on this process's CPU, so a
    program that pins ops to "/gpu:0" or "/cpu:0" builds the same graph and gets the same
    numbers as without the context."""
    yield


def add_to_collection(name, value):
    get_default_graph().add_to_collection(name, value)


def add_to_collections(names, value):
    get_default_graph().add_to_collections(names, value)


def get_collection(key, scope=None):
    return get_default_graph().get_collection(key, scope)


def get_collection_ref(key):
    return get_default_graph().get_collection_ref(key)
