"""``tf.train.Checkpoint`` (``tfe.Checkpoint``): object-based checkpoints, TF 1.x's eager way.

``Checkpoint(**objects)`` names the objects to save (variables, optimizers, layers, any object
holding them); ``save(file_prefix)`` writes ``file_prefix-N`` (N: the save counter, from 1)
in the Saver's format (saver.py) with the directory's ``checkpoint`` state file, and
``restore(path)`` loads one back. Values are keyed by their path through the objects, as TF
keys them: ``model/dense/kernel/.ATTRIBUTES/VARIABLE_VALUE`` for an attribute path,
``<variable's path>/.OPTIMIZER_SLOT/<optimizer's path>/<slot>/.ATTRIBUTES/VARIABLE_VALUE`` for an
optimizer's slot of a variable, ``<optimizer's path>/<name>/.ATTRIBUTES/VARIABLE_VALUE`` for
its own variables (Adam's ``beta1_power``...), ``save_counter/.ATTRIBUTES/VARIABLE_VALUE``.

The path walk follows an object's attributes (``__dict__``, private ones too, in sorted order;
lists, tuples and dicts by index or key), an optimizer's slots and own variables, and stops at
what it saw and at graphs, sessions, modules and functions. Restoring makes the slots an
optimizer will need for the saved ones (so the first ``apply_gradients`` after a restore
continues from them, as TF's deferred restoration does).

Eager variables are read and written directly; a graph's variables through ``session=`` (or
the default session) at ``save``, and ``run_restore_ops(session)`` /
``initialize_or_restore(session)`` of what ``restore`` returns. ``assert_consumed()`` checks that
every saved value found its object and every object its value.
"""

from __future__ import annotations

import os
import types

import numpy as np

from ..framework.default_session import get_default_session
from ..framework.eager import eager_mode, is_eager
from ..framework.graph import Graph, Tensor
from ..runtime.session import Session
from .checkpoint_management import get_checkpoint_state, update_checkpoint_state
from .optimizer import Optimizer
from .saver import read_checkpoint, write_checkpoint

_VALUE = ".ATTRIBUTES/VARIABLE_VALUE"
_COUNTER = f"save_counter/{_VALUE}"


def _is_variable(value):
    return isinstance(value, Tensor) and value.op.type == "VariableV2"


def _children(obj):
    if isinstance(obj, Graph | Session | types.ModuleType | types.FunctionType | types.MethodType):
        return []  # not part of a model's state
    if isinstance(obj, dict):
        return [(str(k), v) for k, v in obj.items()]
    if isinstance(obj, list | tuple):
        return [(str(i), v) for i, v in enumerate(obj)]
    attributes = getattr(obj, "__dict__", None)
    if attributes is None or isinstance(obj, type):
        return []
    return [(k.lstrip("_") or k, v) for k, v in sorted(attributes.items())
            if not k.startswith("__")]


def object_variables(roots):
    """Checkpoint key -> variable for everything reachable from ``roots`` (name -> object)."""
    found, seen, optimizers = {}, set(), []
    by_variable = {}

    def walk(obj, path):
        if id(obj) in seen or isinstance(obj, str | bytes | int | float | np.ndarray):
            return
        seen.add(id(obj))
        if _is_variable(obj):
            found[f"{path}/{_VALUE}"] = obj
            by_variable[id(obj)] = (path, obj)
            return
        if isinstance(obj, Tensor):
            return
        if isinstance(obj, Optimizer):
            optimizers.append((path, obj))
            for (name, _graph), var in obj._non_slot_dict.items():  # by the name asked for
                found[f"{path}/{name}/{_VALUE}"] = var
            return
        for name, child in _children(obj):
            walk(child, f"{path}/{name}")

    for name, obj in roots.items():
        walk(obj, name)
    for opt_path, opt in optimizers:
        for slot_name in opt.get_slot_names():
            for var_path, var in by_variable.values():
                slot = opt.get_slot(var, slot_name)
                if slot is not None:
                    found[f"{var_path}/.OPTIMIZER_SLOT/{opt_path}/{slot_name}/{_VALUE}"] = slot
    return found, optimizers, by_variable


def _values(variables, session):
    eager = {k: v for k, v in variables.items() if is_eager(v)}
    graph = {k: v for k, v in variables.items() if not is_eager(v)}
    out = {k: np.asarray(v.numpy()) for k, v in eager.items()}
    if graph:
        session = session or get_default_session()
        if session is None:
            raise ValueError("Checkpoint.save of graph variables needs session= (or a default "
                             "session)")
        out.update(zip(graph, (np.asarray(v) for v in session.run(list(graph.values())))))
    return out


class CheckpointLoadStatus:
    """What ``Checkpoint.restore`` returns (see module doc)."""

    def __init__(self, checkpoint, arrays, variables):
        self._checkpoint, self._arrays, self._variables = checkpoint, arrays, variables

    def assert_consumed(self):
        saved = set(self._arrays) - {_COUNTER}
        unmatched = sorted(saved - set(self._variables))
        unsaved = sorted(set(self._variables) - saved)
        if unmatched or unsaved:
            raise AssertionError(f"Unresolved object in checkpoint: {unmatched[:5]}; objects not "
                                 f"in the checkpoint: {unsaved[:5]}")
        return self

    def assert_existing_objects_matched(self):
        unsaved = sorted(set(self._variables) - set(self._arrays))
        if unsaved:
            raise AssertionError(f"Objects not in the checkpoint: {unsaved[:5]}")
        return self

    def run_restore_ops(self, session=None):
        """Write the saved values into graph variables (eager ones are restored already)."""
        graph = {k: v for k, v in self._variables.items() if not is_eager(v)}
        if graph:
            session = session or get_default_session()
            if session is None:
                raise ValueError("run_restore_ops of graph variables needs a session")
            for key, var in graph.items():
                if key in self._arrays:
                    session._load_variable(var, self._arrays[key])

    def initialize_or_restore(self, session=None):
        self.run_restore_ops(session)


class Checkpoint:
    """``tf.train.Checkpoint(**objects)`` (see module doc)."""

    def __init__(self, **kwargs):
        for name, obj in kwargs.items():
            if obj is None or isinstance(obj, str | int | float):
                raise ValueError(f"Checkpoint was expecting a trackable object (an object "
                                 f"holding variables) for {name!r}, got {obj!r}")
        self._roots = dict(kwargs)
        self.save_counter = 0

    def __getattr__(self, name):
        roots = self.__dict__.get("_roots", {})
        if name in roots:
            return roots[name]
        raise AttributeError(name)

    def write(self, file_prefix, session=None):
        """Write the objects' values to exactly ``file_prefix`` (no counter, no state file)."""
        variables, _, _ = object_variables(self._roots)
        arrays = _values(variables, session)
        arrays[_COUNTER] = np.array(self.save_counter, np.int64)
        directory = os.path.dirname(os.fspath(file_prefix))
        if directory:
            os.makedirs(directory, exist_ok=True)
        write_checkpoint(os.fspath(file_prefix), arrays)
        return os.fspath(file_prefix)

    def save(self, file_prefix, session=None):
        """``file_prefix-N`` with the next save counter, recorded in the state file."""
        self.save_counter += 1
        path = self.write(f"{os.fspath(file_prefix)}-{self.save_counter}", session)
        directory = os.path.dirname(path) or "."
        state = get_checkpoint_state(directory)
        earlier = [p for p in (state.all_model_checkpoint_paths if state else []) if p != path]
        update_checkpoint_state(directory, path, [*earlier, path])
        return path

    def restore(self, save_path):
        """Load ``save_path`` (None: nothing, as TF); returns a CheckpointLoadStatus."""
        if save_path is None:
            return CheckpointLoadStatus(self, {}, {})
        arrays = read_checkpoint(os.fspath(save_path))
        variables, optimizers, by_variable = object_variables(self._roots)
        self._make_saved_slots(arrays, optimizers, by_variable)
        variables, _, _ = object_variables(self._roots)
        for key, var in variables.items():
            if key in arrays and is_eager(var):
                with eager_mode():
                    var.assign(arrays[key].astype(var.dtype.as_numpy_dtype, copy=False))
        if _COUNTER in arrays:
            self.save_counter = int(arrays[_COUNTER])
        return CheckpointLoadStatus(self, arrays, variables)

    @staticmethod
    def _make_saved_slots(arrays, optimizers, by_variable):
        """Make the slots the checkpoint holds values for, before the first update does."""
        for opt_path, opt in optimizers:
            marker = f"/.OPTIMIZER_SLOT/{opt_path}/"
            wanted = [var for var_path, var in by_variable.values()
                      if any(k.startswith(var_path + marker) for k in arrays)]
            if wanted:
                if all(is_eager(v) for v in wanted):
                    with eager_mode():
                        opt._create_slots(wanted)
                else:
                    with wanted[0].graph.as_default():
                        opt._create_slots(wanted)
