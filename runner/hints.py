"""Hints for config mistakes that Hydra reports in its own words: one line each, saying what to
do.

- An experiment that is not found: the user's own experiments are found with ``--config-dir
  DIR`` (``python -m runner`` and ``python -m runner.regress``), and a near name is suggested.
- A mapping given on the command line to a key that holds a mapping already
  (``train.early_stopping={monitor: eval/loss, min_delta: 0.01}`` where the experiment set
  ``{monitor: eval/loss, patience: 3}``): Hydra merges it key by key and refuses a key the
  composed mapping lacks, and its own advice (``+train.early_stopping=...``) fails too.
- An experiment that writes a ``model:`` (``data:``, ``groups:``) section inline while the
  default option of that group (``model: linear`` in configs/config.yaml) stays merged under
  it: Hydra then fails to merge the two (``Cannot merge DictConfig with ListConfig``), or the
  default's entries end up in the model (``model.graph.pred``: an unknown name). Its defaults
  list needs ``- override /model: null``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import yaml

from runner.errors import did_you_mean

#: the config groups configs/config.yaml's defaults list picks an option of
DEFAULT_GROUPS = ("model", "data", "groups")
_NOT_FOUND = re.compile(r"Could not find 'experiment/([^']+)'")
_IN_EXPERIMENT = re.compile(r"^In 'experiment/([^']+)'", re.MULTILINE)
_NOT_OVERRIDDEN = re.compile(r"Could not override '([^']+)'")


def config_dir_argument(argv: Sequence[str]) -> str | None:
    """The ``--config-dir``/``-cd`` value of a command line, if any."""
    args = iter(argv)
    for arg in args:
        if arg in ("--config-dir", "-cd"):
            return next(args, None)
        if arg.startswith("--config-dir="):
            return arg.split("=", 1)[1]
    return None


def experiment_file(name: str, folders: Iterable[str | Path]) -> Path | None:
    """``experiment/NAME.yaml`` in the first of ``folders`` (config directories) holding it."""
    for folder in folders:
        path = Path(folder) / "experiment" / f"{name}.yaml"
        if path.is_file():
            return path
    return None


def experiments(folders: Iterable[str | Path]) -> list[str]:
    """The experiment names in ``folders``."""
    return sorted({p.stem for folder in folders
                   for p in (Path(folder) / "experiment").glob("*.yaml")})


def kept_defaults(path: Path, groups: Iterable[str] = DEFAULT_GROUPS) -> list[str]:
    """The groups an experiment file writes inline (a ``GROUP:`` mapping at its top level)
    without an ``override /GROUP`` entry in its defaults list: the default option stays under
    them. Empty for a file that cannot be read or is not ``# @package _global_``."""
    try:
        text = path.read_text()
        document = yaml.safe_load(text)
    except (OSError, yaml.YAMLError, UnicodeDecodeError):
        return []
    if not isinstance(document, Mapping) or "@package _global_" not in text.split("\n", 1)[0]:
        return []
    overridden = set()
    for entry in document.get("defaults") or []:
        if isinstance(entry, Mapping):
            overridden.update(str(k).replace(" ", "") for k in entry)
    return [g for g in groups if isinstance(document.get(g), Mapping)
            and f"override/{g}" not in overridden]


def override_hint(path: Path, groups: Sequence[str]) -> str:
    """One line: which ``override /GROUP: null`` entries the experiment's defaults need."""
    entries = ", ".join(f"'- override /{g}: null'" for g in groups)
    sections = ", ".join(f"{g}:" for g in groups)
    return (f"hint: {path} writes {sections} inline while the default "
            f"{' and '.join(groups)} stay{'s' if len(groups) == 1 else ''} merged under it: "
            f"add {entries} to its defaults list")


#: how ``python -m runner`` finds a user's own experiments
RUNNER_CONFIG_DIR = "python -m runner --config-dir DIR"


def not_found_hint(name: str, folders: Sequence[str | Path], own: str | Path | None,
                   how: str = RUNNER_CONFIG_DIR) -> str:
    """One line for an experiment not found: a near name, and where the user's own go
    (``how``: the option that names their folder)."""
    near = did_you_mean(name, experiments(folders))
    if own is not None:
        return f"hint: no {Path(own) / 'experiment' / (name + '.yaml')}{near}"
    return (f"hint: no experiment '{name}' is shipped{near}; your own are found with "
            f"{how} (DIR/experiment/{name}.yaml)")


def mapping_override_hint(text: str, argv: Sequence[str]) -> list[str]:
    """The hint for a mapping override Hydra could not merge into the mapping there."""
    found = _NOT_OVERRIDDEN.search(text)
    if not found or "is not in struct" not in text:
        return []
    key = found.group(1)
    values = [a.split("=", 1)[1] for a in argv if "=" in a and a.split("=", 1)[0] == key]
    if not values or not values[-1].lstrip().startswith("{"):
        return []
    return [f"hint: {key} holds a mapping already, and Hydra merges a mapping into it key by key: "
            f"replace it whole with '~{key}' '+{key}={values[-1]}'"]


def compose_hints(text: str, folders: Sequence[str | Path], own: str | Path | None,
                  how: str = RUNNER_CONFIG_DIR, argv: Sequence[str] = ()) -> list[str]:
    """The hint lines for Hydra's error ``text`` (none when no hint applies); ``folders`` are
    the config directories searched, ``own`` the user's ``--config-dir`` (None: not given),
    ``argv`` the command line's overrides."""
    merged = mapping_override_hint(text, argv)
    if merged:
        return merged
    found = _NOT_FOUND.search(text)
    if found:
        return [not_found_hint(found.group(1), folders, own, how)]
    inside = _IN_EXPERIMENT.search(text)
    if inside:
        path = experiment_file(inside.group(1), folders)
        groups = kept_defaults(path) if path is not None else []
        if groups:
            return [override_hint(path, groups)]
    return []
