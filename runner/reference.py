"""The user's reference (docs/reference.md): its tables made from the registries themselves.

``python -m runner.reference --write docs/reference.md`` rewrites every block between
``<!-- BEGIN GENERATED: NAME -->`` and ``<!-- END GENERATED: NAME -->`` from what the code
registers: the top-level, ``train`` and ``gradcheck`` keys of configs/config.yaml with their
defaults and comments, expression functions (``engine.framework.registry.FUNCTIONS``: signature as a
config calls it, one line), optimizers, pipeline stages, learning-rate schedules, initializers and
data sources with their parameters and defaults. The prose around the blocks is written by hand.
``--check`` exits 1 when the file differs from what the registries say (tests run the same check),
so a function, optimizer or key added without regenerating the reference is caught.
"""

from __future__ import annotations

import argparse
import inspect
import re
import sys
from collections.abc import Callable
from pathlib import Path

import yaml

_BEGIN = "<!-- BEGIN GENERATED: {} -->"
_END = "<!-- END GENERATED: {} -->"
_BLOCK = re.compile(r"(<!-- BEGIN GENERATED: (\w+) -->\n)(.*?)(<!-- END GENERATED: \2 -->)", re.S)

REGENERATE = "python -m runner.reference --write docs/reference.md"

# One line for the expression functions whose engine function has no docstring (the elementwise
# and reduction families are made by factories). A name with a docstring takes its first sentence.
SUMMARIES = {
    "abs": "|x|, elementwise.",
    "add": "x + y, broadcasting.",
    "add_n": "The elementwise sum of a list of tensors of one shape.",
    "argmax": "Index of the largest entry along `axis`.",
    "argmin": "Index of the smallest entry along `axis`.",
    "bias_add": "value + bias, bias along the last axis.",
    "cast": "x converted to `dtype`.",
    "ceil": "Smallest integer >= x, elementwise.",
    "concat": "Tensors joined along an existing `axis`.",
    "cos": "cos(x), elementwise.",
    "equal": "x == y, elementwise (bool).",
    "exp": "e ** x, elementwise.",
    "expand_dims": "A new axis of size 1 inserted at `axis`.",
    "expm1": "exp(x) - 1, accurate near 0.",
    "floor": "Largest integer <= x, elementwise.",
    "floordiv": "floor(x / y), elementwise.",
    "floormod": "x - floor(x / y) * y, elementwise (sign of y).",
    "greater": "x > y, elementwise (bool).",
    "greater_equal": "x >= y, elementwise (bool).",
    "identity": "Its input unchanged (a named node).",
    "is_finite": "Neither NaN nor Inf, elementwise (bool).",
    "is_inf": "x is +Inf or -Inf, elementwise (bool).",
    "is_nan": "x is NaN, elementwise (bool).",
    "less": "x < y, elementwise (bool).",
    "less_equal": "x <= y, elementwise (bool).",
    "log": "Natural logarithm, elementwise.",
    "log1p": "log(1 + x), accurate near 0.",
    "logical_and": "x and y, elementwise (bool).",
    "logical_not": "not x, elementwise (bool).",
    "logical_or": "x or y, elementwise (bool).",
    "max": "Largest entry over `axis` (all axes when None).",
    "maximum": "The larger of x and y, elementwise.",
    "mean": "Mean over `axis` (all axes when None).",
    "min": "Smallest entry over `axis` (all axes when None).",
    "minimum": "The smaller of x and y, elementwise.",
    "multiply": "x * y, broadcasting.",
    "neg": "-x, elementwise.",
    "not_equal": "x != y, elementwise (bool).",
    "ones": "A tensor of ones of `shape`.",
    "ones_like": "Ones of the shape of `tensor`.",
    "pow": "x ** y, elementwise.",
    "prod": "Product over `axis` (all axes when None).",
    "reciprocal": "1 / x, elementwise.",
    "reduce_all": "Logical and over `axis` (all axes when None).",
    "reduce_any": "Logical or over `axis` (all axes when None).",
    "relu": "max(x, 0), elementwise.",
    "reshape": "The same entries in a new `shape` (one -1 entry inferred).",
    "round": "x rounded to the nearest integer, halves to even.",
    "rsqrt": "1 / sqrt(x), elementwise.",
    "shape": "The shape of `input` as a 1-D integer tensor.",
    "sigmoid": "1 / (1 + exp(-x)), elementwise.",
    "sign": "-1, 0 or 1 by the sign of x, elementwise.",
    "sin": "sin(x), elementwise.",
    "size": "The number of entries of `input`.",
    "softplus": "log(1 + exp(x)), elementwise.",
    "softsign": "x / (1 + |x|), elementwise.",
    "sparse_segment_mean": "Mean of the rows `data[indices]` per segment id.",
    "sparse_segment_sqrt_n": "Sum of the rows `data[indices]` per segment id over sqrt(count).",
    "sparse_segment_sum": "Sum of the rows `data[indices]` per segment id.",
    "sqrt": "Square root, elementwise.",
    "square": "x * x, elementwise.",
    "squeeze": "Axes of size 1 removed (those in `axis`, or all).",
    "stack": "Tensors of one shape stacked along a new `axis`.",
    "subtract": "x - y, broadcasting.",
    "sum": "Sum over `axis` (all axes when None).",
    "tanh": "Hyperbolic tangent, elementwise.",
    "tile": "`input` repeated `multiples` times along each axis.",
    "transpose": "Axes permuted by `perm` (reversed when None).",
    "unstack": "A list of the slices along `axis`.",
    "zeros": "A tensor of zeros of `shape`.",
    "zeros_like": "Zeros of the shape of `tensor`.",
}

# What each initializer draws (parameters and defaults come from runner.config.INITIALIZERS).
INITIALIZER_SUMMARIES = {
    "zeros": "0 everywhere.",
    "ones": "1 everywhere.",
    "constant": "`value` everywhere.",
    "normal": "N(mean, stddev^2).",
    "truncated_normal": "N(mean, stddev^2), redrawn beyond two stddev (TF's).",
    "uniform": "U[minval, maxval).",
    "glorot_uniform": "U[-l, l), l = sqrt(6 / (fan_in + fan_out)) (Xavier).",
    "glorot_normal": "Truncated normal, stddev sqrt(2 / (fan_in + fan_out)) (Xavier).",
    "he_normal": "Truncated normal, stddev sqrt(2 / fan_in).",
    "he_uniform": "U[-l, l), l = sqrt(6 / fan_in).",
    "orthogonal": "A (semi-)orthogonal matrix times `gain`.",
    "variance_scaling": "TF's VarianceScaling: variance `scale` / fan (by `mode`), by `distribution`.",
}


# --------------------------------------------------------------------------------------------
# Small helpers
# --------------------------------------------------------------------------------------------


def _cell(text) -> str:
    """``text`` safe inside a Markdown table cell."""
    return str(text).replace("|", "\\|").replace("\n", " ").strip()


def _table(header: tuple[str, ...], rows) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def first_sentence(doc: str | None) -> str:
    """The first sentence of a docstring's first paragraph (its one-line summary)."""
    paragraph = " ".join(line.strip() for line in (inspect.cleandoc(doc or "").split("\n\n")[0]
                                                   .splitlines()))
    match = re.match(r"(.+?\.)\s+[A-Z`]", paragraph)
    return match.group(1) if match else paragraph


def _value(value) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, str):
        return value
    return yaml.safe_dump(value, default_flow_style=True).strip().removesuffix("...").strip()


def _defaults(fn: Callable, skip=()) -> list[str]:
    """``name=default`` (or ``name``, required) for the keyword parameters of ``fn``."""
    out = []
    for name, param in inspect.signature(fn).parameters.items():
        if name in skip or param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        out.append(name if param.default is param.empty else f"{name}={_value(param.default)}")
    return out


# --------------------------------------------------------------------------------------------
# The generated blocks
# --------------------------------------------------------------------------------------------


def _config_comments(path: Path) -> dict[str, tuple[object, str]]:
    """``key`` (dotted) -> (default, comment) for configs/config.yaml's keys with a trailing
    comment, continuation comment lines joined."""
    values = yaml.safe_load(path.read_text())
    out, stack, last = {}, [], None
    for line in path.read_text().splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("- "):
            last = None if not stripped else last
            continue
        indent = len(line) - len(line.lstrip())
        if stripped.startswith("#"):
            if last is not None and indent > last[1]:
                out[last[0]] += " " + stripped.lstrip("# ").strip()
            else:
                last = None
            continue
        match = re.match(r"(\w+):(.*)$", stripped)
        if not match:
            continue
        while stack and stack[-1][1] >= indent:
            stack.pop()
        key = ".".join([*(k for k, _ in stack), match.group(1)])
        body, _, comment = match.group(2).partition("#")
        if not body.strip():
            stack.append((match.group(1), indent))
        if comment.strip():
            out[key] = comment.strip()
            last = (key, indent)
        else:
            last = None
    return {key: (_lookup(values, key), comment) for key, comment in out.items()}


def _lookup(values, key: str):
    for part in key.split("."):
        values = values.get(part) if isinstance(values, dict) else None
    return values


def config_keys(config_yaml: Path) -> str:
    """The run's own keys (``seed``, ``mode``, ``train.*``, ``gradcheck.*``): default and
    meaning, from configs/config.yaml."""
    from runner.config import GRADCHECK_KEYS, TRAIN_KEYS

    comments = _config_comments(config_yaml)
    values = yaml.safe_load(config_yaml.read_text())
    keys = ["seed", "mode", "logger", *(f"train.{k}" for k in TRAIN_KEYS),
            *(f"gradcheck.{k}" for k in GRADCHECK_KEYS)]
    keys += [k for k in comments if k not in keys and not k.startswith("hydra.")
             and k.split(".")[0] in ("train", "gradcheck", "seed", "mode", "logger", "eval",
                                                "predict")]
    rows = []
    for key in keys:
        default, comment = _lookup(values, key), comments.get(key, (None, ""))[1]
        rows.append((f"`{key}`", f"`{_value(default)}`", comment))
    return _table(("key", "default", "meaning"), rows)


def functions() -> str:
    """Every expression function, one row per engine function with all the names it has."""
    import runner.expr  # noqa: F401 - fills the registry with every public function
    from engine.framework.registry import FUNCTIONS
    from runner.signatures import call_signature, signature_text

    by_fn: dict[int, list[str]] = {}
    for name in sorted(FUNCTIONS):
        by_fn.setdefault(id(FUNCTIONS[name]), []).append(name)
    rows = []
    for names in sorted(by_fn.values(), key=lambda ns: ns[0]):
        fn = FUNCTIONS[names[0]]
        sig = call_signature(fn)
        signature = signature_text(sig) if sig is not None else "..."
        summary = next((SUMMARIES[n] for n in names if n in SUMMARIES), None) \
            or first_sentence(fn.__doc__)
        rows.append((", ".join(f"`{n}`" for n in names), f"`({signature})`", summary))
    return _table(("function", "arguments", "what it computes"), rows)


def optimizers() -> str:
    from engine.train import OPTIMIZERS

    rows = []
    for name, cls in OPTIMIZERS.items():
        params = _defaults(cls.__init__, ("self", "use_locking", "name", "global_step"))
        rows.append((f"`{name}`", cls.__name__, ", ".join(params), first_sentence(cls.__doc__)))
    return _table(("name", "engine class", "parameters (TF1 defaults)", "update"), rows)


def stages() -> str:
    from engine.train.stages import REQUIRED, STAGES

    rows = []
    for name, cls in STAGES.items():
        params = []
        for p in cls.PARAMS:
            text = p.name if p.default is REQUIRED else f"{p.name}={_value(p.default)}"
            if p.aliases:
                text += f" (also {', '.join(p.aliases)})"
            params.append(text)
        primary = f"`{cls.primary}`" if cls.primary else ""
        rows.append((f"`{name}`", ", ".join(params) or "none", primary,
                     first_sentence(cls.__doc__)))
    return _table(("stage", "parameters", "a bare number sets", "what it does"), rows)


def schedules() -> str:
    from engine.train import SCHEDULES
    from engine.train import schedules as module

    aliases = ("initial", "initial_learning_rate")
    rows = []
    for name, entry in SCHEDULES.items():
        fn = getattr(module, name, None) if entry.__doc__ else None
        defaults = dict(p.split("=", 1) for p in _defaults(fn) if "=" in p) if fn else {}
        defaults["warmup_steps"] = "0"
        params = []
        for p in entry.params:
            if p in aliases:
                continue
            text = f"{p}={defaults[p]}" if p in defaults else p
            if p == "learning_rate" and "initial" in entry.params:
                text += f" (also {', '.join(aliases)})"
            params.append(text)
        doc = first_sentence(entry.__doc__) if entry.__doc__ else "learning_rate at every step."
        rows.append((f"`{name}`", ", ".join(params), doc))
    return _table(("schedule", "parameters", "learning rate at step t"), rows) + \
        "\nEvery schedule takes `warmup_steps`: the rate rises linearly from 0 to its start " \
        "value over that many steps first.\n"


def initializers() -> str:
    from runner.config import INITIALIZERS

    rows = [(f"`{name}`", ", ".join(f"{k}={_value(v)}" for k, v in params.items()) or "none",
             INITIALIZER_SUMMARIES.get(name, "")) for name, params in INITIALIZERS.items()]
    return _table(("initializer", "parameters", "values"), rows)


def data_sources() -> str:
    from runner.data import COMMON_KEYS
    from runner.data_files import FILE_SOURCES
    from runner.data_synthetic import SOURCES, source_params

    rows = [(f"`{name}`", ", ".join(f"{k}={_value(v)}" for k, v in source_params(name).items()),
             first_sentence(fn.__doc__)) for name, fn in SOURCES.items()]
    rows += [(f"`{name}`", ", ".join(params), f"Arrays read from a .{name} file.")
             for name, params in FILE_SOURCES.items()]
    common = ", ".join(f"`{k}`" for k in COMMON_KEYS)
    return _table(("source", "parameters", "what it holds"), rows) + \
        f"\nEvery source also takes {common}.\n"


def blocks(config_yaml: Path | None = None) -> dict[str, str]:
    """Block name -> its generated Markdown."""
    from runner.app import config_dir

    if config_yaml is None:
        where = config_dir()
        config_yaml = Path(where) / "config.yaml" if not where.startswith("pkg://") else \
            Path(__file__).resolve().parent / "configs" / "config.yaml"
    return {"config": config_keys(config_yaml), "functions": functions(),
            "optimizers": optimizers(), "stages": stages(), "schedules": schedules(),
            "initializers": initializers(), "data_sources": data_sources()}


def render(text: str, generated: dict[str, str]) -> str:
    """``text`` with each generated block replaced; a block the text lacks is an error."""
    missing = [name for name in generated if _BEGIN.format(name) not in text]
    if missing:
        raise ValueError(f"no block for {', '.join(missing)}: add "
                         f"'{_BEGIN.format(missing[0])}' and '{_END.format(missing[0])}'")
    return _BLOCK.sub(lambda m: m.group(1) + generated.get(m.group(2), m.group(3)) + m.group(4),
                      text)


def stale_blocks(text: str, generated: dict[str, str]) -> list[str]:
    """The names of the blocks whose text differs from what the registries say."""
    found = {m.group(2): m.group(3) for m in _BLOCK.finditer(text)}
    return [name for name, body in generated.items() if found.get(name) != body]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m runner.reference", description=__doc__
                                     .split("\n\n")[0])
    parser.add_argument("path", nargs="?", default="docs/reference.md")
    action = parser.add_mutually_exclusive_group()
    action.add_argument("--write", metavar="PATH", help="rewrite the generated blocks of PATH")
    action.add_argument("--check", action="store_true",
                        help="exit 1 when the generated blocks of PATH are out of date")
    args = parser.parse_args(argv)
    path = Path(args.write or args.path)
    text = path.read_text()
    generated = blocks()
    if args.write:
        path.write_text(render(text, generated))
        print(f"{path}: {len(generated)} generated blocks written")
        return 0
    if args.check:
        stale = stale_blocks(text, generated)
        if stale:
            print(f"{path}: out of date ({', '.join(stale)}); run: {REGENERATE}", file=sys.stderr)
            return 1
        return 0
    for name, body in generated.items():
        print(f"## {name}\n\n{body}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
