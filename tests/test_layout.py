"""The layout of docs/layout.md, read from the code's own imports (those inside functions too):
the engine's packages each import only the packages below them, the engine never imports the
runner, Hydra, OmegaConf or YAML, neither engine/ nor runner/ has an import cycle, and no module
uses another module's private names (a test only those of the code it tests)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: the engine's packages from the bottom up (docs/layout.md); a package may import those of a
#: lower rank and its own. engine/__init__.py and engine/v2.py (the tf namespaces) are above all.
RANKS = {
    "framework": 0, "platform": 0,
    "ops": 1,
    "autodiff": 2,
    "runtime": 3,
    "nn": 4, "app": 4, "summary": 4, "metrics": 4, "data": 4, "losses": 4, "image": 4,
    "control_flow": 4,
    "math": 4, "linalg": 4, "debugging": 4, "compat": 4, "test": 4,
    "layers": 5, "feature_column": 5,
    "train": 6,
    "estimator": 7, "saved_model": 7,
    "keras": 8, "contrib": 8, "python": 8,
}
TOP = max(RANKS.values()) + 1  # a package not in RANKS: an API package nothing below imports
NAMESPACES = ("engine", "engine.v2")

#: what the engine must not import: its only I/O is TF's own
FORBIDDEN = ("runner", "hydra", "omegaconf", "yaml", "bench", "tests")


def modules(package: str) -> dict[str, Path]:
    """Every module of a top-level package, by dotted name (a package by its __init__)."""
    out = {}
    for path in sorted((ROOT / package).rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def imports(name: str, path: Path, known) -> set[str]:
    """What module ``name`` imports, anywhere in its code (function bodies included): the known
    modules it names (a submodule where ``from pkg import sub`` names one), else the top-level
    names of outside packages."""
    is_pkg = path.name == "__init__.py"
    base = name.split(".") if is_pkg else name.split(".")[:-1]
    out = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                prefix = base[:len(base) - node.level + 1]
                mod = ".".join(prefix + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            targets = [f"{mod}.{a.name}" if f"{mod}.{a.name}" in known else mod
                       for a in node.names]
        else:
            continue
        for target in targets:
            found = target
            while found and found not in known:
                found = found.rpartition(".")[0]
            out.add(found or target.split(".")[0])
    out.discard(name)
    return out


def rank(module: str) -> int:
    if module in NAMESPACES:
        return TOP + 1
    return RANKS.get(module.split(".")[1], TOP)


ENGINE = modules("engine")
RUNNER = modules("runner")
BENCH = modules("bench")
TESTS = modules("tests")


def test_the_imports_are_read_from_function_bodies_and_relative_imports(tmp_path):
    pkg = tmp_path / "engine" / "ops"
    pkg.mkdir(parents=True)
    code = "def f():\n    from ..train import optimizer\n    import yaml\n"
    (pkg / "x.py").write_text(code)
    found = imports("engine.ops.x", pkg / "x.py", {"engine.train", "engine.train.optimizer"})
    assert found == {"engine.train.optimizer", "yaml"}


def test_every_engine_package_has_a_place_in_the_layers():
    packages = {m.split(".")[1] for m in ENGINE if m.count(".") >= 1} - {"v2"}
    assert packages - set(RANKS) == set(), "add the new package to RANKS and docs/layout.md"


@pytest.mark.parametrize("name", sorted(ENGINE))
def test_an_engine_module_imports_only_lower_packages(name):
    upward = sorted(t for t in imports(name, ENGINE[name], ENGINE)
                    if t in ENGINE and t != "engine" and rank(t) > rank(name))
    assert upward == [], f"{name} imports the higher {upward}"
    bad = sorted(t for t in imports(name, ENGINE[name], ENGINE)
                 if t.split(".")[0] in FORBIDDEN)
    assert bad == [], f"{name} imports {bad}: the engine knows nothing of the runner or YAML"


@pytest.mark.parametrize("name", sorted(m for m in ENGINE if m not in NAMESPACES))
def test_no_engine_module_imports_the_tf_namespace(name):
    """``import engine`` from inside the engine would import every API package."""
    assert "engine" not in imports(name, ENGINE[name], ENGINE), \
        f"{name} imports engine (the tf namespace): import the module that defines the name"


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while not comp or comp[-1] != v:
                comp.append(stack.pop())
                on.discard(comp[-1])
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in graph:
        if v not in index:
            visit(v)
    return out


def test_cycles_finds_a_cycle_and_only_it():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


@pytest.mark.parametrize("package", [ENGINE, RUNNER], ids=["engine", "runner"])
def test_no_import_cycles(package):
    graph = {name: {t for t in imports(name, path, package) if t in package}
             for name, path in package.items()}
    assert cycles(graph) == []


def private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def private_uses(name: str, path: Path, known) -> list[str]:
    """The private names of other known modules that module ``name`` uses: ``from m import
    _x``, ``import m._x``, and ``m._x`` (also ``m.Class._x``, ``getattr(m, "_x")`` and
    ``setattr(m, "_x", ...)``, monkeypatch's included) where ``m`` names an imported module."""
    is_pkg = path.name == "__init__.py"
    base = name.split(".") if is_pkg else name.split(".")[:-1]
    tree = ast.parse(path.read_text(), str(path))
    bound, out = {}, []  # local name -> the known module it is bound to
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            mod = ".".join(base[:len(base) - node.level + 1] + ([node.module] if node.module
                                                                 else [])) \
                if node.level else node.module or ""
            for alias in node.names:
                full = f"{mod}.{alias.name}"
                if full in known:
                    bound[alias.asname or alias.name] = full
                if private(alias.name) and (full in known or mod in known) and mod != name:
                    out.append(f"line {node.lineno}: from {mod} import {alias.name}")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in known:
                    bound[alias.asname or alias.name.split(".")[0]] = \
                        alias.name if alias.asname else alias.name.split(".")[0]
                if any(private(part) for part in alias.name.split(".")[1:]):
                    out.append(f"line {node.lineno}: import {alias.name}")
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and private(node.attr):
            chain, value = [node.attr], node.value
            while isinstance(value, ast.Attribute):
                chain.append(value.attr)
                value = value.value
            if isinstance(value, ast.Name) and value.id in bound:
                target = ".".join([bound[value.id], *reversed(chain[1:])])
                if target != name:
                    out.append(f"line {node.lineno}: {target}.{node.attr}")
        elif isinstance(node, ast.Call) and len(node.args) >= 2 and \
                getattr(node.func, "id", getattr(node.func, "attr", None)) in ("getattr",
                                                                                "setattr"):
            owner, attr = node.args[0], node.args[1]
            if isinstance(owner, ast.Name) and owner.id in bound and \
                    isinstance(attr, ast.Constant) and isinstance(attr.value, str) and \
                    private(attr.value) and bound[owner.id] != name:
                out.append(f"line {node.lineno}: {bound[owner.id]}.{attr.value}")
    return out


ALL = {**ENGINE, **RUNNER, **BENCH, **TESTS}


def test_private_uses_finds_imports_attributes_and_monkeypatching(tmp_path):
    code = ("from engine.ops import core\nfrom engine.ops.core import _filled, filled\n"
            "import engine.ops.rnn as rnn\nfrom . import mine\n"
            "def f(monkeypatch):\n    core._sum(rnn.Cell._state, mine._own)\n"
            "    monkeypatch.setattr(core, '_kernel', None)\n    core.__name__\n")
    (tmp_path / "x.py").write_text(code)
    known = {"engine.ops.core", "engine.ops.rnn", "runner.mine", "runner.x"}
    found = private_uses("runner.x", tmp_path / "x.py", known)
    assert sorted(found) == ["line 2: from engine.ops.core import _filled",
                             "line 6: engine.ops.core._sum", "line 6: engine.ops.rnn.Cell._state",
                             "line 6: runner.mine._own", "line 7: engine.ops.core._kernel"]


@pytest.mark.parametrize("name", sorted({**ENGINE, **RUNNER, **BENCH}))
def test_no_module_uses_another_modules_private_names(name):
    """A private name is its module's own: whatever another module needs is public there."""
    path = {**ENGINE, **RUNNER, **BENCH}[name]
    assert private_uses(name, path, ALL) == [], \
        f"{name} uses private names of other modules: make them public where they are defined"


@pytest.mark.parametrize("name", sorted(TESTS))
def test_a_test_uses_only_the_private_names_of_the_code_it_tests(name):
    """A test may pin a private kernel or helper of the engine, runner or bench code it tests;
    another test file's private helpers belong in a shared helpers module instead."""
    found = [use for use in private_uses(name, TESTS[name], ALL)
             if use.split(": ", 1)[1].removeprefix("from ").startswith("tests")]
    assert found == [], f"{name} uses another test file's private helpers: {found}"
