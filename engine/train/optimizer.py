"""``tf.train.Optimizer``: the base of every optimizer, with TF1's slots and error messages.

An optimizer turns ``(gradient, variable)`` pairs into update ops. Its state lives in *slots*,
engine variables made per trained variable and keyed by the variable's name (``get_slot(W, "m")``
is ``W/Adam:0``), and in non-slot variables shared by all of them (Adam's ``beta1_power``).

A subclass implements TF1's hooks:

- ``_create_slots(var_list)``: make slots with ``_zeros_slot`` / ``_get_or_make_slot_with_initializer``;
- ``_prepare()``: turn hyperparameters into tensors (called once per ``apply_gradients``);
- ``_apply_dense(grad, var)``: return the op that updates ``var`` (and its slots);
- ``_apply_sparse(grad, var)``: the same for an ``IndexedSlices`` gradient (a lookup's), whose
  repeated indices ``_apply_sparse_duplicate_indices`` has summed (TF's
  ``_deduplicate_indexed_slices``); only the rows named should change, unless TF's formula says
  otherwise. ``self._update`` given IndexedSlices runs the op's sparse form;
- ``_finish(update_ops, name_scope)``: optional, e.g. Adam's beta-power updates.

Writes go through ``self._update(...)`` (a registered kernel, see ``runtime/update_ops.py`` and
``runtime/sparse_update_ops.py``) or
``self._assign`` / ``_assign_add`` / ``_assign_sub``, so that ``apply_gradients(..., gate=g)`` can
make every write of a step conditional on the boolean scalar tensor ``g``. A complete optimizer::

    class SignSGD(tf.train.Optimizer):
        '''var -= lr * sign(grad), with a momentum slot "m" kept for illustration.'''

        def __init__(self, learning_rate, beta=0.9, use_locking=False, name="SignSGD"):
            super().__init__(use_locking, name)
            self._lr, self._beta = learning_rate, beta

        def _create_slots(self, var_list):
            for v in var_list:
                self._zeros_slot(v, "m", self._name)

        def _prepare(self):
            self._lr_t = tf.convert_to_tensor(self._call_if_callable(self._lr), name="lr")

        def _apply_dense(self, grad, var):
            m = self.get_slot(var, "m")
            new_m = self._assign(m, self._beta * m + (1 - self._beta) * grad)
            step = tf.cast(self._lr_t, var.dtype) * tf.sign(new_m)
            return self._assign_sub(var, step)
"""

from __future__ import annotations

from collections.abc import Mapping, MappingView

from ..autodiff.gradients import gradients
from ..framework import dtypes as _dtypes
from ..framework.graph import GraphKeys, Tensor, get_default_graph
from ..framework.indexed_slices import IndexedSlices
from ..framework.registry import get_op
from ..ops.core import convert_to_tensor, group
from ..ops.initializers import zeros_initializer
from ..ops.math import cast
from ..ops.sparse import unique_row_sum
from ..ops.variables import Variable, assign_add
from ..runtime.sparse_update_ops import sparse_update
from ..runtime.update_ops import as_gate, gated_assign, gated_assign_add, gated_assign_sub, update
from .slot_creator import create_slot_with_initializer

_VALID_DTYPES = (_dtypes.float32, _dtypes.float64, _dtypes.float16)


def _var_key(var):
    """Slots are keyed by the variable's graph and name, never by position or identity."""
    return (var.op.graph, var.op.name)


def _is_variable(v):
    return isinstance(v, Tensor) and v.op.type == "VariableV2"


def _tensor_str(t):
    """TF's ``str(tensor)``: ``Tensor("add:0", shape=(), dtype=float32)``."""
    if isinstance(t, Variable):
        return repr(t)
    if isinstance(t, Tensor):
        return f'Tensor("{t.name}", shape={t.shape}, dtype={t.dtype.name})'
    return str(t)


def _deduplicate_indexed_slices(values, indices):
    """TF's: (values summed per distinct index, the distinct indices), as one op on one sort
    (``unique_row_sum``; TF's unique + unsorted_segment_sum, its indices ascending)."""
    return unique_row_sum(values, indices)


def cast_to(t, dtype):
    """``math_ops.cast``: a no-op when the dtype already matches."""
    return t if t.dtype == dtype else cast(t, dtype)


class Optimizer:
    """Base class of optimizers (TF1's ``tf.train.Optimizer``); see the module docstring."""

    GATE_NONE = 0
    GATE_OP = 1
    GATE_GRAPH = 2

    def __init__(self, use_locking, name):
        if not name:
            raise ValueError("Must specify the optimizer name")
        self._use_locking = use_locking
        self._name = name
        self._slots: dict[str, dict] = {}
        self._non_slot_dict: dict = {}
        self._gate = None

    def get_name(self):
        return self._name

    # -- the public TF1 API -----------------------------------------------------------------
    def minimize(self, loss, global_step=None, var_list=None, gate_gradients=GATE_OP,
                 aggregation_method=None, colocate_gradients_with_ops=False, name=None,
                 grad_loss=None):
        """``compute_gradients`` then ``apply_gradients``; an op that does one step."""
        grads_and_vars = self.compute_gradients(
            loss, var_list=var_list, gate_gradients=gate_gradients,
            aggregation_method=aggregation_method,
            colocate_gradients_with_ops=colocate_gradients_with_ops, grad_loss=grad_loss)
        vars_with_grad = [v for g, v in grads_and_vars if g is not None]
        if not vars_with_grad:
            raise ValueError(
                "No gradients provided for any variable, check your graph for ops that do not "
                f"support gradients, between variables {[str(v) for _, v in grads_and_vars]} "
                f"and loss {_tensor_str(loss)}.")
        return self.apply_gradients(grads_and_vars, global_step=global_step, name=name)

    def compute_gradients(self, loss, var_list=None, gate_gradients=GATE_OP,
                          aggregation_method=None, colocate_gradients_with_ops=False,
                          grad_loss=None):
        """[(gradient or None, variable)] for ``var_list`` (default: the trainable variables).

        ``loss`` may also be a list of tensors with ``grad_loss`` a list of weights, exactly as
        ``gradients``' ys and grad_ys.
        """
        if callable(loss) and not isinstance(loss, Tensor):
            loss = loss()
        if gate_gradients not in (self.GATE_NONE, self.GATE_OP, self.GATE_GRAPH):
            raise ValueError("gate_gradients must be one of: Optimizer.GATE_NONE, "
                             f"Optimizer.GATE_OP, Optimizer.GATE_GRAPH.  Not {gate_gradients}")
        losses = list(loss) if isinstance(loss, list | tuple) else [loss]
        self._assert_valid_dtypes(losses)
        if grad_loss is not None:
            self._assert_valid_dtypes(
                [g for g in (grad_loss if isinstance(grad_loss, list | tuple) else [grad_loss])
                 if isinstance(g, Tensor)])
        if var_list is None:
            graph = losses[0].graph if isinstance(losses[0], Tensor) else get_default_graph()
            var_list = graph.get_collection(GraphKeys.TRAINABLE_VARIABLES)
        else:
            var_list = _flatten(var_list)
        if not var_list:
            raise ValueError("No variables to optimize.")
        for v in var_list:
            if not isinstance(v, Tensor):
                raise NotImplementedError(f"Trying to optimize unsupported type {v!r}")
        grads = gradients(loss, var_list, grad_ys=grad_loss, aggregation_method=aggregation_method)
        grads_and_vars = list(zip(grads, var_list))
        self._assert_valid_dtypes([v for g, v in grads_and_vars if g is not None])
        return grads_and_vars

    def apply_gradients(self, grads_and_vars, global_step=None, name=None, gate=None):
        """An op that applies the gradients, then increments ``global_step`` once if given.

        None gradients are skipped; slots are made on first use. With ``gate`` (a boolean
        scalar tensor) every write of the update (variables, slots, non-slot state such as
        Adam's beta powers) happens only when the gate is True at run time; ``global_step``
        still increments, since the training step took place.
        """
        grads_and_vars = tuple(grads_and_vars)
        if not grads_and_vars:
            raise ValueError("No variables provided.")
        converted = []
        for g, v in grads_and_vars:
            if isinstance(g, IndexedSlices):
                g = IndexedSlices(convert_to_tensor(g.values), convert_to_tensor(g.indices),
                                  g.dense_shape)
            elif g is not None:
                try:
                    g = convert_to_tensor(g)
                except (TypeError, ValueError):
                    raise TypeError("Gradient must be convertible to a Tensor or IndexedSlices, "
                                    f"or None: {g}") from None
            if not isinstance(v, Tensor):
                raise NotImplementedError(f"Trying to optimize unsupported type {v!r}")
            converted.append((g, v))
        var_list = [v for g, v in converted if g is not None]
        if not var_list:
            raise ValueError("No gradients provided for any variable: "
                             f"{[str(v) for _, v in converted]}.")
        for v in var_list:
            if not _is_variable(v):
                raise NotImplementedError(f"Trying to update a Tensor {v!r}")
        graph = var_list[0].graph
        with graph.as_default(), graph.control_dependencies(None):
            self._create_slots(var_list)
        with graph.as_default(), graph.name_scope(name or self._name) as scope:
            self._gate = None if gate is None else as_gate(gate)
            first_op = len(graph.get_operations())
            try:
                self._prepare()
                update_ops = []
                for grad, var in converted:
                    if grad is None:
                        continue
                    with graph.name_scope("update_" + var.op.name):
                        if isinstance(grad, IndexedSlices):
                            update = self._apply_sparse_duplicate_indices(grad, var)
                        else:
                            update = self._apply_dense(grad, var)
                        if var.constraint is not None:  # TF: projected after its update
                            with graph.control_dependencies([update]):
                                update = self._assign(var, var.constraint(var))
                        update_ops.append(update)
                # As TF 1.x: the returned op is named the scope itself ("GradientDescent", the
                # name programs look up), the updates' group "update" inside it when a
                # global step's increment follows them.
                finish = self._finish(update_ops, scope if global_step is None else "update")
                if self._gate is not None:
                    self._check_all_writes_gated(graph.get_operations()[first_op:])
            finally:
                self._gate = None
            if global_step is None:
                apply_updates = finish
            else:
                with graph.control_dependencies([finish]):
                    apply_updates = assign_add(global_step, 1, name=scope)
            if isinstance(apply_updates, Tensor):
                apply_updates = apply_updates.op
        train_op = graph.get_collection_ref(GraphKeys.TRAIN_OP)
        if apply_updates not in train_op:
            train_op.append(apply_updates)
        return apply_updates

    def get_slot(self, var, name):
        """The slot ``name`` made for ``var``, or None."""
        named_slots = self._slots.get(name)
        if not named_slots:
            return None
        return named_slots.get(_var_key(var))

    def get_slot_names(self):
        return sorted(self._slots)

    def variables(self):
        """Every variable this optimizer made in the default graph (slots and non-slots), by name."""
        graph = get_default_graph()
        found = [v for v in self._non_slot_variables() if v.graph is graph]
        for slots in self._slots.values():
            found.extend(s for s in slots.values() if s.graph is graph)
        return sorted(found, key=lambda v: v.name)

    # -- hooks for subclasses ---------------------------------------------------------------
    def _create_slots(self, var_list):
        pass

    def _prepare(self):
        pass

    def _apply_dense(self, grad, var):
        raise NotImplementedError(f"{type(self).__name__} does not implement _apply_dense")

    def _apply_sparse_duplicate_indices(self, grad, var):
        """Sum the rows of repeated indices, then ``_apply_sparse`` (TF's default)."""
        summed_values, unique_indices = _deduplicate_indexed_slices(grad.values, grad.indices)
        return self._apply_sparse(IndexedSlices(summed_values, unique_indices, grad.dense_shape),
                                  var)

    def _apply_sparse(self, grad, var):
        raise NotImplementedError(f"{type(self).__name__} does not implement _apply_sparse")

    def _finish(self, update_ops, name_scope):
        return group(*update_ops, name=name_scope)

    # -- writes that honour the gate ------------------------------------------------------
    def _update(self, op_type, grad, hyper=(), attrs=None, **refs):
        """A registered update op (``ApplyAdam`` ...) writing ``refs``, gated if a gate is set;
        for an IndexedSlices ``grad``, its sparse form ``"Sparse" + op_type`` on the rows named
        (so an optimizer whose sparse formula is its dense one per row sets
        ``_apply_sparse = _apply_dense``)."""
        if isinstance(grad, IndexedSlices):
            return sparse_update("Sparse" + op_type, grad.values, grad.indices, hyper,
                                 gate=self._gate, attrs=attrs, **refs)
        return update(op_type, grad, hyper, gate=self._gate, attrs=attrs, **refs)

    def _assign(self, ref, value):
        return gated_assign(ref, value, self._gate)

    def _assign_add(self, ref, value):
        return gated_assign_add(ref, value, self._gate)

    def _assign_sub(self, ref, value):
        return gated_assign_sub(ref, value, self._gate)

    def _check_all_writes_gated(self, ops):
        for op in ops:
            if not get_op(op.type).mutates or op.attrs.get("gated"):
                continue
            ref = op.attrs.get("ref")
            if ref is not None and getattr(ref, "initializer", None) is op:
                continue
            raise NotImplementedError(
                f"{type(self).__name__} writes {ref.name if ref is not None else op.name} with "
                f"an ungated {op.type} op ({op.name}); use self._update/_assign/_assign_add/"
                "_assign_sub so that apply_gradients(gate=...) can skip it")

    # -- hyperparameters ------------------------------------------------------------------
    @staticmethod
    def _call_if_callable(param):
        return param() if callable(param) and not isinstance(param, Tensor) else param

    def _hyper_tensor(self, value, name):
        return convert_to_tensor(self._call_if_callable(value), name=name)

    @staticmethod
    def _assert_valid_dtypes(tensors):
        for t in tensors:
            dtype = t.dtype
            if dtype not in _VALID_DTYPES:
                raise ValueError(f"Invalid type {dtype!r} for {t.name}, expected: "
                                 f"[{', '.join(repr(d) for d in _VALID_DTYPES)}].")

    # -- slots ----------------------------------------------------------------------------
    def _slot_dict(self, slot_name):
        return self._slots.setdefault(slot_name, {})

    def _get_or_make_slot_with_initializer(self, var, initializer, shape, dtype, slot_name,
                                           op_name):
        """The slot ``slot_name`` of ``var``, made from ``initializer(shape, dtype)`` if new."""
        named_slots = self._slot_dict(slot_name)
        key = _var_key(var)
        if key not in named_slots:
            named_slots[key] = create_slot_with_initializer(var, initializer, shape, dtype,
                                                            op_name)
        return named_slots[key]

    def _get_or_make_slot(self, var, val, slot_name, op_name):
        """The slot ``slot_name`` of ``var``, made with initial value ``val`` (a tensor) if new."""
        return self._get_or_make_slot_with_initializer(
            var, lambda shape, dtype: val, val.shape, val.dtype, slot_name, op_name)

    def _zeros_slot(self, var, slot_name, op_name):
        return self._get_or_make_slot_with_initializer(
            var, zeros_initializer(), var.shape, var.dtype, slot_name, op_name)

    # -- non-slot variables ---------------------------------------------------------------
    def _create_non_slot_variable(self, initial_value, name, colocate_with):
        """A variable shared by all of this optimizer's variables in one graph (Adam's beta powers)."""
        graph = colocate_with.graph
        key = (name, graph)
        v = self._non_slot_dict.get(key)
        if v is None:
            with graph.as_default(), graph.control_dependencies(None):
                v = Variable(initial_value, name=name, trainable=False)
            self._non_slot_dict[key] = v
        return v

    def _get_non_slot_variable(self, name, graph=None):
        return self._non_slot_dict.get((name, graph or get_default_graph()))

    def _non_slot_variables(self):
        return list(self._non_slot_dict.values())


def _flatten(x):
    """A var_list as TF's ``nest.flatten`` reads it: nested lists and tuples, dict views (e.g.
    ``weights.values()``) and dicts (their values in sorted key order) give their leaves."""
    if isinstance(x, Mapping):
        x = [x[k] for k in sorted(x)]
    if isinstance(x, list | tuple | MappingView):
        out = []
        for item in x:
            out.extend(_flatten(item))
        return out
    return [x]

