"""``tf.app.flags``: command-line flags defined by the program and parsed as absl parses them.

``DEFINE_string/integer/float/boolean/bool/list/enum(name, default, help)`` add a flag to
``FLAGS``; ``FLAGS(argv)`` parses ``--name=value``, ``--name value``, ``-name=value``, and for
booleans ``--name``, ``--noname`` and ``--name=false``; ``--`` ends the flags. As TF 1.x's
wrapper of absl, reading a flag before anything parsed the command line parses ``sys.argv``
first (flags nobody defined are then ignored), so module-level code may read ``FLAGS.x``.
"""

from __future__ import annotations

import sys


class Error(Exception):
    """A flag definition or a command-line value is wrong."""


class DuplicateFlagError(Error):
    pass


class IllegalFlagValueError(Error):
    pass


class UnrecognizedFlagError(Error):
    pass


_TRUE = ("true", "t", "1", "yes", "y")
_FALSE = ("false", "f", "0", "no", "n")


def _parse_bool(text):
    if isinstance(text, bool):
        return text
    low = str(text).lower()
    if low in _TRUE:
        return True
    if low in _FALSE:
        return False
    raise ValueError(f"Non-boolean argument to boolean flag: {text!r}")


def _parse_list(text):
    if isinstance(text, list | tuple):
        return list(text)
    return [part.strip() for part in str(text).split(",") if part.strip()]


class Flag:
    """One defined flag: its name, parser, default, help and current value."""

    def __init__(self, name, default, help_text, parse, kind):
        self.name, self.help, self.parse, self.kind = name, help_text, parse, kind
        self.default = None if default is None else self._convert(default)
        self.value = self.default
        self.present = False

    def _convert(self, text):
        try:
            return self.parse(text)
        except ValueError as exc:
            raise IllegalFlagValueError(f"flag --{self.name}={text}: {exc}") from None


class FlagValues:
    """The set of defined flags and their values (``tf.app.flags.FLAGS``)."""

    def __init__(self):
        object.__setattr__(self, "_flags", {})
        object.__setattr__(self, "_parsed", False)

    def _define(self, flag):
        if flag.name in self._flags:
            raise DuplicateFlagError(f"The flag '{flag.name}' is defined twice.")
        self._flags[flag.name] = flag

    def __call__(self, argv, known_only=False):
        """Parse the flags in ``argv[1:]``; return ``argv[0]`` and the arguments left over."""
        argv = list(argv)
        rest, args, i = argv[:1], argv[1:], 0
        while i < len(args):
            arg = args[i]
            i += 1
            if arg == "--":
                rest.extend(args[i:])
                break
            if not arg.startswith("-") or arg == "-":
                rest.append(arg)
                continue
            name, eq, value = arg.lstrip("-").partition("=")
            flag = self._flags.get(name)
            if flag is None and not eq and name.startswith("no") \
                    and getattr(self._flags.get(name[2:]), "kind", None) == "bool":
                self._flags[name[2:]].value, self._flags[name[2:]].present = False, True
                continue
            if flag is None:
                if not known_only:
                    raise UnrecognizedFlagError(f"Unknown command line flag '{name}'")
                rest.append(arg)
                continue
            if not eq:
                if flag.kind == "bool":
                    value = "true"
                elif i < len(args):
                    value, i = args[i], i + 1
                else:
                    raise IllegalFlagValueError(f"Missing value for flag {arg}")
            flag.value, flag.present = flag._convert(value), True
        object.__setattr__(self, "_parsed", True)
        return rest

    def _parse_flags(self, args=None):
        """TF 1.4's way to parse (before absl), which TF 1.4 programs call: the command line's
        known flags; returns the arguments left over."""
        return self(sys.argv if args is None else [sys.argv[0], *args], known_only=True)[1:]

    def is_parsed(self):
        return self._parsed

    def mark_as_parsed(self):
        object.__setattr__(self, "_parsed", True)

    def __getattr__(self, name):
        flags = self.__dict__["_flags"]
        if name == "__flags":  # absl's dict of the flags by name, which TF1 programs print
            if not self._parsed:
                self(sys.argv, known_only=True)
            return dict(flags)
        if name not in flags:
            raise AttributeError(name)
        if not self._parsed:
            self(sys.argv, known_only=True)
        return flags[name].value

    def __setattr__(self, name, value):
        if name not in self._flags:
            raise AttributeError(f"no flag '{name}' is defined (define it with DEFINE_*)")
        self._flags[name].value = value

    def __contains__(self, name):
        return name in self._flags

    def __iter__(self):
        return iter(self._flags)

    def __getitem__(self, name):
        return self._flags[name]

    def flag_values_dict(self):
        return {name: flag.value for name, flag in self._flags.items()}


FLAGS = FlagValues()


def _definer(parse, kind):
    def define(name, default, help, flag_values=FLAGS, **_):  # noqa: A002
        flag_values._define(Flag(name, default, help, parse, kind))

    return define


DEFINE_string = _definer(str, "string")
DEFINE_integer = _definer(int, "int")
DEFINE_float = _definer(float, "float")
DEFINE_boolean = DEFINE_bool = _definer(_parse_bool, "bool")
DEFINE_list = _definer(_parse_list, "list")


def DEFINE_enum(name, default, enum_values, help, flag_values=FLAGS, **_):  # noqa: A002, N802
    """A string flag whose value must be one of ``enum_values``."""

    def parse(text):
        if text not in enum_values:
            raise ValueError(f"value should be one of <{'|'.join(enum_values)}>")
        return text

    flag_values._define(Flag(name, default, help, parse, "enum"))
