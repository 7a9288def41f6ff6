"""Config files are loaded with a bound on their size: at most ``MAX_VALUES`` values per YAML
document, counting every value an alias expands to.

YAML anchors and aliases let a few lines stand for exponentially many values (the "billion
laughs"), and OmegaConf copies every alias into a node of its own; a literal of a million numbers
costs minutes to load. Either used to run for minutes at 100% CPU with growing memory. The guard
counts nodes while the parser composes them (a huge literal stops early) and, once a document is
composed, counts what its aliases expand to (linear in its distinct nodes); past the bound,
loading stops with a YAML error naming the file and line, which ``python -m runner`` reports in
one line (``one_line``), exiting with 2.
"""

from __future__ import annotations

import yaml

MAX_VALUES = 20_000
_ADVICE = "keep large arrays in a data file (data: {source: npz, path: ...})"


class ConfigTooLarge(yaml.YAMLError):
    """The refusal: one line naming the file and the line, and what to do instead."""

    def __init__(self, node, what: str):
        mark = getattr(node, "start_mark", None)
        where = f"{mark.name} (line {mark.line + 1})" if mark is not None else "a config file"
        self.message = f"{where}: this YAML document {what} more than {MAX_VALUES:,} values; " \
                       f"{_ADVICE}"
        super().__init__(self.message)

    def __str__(self) -> str:
        return self.message


def one_line(text: str) -> str:
    """Hydra's report of a ConfigTooLarge (its type's name, then the message) as the message
    alone."""
    prefix = f"{ConfigTooLarge.__module__}.{ConfigTooLarge.__qualname__}: "
    return "".join(line[len(prefix):] if line.startswith(prefix) else line
                   for line in text.splitlines(keepends=True))


def expanded_size(root) -> int:
    """How many values the node graph under ``root`` stands for, aliases expanded (each
    distinct node counted once per reference); stops counting past MAX_VALUES."""
    sizes: dict[int, int] = {}
    active: set[int] = set()

    def size(node) -> int:
        key = id(node)
        if key in sizes:
            return sizes[key]
        if key in active:
            raise yaml.constructor.ConstructorError(None, None, "a YAML alias refers to the "
                                                                "value that contains it",
                                                    node.start_mark)
        active.add(key)
        total = 1
        if isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                total += size(k) + size(v)
                if total > MAX_VALUES:
                    break
        elif isinstance(node, yaml.SequenceNode):
            for item in node.value:
                total += size(item)
                if total > MAX_VALUES:
                    break
        active.discard(key)
        sizes[key] = total
        return total

    return size(root)


def guarded_loader(base):
    """A subclass of the YAML Loader ``base`` that enforces MAX_VALUES."""

    class Guarded(base):
        _composed = 0

        def compose_node(self, parent, index):
            self._composed += 1
            if self._composed > MAX_VALUES:
                raise ConfigTooLarge(self.peek_event(), "has")
            return super().compose_node(parent, index)

        def get_single_node(self):
            node = super().get_single_node()
            if node is not None and expanded_size(node) > MAX_VALUES:
                raise ConfigTooLarge(node, "expands (through its aliases) to")
            return node

    return Guarded


def install() -> None:
    """Make OmegaConf (and so Hydra) load every YAML file with the guard."""
    from omegaconf import _utils

    if getattr(_utils.get_yaml_loader, "guarded", False):
        return
    original = _utils.get_yaml_loader

    def get_yaml_loader():
        return guarded_loader(original())

    get_yaml_loader.guarded = True
    _utils.get_yaml_loader = get_yaml_loader
