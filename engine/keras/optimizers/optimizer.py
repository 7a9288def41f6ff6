"""``keras.optimizers.Optimizer``: Keras 3's optimizer base on eager variables.

One ``apply_gradients(zip(grads, vars))`` call is Keras 3's ``apply`` (with TF's backend):

1. None gradients are dropped, with a warning naming their variables (all None: ValueError);
2. the gradients are divided by ``loss_scale_factor`` if one is set;
3. clipped: ``clipnorm`` (each gradient by its own norm, ``tf.clip_by_norm``), else
   ``global_clipnorm`` (``tf.clip_by_global_norm`` over all of them), else ``clipvalue``
   (``tf.clip_by_value(g, -clipvalue, clipvalue)``); at most one of the three may be set;
   an ``IndexedSlices`` gradient (a GradientTape's over ``tf.gather`` or an embedding lookup)
   stays one, and its repeated indices are then summed (TF2's Keras optimizers'
   ``_deduplicate_sparse_grad``);
4. decoupled weight decay, if ``weight_decay`` is set: ``var -= var * weight_decay * lr`` (except
   variables passed to ``exclude_from_weight_decay``);
5. ``update_step(grad, var, lr)`` for each pair: the subclass's formula; for IndexedSlices,
   the sparse branch of TF2's Keras optimizers (2.11+): slots decay as a whole where the dense
   formula decays them (Adam's m and v, RMSprop's velocity), and the gradient's rows are added
   with ``scatter_add`` to the rows named, so Adagrad, RMSprop without momentum and SGD without
   momentum change only those rows of the variable;
6. ``iterations += 1``.

Everything runs eagerly through the public functions (so the registry's ops), and no tape records
it. The state lives in eager variables named as Keras names them (``adam/iteration``,
``adam/learning_rate``, ``adam/w_0_momentum``...), listed in ``variables`` and read per trained
variable by its name: ``get_slot(w, "momentum")`` or ``get_slot("w", "momentum")``. Unlike
Keras, which fixes its variables at the first call, state for a variable seen for the first time
is made then (so one optimizer may update different variables in different calls).
"""

from __future__ import annotations

import re
import warnings

from ...framework import dtypes as _dtypes
from ...framework.eager import EAGER, eager_mode, is_eager, no_recording
from ...framework.graph import Tensor
from ...framework.indexed_slices import IndexedSlices, values_of, with_values
from ...ops.clip_ops import clip_by_global_norm, clip_by_norm, clip_by_value
from ...ops.core import convert_to_tensor, fill
from ...ops.math import cast
from ...ops.sparse import unique_row_sum
from ...ops.variables import Variable
from ...train.hyperparams import check_number

_NAMES_IN_USE: dict[str, int] = {}


def _auto_name(cls):
    """Keras' default names: the class name in snake case, then ``adam_1``, ``adam_2``..."""
    base = re.sub(r"(?<!^)(?=[A-Z][a-z])", "_", cls.__name__).lower()
    i = _NAMES_IN_USE.get(base, 0)
    _NAMES_IN_USE[base] = i + 1
    return base if i == 0 else f"{base}_{i}"


def cast_to(value, dtype):
    """``ops.cast``: a tensor is cast (an IndexedSlices' values); a Python number becomes a
    tensor of ``dtype`` directly (0.9 as float64 is 0.9, not float32's 0.9 widened)."""
    if isinstance(value, IndexedSlices):
        return with_values(value, cast_to(value.values, dtype))
    if isinstance(value, Tensor):
        return cast(value, dtype)
    return convert_to_tensor(value, dtype=dtype)


def _as_gradient(g, var):
    """A gradient as a tensor of var's dtype where convertible; IndexedSlices stay sparse."""
    if isinstance(g, IndexedSlices):
        return g
    return convert_to_tensor(g, preferred_dtype=var.dtype)


def _deduplicate_sparse_grad(g):
    """TF2 Keras': an IndexedSlices' rows summed per distinct index (``unique_row_sum``: the
    same sums as its unique + unsorted_segment_sum, indices ascending)."""
    if not isinstance(g, IndexedSlices):
        return g
    summed, indices = unique_row_sum(g.values, g.indices)
    return IndexedSlices(summed, indices, g.dense_shape)


def _var_key(var):
    """State is keyed by the variable's name (``w`` for ``w:0``), never by position."""
    return var if isinstance(var, str) else var.op.name


class Optimizer:
    """Base class: subclasses set ``slots`` ((name, initial value) per variable) and implement
    ``update_step(gradient, variable, learning_rate)`` with public functions; see the module doc.
    """

    slots: tuple = ()

    def __init__(self, learning_rate, weight_decay=None, clipnorm=None, clipvalue=None,
                 global_clipnorm=None, loss_scale_factor=None, name=None, **kwargs):
        owner = type(self).__name__
        if kwargs.pop("decay", None) is not None:
            warnings.warn("Argument `decay` is no longer supported and will be ignored.",
                          stacklevel=2)
        if kwargs:
            raise ValueError(f"Argument(s) not recognized: {kwargs}")
        if sum(a is not None for a in (clipnorm, clipvalue, global_clipnorm)) > 1:
            raise ValueError(
                "Only one of `clipnorm`, `clipvalue` and `global_clipnorm` can be set. Received: "
                f"clipnorm={clipnorm}, clipvalue={clipvalue}, global_clipnorm={global_clipnorm}")
        for arg, value in (("weight_decay", weight_decay), ("clipnorm", clipnorm),
                           ("clipvalue", clipvalue), ("global_clipnorm", global_clipnorm)):
            if value is not None:
                check_number(arg, value, low=0, owner=owner)
        if loss_scale_factor is not None:
            check_number("loss_scale_factor", loss_scale_factor, low=0, low_open=True, owner=owner)
        self.name = name or _auto_name(type(self))
        self.weight_decay = weight_decay
        self.clipnorm, self.clipvalue, self.global_clipnorm = clipnorm, clipvalue, global_clipnorm
        self.loss_scale_factor = loss_scale_factor
        self._state: dict[str, dict[str, Variable]] = {}
        self._exclude_keys: set = set()
        self._exclude_pattern = None
        with eager_mode(), EAGER.name_scope(self.name):
            self._iterations = Variable(0, dtype=_dtypes.int64, name="iteration",
                                        trainable=False)
            self._variables = [self._iterations]
            if callable(learning_rate) and not isinstance(learning_rate, Tensor):
                self._learning_rate = learning_rate
            else:
                lr = check_number("learning_rate", learning_rate, low=0, owner=owner)
                self._learning_rate = Variable(float(lr), dtype=_dtypes.float32,
                                               name="learning_rate", trainable=False)
                self._variables.append(self._learning_rate)

    # -- state -----------------------------------------------------------------------------
    @property
    def iterations(self):
        """The number of ``apply_gradients`` calls so far (an int64 variable)."""
        return self._iterations

    @property
    def learning_rate(self):
        """The current learning rate: the variable, or the value of a callable one."""
        if isinstance(self._learning_rate, Variable):
            return self._learning_rate
        with eager_mode():
            return convert_to_tensor(self._learning_rate(), dtype=None)

    @learning_rate.setter
    def learning_rate(self, value):
        if callable(value) and not isinstance(value, Tensor):
            if self._learning_rate in self._variables:
                self._variables.remove(self._learning_rate)
            self._learning_rate = value
        elif isinstance(self._learning_rate, Variable):
            with eager_mode():
                self._learning_rate.assign(float(value))
        else:
            raise TypeError("This optimizer was made with a callable learning rate; set another "
                            "callable, not a number.")

    @property
    def variables(self):
        """Every variable of the optimizer, in Keras' order (iteration, learning rate, state)."""
        return list(self._variables)

    def get_slot(self, var, slot_name):
        """The state ``slot_name`` (e.g. ``"momentum"``) of ``var`` (a variable or its name)."""
        try:
            return self._state[_var_key(var)][slot_name]
        except KeyError:
            raise KeyError(f"{type(self).__name__} has no slot {slot_name!r} for variable "
                           f"{_var_key(var)!r}; its slots are {self.get_slot_names()} and its "
                           f"variables {sorted(self._state)}") from None

    def get_slot_names(self):
        return [name for name, _ in self.slots]

    def build(self, var_list):
        """Make the state of each variable in ``var_list`` not seen before."""
        with eager_mode(), no_recording(), EAGER.name_scope(self.name):
            for var in var_list:
                key = _var_key(var)
                if key in self._state:
                    continue
                prefix = str(var.name).replace("/", "_").replace(":", "_")
                state = self._state[key] = {}
                for slot, initial in self.slots:
                    state[slot] = Variable(fill(var.shape.as_list(),
                                                convert_to_tensor(initial, dtype=var.dtype)),
                                           name=f"{prefix}_{slot}", trainable=False)
                    self._variables.append(state[slot])

    def exclude_from_weight_decay(self, var_list=None, var_names=None):
        """No weight decay for the variables in ``var_list``, nor for those whose name contains
        a match of any regular expression in ``var_names``."""
        self._exclude_keys = {_var_key(v) for v in var_list or ()}
        self._exclude_pattern = re.compile("|".join(set(var_names))) if var_names else None

    # -- applying --------------------------------------------------------------------------
    def apply_gradients(self, grads_and_vars):
        """Apply one step; returns ``iterations``, as Keras does."""
        pairs = list(grads_and_vars)
        if not pairs:
            raise ValueError("apply_gradients needs at least one (gradient, variable) pair")
        grads, variables = zip(*pairs)
        return self.apply(grads, variables)

    def apply(self, grads, trainable_variables):
        """``apply_gradients`` with gradients and variables in two lists."""
        grads, variables = list(grads), list(trainable_variables)
        if len(grads) != len(variables):
            raise ValueError(f"{len(grads)} gradients for {len(variables)} variables")
        for v in variables:
            if not (isinstance(v, Variable) and is_eager(v)):
                raise TypeError(f"Keras optimizers update eager variables (made under eager "
                                f"execution), got {v!r}; in graph mode use tf.train optimizers")
        with eager_mode(), no_recording():
            self.build(variables)
            grads, variables = self._filter_empty_gradients(grads, variables)
            grads = [_as_gradient(g, v) for g, v in zip(grads, variables)]
            if self.loss_scale_factor is not None:
                grads = [with_values(g, values_of(g) / self.loss_scale_factor) for g in grads]
            grads = self._clip_gradients(grads)
            grads = [_deduplicate_sparse_grad(g) for g in grads]
            self._apply_weight_decay(variables)
            learning_rate = self.learning_rate
            for g, v in zip(grads, variables):
                self.update_step(g, v, learning_rate)
            self._iterations.assign_add(1)
            for v in variables:  # Keras: constraints project each variable after the step
                if v.constraint is not None:
                    v.assign(v.constraint(v))
        return self._iterations

    def update_step(self, gradient, variable, learning_rate):
        raise NotImplementedError(f"{type(self).__name__} does not implement update_step")

    @staticmethod
    def _filter_empty_gradients(grads, variables):
        kept = [(g, v) for g, v in zip(grads, variables) if g is not None]
        if not kept:
            raise ValueError("No gradients provided for any variable.")
        missing = [v.name for g, v in zip(grads, variables) if g is None]
        if missing:
            warnings.warn(f"Gradients do not exist for variables {missing} when minimizing the "
                          "loss.", stacklevel=3)
        return [g for g, _ in kept], [v for _, v in kept]

    def _clip_gradients(self, grads):
        if self.clipnorm:
            return [clip_by_norm(g, self.clipnorm) for g in grads]
        if self.global_clipnorm:
            return clip_by_global_norm(grads, self.global_clipnorm)[0]
        if self.clipvalue:
            return [clip_by_value(g, -self.clipvalue, self.clipvalue) for g in grads]
        return grads

    def _use_weight_decay(self, var):
        if _var_key(var) in self._exclude_keys:
            return False
        return self._exclude_pattern is None or self._exclude_pattern.search(var.name) is None

    def _apply_weight_decay(self, variables):
        if self.weight_decay is None:
            return
        for var in variables:
            if self._use_weight_decay(var):
                lr = cast_to(self.learning_rate, var.dtype)
                wd = cast_to(self.weight_decay, var.dtype)
                var.assign_sub(var * wd * lr)

    def __repr__(self):
        return f"<keras.optimizers.{type(self).__name__} name={self.name!r}>"
