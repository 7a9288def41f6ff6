"""Building config expressions: a checked tree (runner.expr.parse) -> engine ops, node by node.

``compile_graph`` builds a config's ordered ``model.graph`` mapping, collecting every problem
(unknown names with a "did you mean", references to later entries, shape and dtype mismatches with
the column of the failing sub-expression) into one :class:`~runner.errors.ConfigErrors`.
"""

from __future__ import annotations

import ast
import inspect
import keyword
import re
from collections.abc import Mapping

import engine
from engine.framework.graph import Tensor, get_default_graph
from engine.framework.registry import FUNCTIONS
from engine.ops.variables import Variable
from runner.errors import ConfigError, ConfigErrors, did_you_mean
from runner.expr import (
    BINARY,
    BUILTINS,
    COMPARE,
    MAX_INT_BITS,
    WHERE_NAMES_COME_FROM,
    Expr,
    Source,
    index_value,
    parse,
)
from runner.signatures import call_signature, signature_text

# -------------------------------------------------------------------------------------------
# Building: a checked tree -> engine ops
# -------------------------------------------------------------------------------------------


class _Fail(Exception):
    """A build problem located at a node (or an explicit column)."""

    def __init__(self, node, message, column=None):
        super().__init__(message)
        self.node = node
        self.message = message
        self.column = column


def _describe(value) -> str:
    if isinstance(value, Tensor):
        return f"{value.dtype.name} {value.shape}"
    return type(value).__name__


_ENGINE_PREFIX = re.compile(r"^(\w+) \([^()]*\): ")


def _engine_message(exc: Exception) -> str:
    """The engine's message, without the op's graph name ('MatMul (MatMul): ' -> 'MatMul: ')."""
    return _ENGINE_PREFIX.sub(r"\1: ", str(exc))


# What an engine call may raise for a misfit: shapes, dtypes, values, sizes.
_ENGINE_ERRORS = (ValueError, TypeError, LookupError, ArithmeticError, MemoryError,
                  NotImplementedError)


def _fold(node, symbol, fn, a, b):
    """Two Python numbers combine in Python, with a guard against huge integer powers."""
    if symbol == "**" and isinstance(a, int) and isinstance(b, int) and abs(a) > 1 and b > 0 \
            and b * abs(a).bit_length() > MAX_INT_BITS:
        raise _Fail(node, "this integer power is too large")
    try:
        out = fn(a, b)
    except ZeroDivisionError:
        raise _Fail(node, "division by zero") from None
    except OverflowError:
        raise _Fail(node, f"'{symbol}' of these numbers is too large") from None
    if isinstance(out, complex):
        raise _Fail(node, f"'{symbol}' of these numbers is a complex number")
    return out


def _is_number(value) -> bool:
    """A Python number (bools included): folded in Python, or adopting a tensor's dtype."""
    return isinstance(value, int | float)


class _Builder:
    """Walks one checked expression, calling one engine function per node."""

    def __init__(self, src: Source, scope: Mapping[str, object]):
        self.src = src
        self.scope = scope

    def build(self, node):
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            return self.scope[node.id]
        if isinstance(node, ast.UnaryOp):
            return self.unary(node)
        if isinstance(node, ast.BinOp):
            symbol, tensor_fn, number_fn = BINARY[type(node.op)]
            column = self.src.operator_column(node, node.left, node.right, symbol)
            return self.binary(node, symbol, tensor_fn, number_fn, node.left, node.right, column)
        if isinstance(node, ast.Compare):
            symbol, tensor_fn, number_fn = COMPARE[type(node.ops[0])]
            right = node.comparators[0]
            column = self.src.operator_column(node, node.left, right, symbol)
            return self.binary(node, symbol, tensor_fn, number_fn, node.left, right, column)
        if isinstance(node, ast.Call):
            return self.call(node)
        if isinstance(node, ast.Subscript):
            return self.subscript(node)
        if isinstance(node, ast.List | ast.Tuple):
            return [self.build(e) for e in node.elts]
        raise AssertionError(f"unchecked node {type(node).__name__}")  # the checker refuses these

    def unary(self, node):
        value = self.build(node.operand)
        negate = isinstance(node.op, ast.USub)
        if _is_number(value):
            return -value if negate else +value
        if not isinstance(value, Tensor):
            raise _Fail(node, f"unary '{'-' if negate else '+'}' needs a tensor or a number, got "
                              f"{_describe(value)}")
        if not negate:
            return value
        return self.engine_call(node, lambda: engine.negative(value), "unary '-'", None)

    def binary(self, node, symbol, tensor_fn, number_fn, left_node, right_node, column):
        a, b = self.build(left_node), self.build(right_node)
        for value, side in ((a, left_node), (b, right_node)):
            if not (isinstance(value, Tensor) or _is_number(value)):
                raise _Fail(side, f"operator '{symbol}' needs tensors or numbers, got "
                                  f"{_describe(value)} '{self.src.segment(side)}'")
        if _is_number(a) and _is_number(b):
            if number_fn is None:
                raise _Fail(node, f"operator '{symbol}' needs tensors, got two numbers",
                            column=column)
            return _fold(node, symbol, number_fn, a, b)
        what = f"'{symbol}'"
        if isinstance(a, Tensor) and isinstance(b, Tensor):
            if a.dtype != b.dtype:
                raise _Fail(node, f"{what} needs operands of one dtype, got {_describe(a)} "
                                  f"'{self.src.segment(left_node)}' and {_describe(b)} "
                                  f"'{self.src.segment(right_node)}'; convert one with "
                                  f"cast(..., '{a.dtype.name}')", column=column)
            what = f"'{symbol}' on shapes {a.shape} and {b.shape}"
        return self.engine_call(node, lambda: tensor_fn(a, b), what, column)

    def engine_call(self, node, thunk, what, column):
        try:
            return thunk()
        except _ENGINE_ERRORS as exc:
            raise _Fail(node, f"{what}: {_engine_message(exc)}", column=column) from None

    def call(self, node):
        fname = node.func.id
        fn = FUNCTIONS[fname]  # resolved by the name pass before building
        args = [self.build(a) for a in node.args]
        kwargs = {kw.arg: self.build(kw.value) for kw in node.keywords}
        sig = call_signature(fn)
        if sig is not None:
            self.check_arguments(node, fname, sig, args, kwargs)
        try:
            return fn(*args, **kwargs)
        except TypeError as exc:
            bad = re.search(r"unexpected keyword argument '(\w+)'", str(exc))
            if bad and sig is not None:  # a function taking **kwargs refused one of them
                kw = next((k for k in node.keywords if k.arg == bad.group(1)), node)
                raise self.bad_keyword(kw, fname, sig, bad.group(1)) from None
            raise _Fail(node, f"{fname}(): {_engine_message(exc)}") from None
        except _ENGINE_ERRORS as exc:
            raise _Fail(node, f"{fname}(): {_engine_message(exc)}") from None

    def check_arguments(self, node, fname, sig, args, kwargs):
        params = sig.parameters
        takes_any = any(p.kind is p.VAR_KEYWORD for p in params.values())
        for kw in node.keywords:
            if not takes_any and (kw.arg not in params
                                  or params[kw.arg].kind in (inspect.Parameter.VAR_POSITIONAL,
                                                             inspect.Parameter.POSITIONAL_ONLY)):
                raise self.bad_keyword(kw, fname, sig, kw.arg)
        try:
            sig.bind(*args, **kwargs)
        except TypeError as exc:
            raise _Fail(node, f"wrong arguments to {fname}(): {exc}; it takes "
                              f"({signature_text(sig)})") from None

    def bad_keyword(self, kw, fname, sig, arg) -> _Fail:
        names = list(sig.parameters)
        return _Fail(kw, f"{fname}() has no parameter '{arg}'{did_you_mean(arg, names)}; it "
                         f"takes ({signature_text(sig)})")

    def subscript(self, node):
        value = self.build(node.value)
        index = index_value(node.slice)
        column = self.src.operator_column(node, node.value, node.slice, "[")
        if isinstance(value, list):
            if not isinstance(index, int):
                raise _Fail(node, f"a list of {len(value)} tensors takes one integer index",
                            column=column)
            if not -len(value) <= index < len(value):
                raise _Fail(node, f"index {index} is out of range for a list of {len(value)} "
                                  "tensors", column=column)
            return value[index]
        if not isinstance(value, Tensor):
            raise _Fail(node, f"cannot index {_describe(value)} "
                              f"'{self.src.segment(node.value)}'", column=column)
        return self.engine_call(node, lambda: value[index], f"indexing shape {value.shape}", column)


def compile_expr(expr: Expr, scope: Mapping[str, object]) -> Tensor:
    """Build one checked expression whose names all resolve in ``scope`` (see ``compile_graph``).

    Raises ConfigError located at the failing sub-expression (shape, dtype, arguments...).
    """
    src = expr.source
    try:
        value = _Builder(src, scope).build(expr.tree.body)
        if _is_number(value):
            value = engine.convert_to_tensor(value)
    except _Fail as fail:
        raise src.error(fail.node, fail.message, fail.column) from None
    except _ENGINE_ERRORS as exc:
        raise src.error(expr.tree.body, _engine_message(exc)) from None
    if isinstance(value, list):
        raise src.error(expr.tree.body, f"this expression gives a list of {len(value)} tensors; "
                                        "pick one with [i]")
    if not isinstance(value, Tensor):
        raise src.error(expr.tree.body, f"this expression gives {_describe(value)}, not a tensor")
    return value


def compile_graph(graph_cfg: Mapping[str, str], env: Mapping[str, Tensor],
                  key_prefix: str = "model.graph") -> dict[str, Tensor]:
    """Build each graph entry in order; return {entry name: its tensor}.

    Names resolve against ``env`` (inputs, constants, variables) and earlier entries. Every
    problem in every entry is collected and raised together as ConfigErrors (one ConfigError each,
    keyed ``<key_prefix>.<entry>`` with the column in the expression); an entry that uses a failed
    entry is skipped without an error of its own. Each node tensor is an identity named after its
    entry, so that run-time reports (a NaN, ``mode=check``) can name the node.
    """
    graph = _Entries(graph_cfg, env, key_prefix)
    graph_of_env = next((t.graph for t in env.values() if isinstance(t, Tensor)), None)
    with (graph_of_env or get_default_graph()).as_default():
        for index, (name, text) in enumerate(graph_cfg.items()):
            graph.build(index, str(name), text)
    if graph.errors:
        raise ConfigErrors(graph.errors)
    return graph.built


class _Entries:
    """The state of one compile_graph pass: what is built, what failed, the errors so far."""

    def __init__(self, graph_cfg, env, key_prefix):
        self.env = env
        self.prefix = key_prefix
        self.position = {str(name): i for i, name in enumerate(graph_cfg)}
        self.built: dict[str, Tensor] = {}
        self.failed: set[str] = set()
        self.errors: list[ConfigError] = []

    def build(self, index, name, text):
        key = f"{self.prefix}.{name}"
        try:
            self.check_entry_name(name, key)
            expr = parse(text, key)
            problems, blocked = self.resolve(expr, name, index)
            if problems or blocked:
                self.errors.extend(problems)
                self.failed.add(name)
                return
            # The entry's ops are named 'h/MatMul', 'h/add'... (the scope is entered, not made
            # unique, so the name 'h' itself stays free) and its value is the identity 'h'.
            with get_default_graph().name_scope(f"{name}/"):
                value = compile_expr(expr, {**self.env, **self.built})
            self.built[name] = engine.identity(value, name=name)
        except ConfigError as exc:
            self.errors.append(exc)
            self.failed.add(name)

    def check_entry_name(self, name, key):
        if not name.isidentifier() or keyword.iskeyword(name) or keyword.issoftkeyword(name):
            raise ConfigError(key, f"graph entry name '{name}' must be an identifier (letters, "
                                   "digits and '_', not a Python keyword) so expressions can use it")
        if name in self.env:
            raise ConfigError(key, f"'{name}' is already {_kind(self.env[name])}; a graph entry "
                                   "needs a name of its own")

    def resolve(self, expr: Expr, name, index):
        """Check every name and function an entry uses: (problems, uses a failed entry)."""
        src = expr.source
        problems: list[ConfigError] = []
        blocked = False
        callees = {id(n.func) for n in ast.walk(expr.tree) if isinstance(n, ast.Call)}
        for node in ast.walk(expr.tree):
            if not isinstance(node, ast.Name):
                continue
            ident = node.id
            if id(node) in callees:
                message = self.function_problem(ident)
            elif ident in self.env or ident in self.built:
                continue
            elif ident in self.failed:
                blocked = True
                continue
            elif ident == name:
                message = f"'{ident}' refers to itself; an entry cannot use its own value"
            elif self.position.get(ident, -1) > index:
                message = (f"'{ident}' is defined later, at {self.prefix}.{ident}; entries are "
                           "evaluated in order")
            elif ident in FUNCTIONS:
                message = f"'{ident}' is a function; call it as {ident}(...)"
            else:
                known = [*self.env, *self.built]
                message = (f"unknown name '{ident}'{did_you_mean(ident, known)}; "
                           f"{WHERE_NAMES_COME_FROM}")
            if message:
                problems.append(src.error(node, message))
        problems.sort(key=lambda e: e.column or 0)
        return problems, blocked

    def function_problem(self, ident) -> str | None:
        if ident in FUNCTIONS:
            return None
        if ident in self.env:
            return f"'{ident}' is {_kind(self.env[ident])}, not a function"
        if ident in self.position:
            return f"'{ident}' is a graph entry ({self.prefix}.{ident}), not a function"
        suggestion = did_you_mean(ident, FUNCTIONS)
        if ident in BUILTINS:
            return (f"'{ident}' is a Python builtin, not an engine function; expressions can call "
                    f"only engine functions{suggestion}")
        return f"unknown function '{ident}'{suggestion}"


def _kind(value) -> str:
    """What an environment name is, in the config's words."""
    if isinstance(value, Variable):
        return "a variable (model.variables)"
    op_type = getattr(getattr(value, "op", None), "type", "")
    if op_type.startswith("Placeholder"):
        return "an input (model.inputs)"
    if op_type == "Const":
        return "a constant (model.constants)"
    return "a tensor"
