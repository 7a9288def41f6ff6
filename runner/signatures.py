"""What a config may pass to an engine callable (an expression function, an optimizer, a
schedule), read from its Python signature, and which config key an error of the call is about.

The engine's constructors validate their arguments and name the bad one in their messages; these
helpers turn such an error back into the config key a user edits (``groups.g.optimizer.beta1``).
"""

from __future__ import annotations

import inspect
import re


def keyword_parameters(fn, internal) -> list[str]:
    """The keyword parameters a config may pass to ``fn``: all but ``internal`` and ``*args``,
    ``**kwargs``."""
    out = []
    for name, param in inspect.signature(fn).parameters.items():
        if name in internal or param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        out.append(name)
    return out


def required_parameters(fn, internal) -> list[str]:
    """The parameters of ``fn`` without a default (``internal`` and ``*args``, ``**kwargs``
    aside)."""
    return [name for name, param in inspect.signature(fn).parameters.items()
            if name not in internal and param.default is param.empty
            and param.kind not in (param.VAR_POSITIONAL, param.VAR_KEYWORD)]


def param_key(key: str, exc: Exception, params) -> str:
    """The key of the parameter an engine error names (``beta1``, ``clip_norm``), else ``key``."""
    text = str(exc)
    for param in sorted(set(params), key=len, reverse=True):
        if re.search(rf"(?<![A-Za-z0-9_]){re.escape(param)}(?![A-Za-z0-9_])", text):
            return f"{key}.{param}"
    return key


def missing_argument(exc: Exception) -> str | None:
    """The parameter a Python call error says is missing (``f() missing 1 required positional
    argument: 'momentum'``), if that is what it says."""
    found = re.search(r"missing \d+ required (?:positional |keyword-only )?arguments?: '(\w+)'",
                      str(exc))
    return found.group(1) if found else None


def call_signature(fn) -> inspect.Signature | None:
    """fn's signature as a config expression may call it: without ``name``, and what follows it
    keyword-only (so that an extra positional argument is refused instead of becoming the op's
    name); None when Python cannot read it."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    params, after_name = [], False
    for p in sig.parameters.values():
        if p.name == "name":
            after_name = True
        elif after_name and p.kind is p.POSITIONAL_OR_KEYWORD:
            params.append(p.replace(kind=p.KEYWORD_ONLY))
        else:
            params.append(p)
    return sig.replace(parameters=params)


def signature_text(sig: inspect.Signature) -> str:
    """A signature as the error messages and docs/reference.md write it: ``(x, axis=None)``
    without the parentheses and the ``*`` marker."""
    return str(sig)[1:-1].replace("*, ", "")
