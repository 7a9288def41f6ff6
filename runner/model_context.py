"""What every step of building a model shares: the config, the ConfigErrors found so far, the
warnings, the dtype rule of gradcheck's float64 twin, and the lookup of a graph node by the name a
config gives it.

Building collects errors instead of stopping at the first one, so that a run reports every problem
of its config at once; ``raise_errors`` raises them together (as ConfigErrors) where a later step
could not go on without what failed.
"""

from __future__ import annotations

from engine.framework.graph import Tensor
from runner.config_specs import RunConfig
from runner.errors import ConfigError, ConfigErrors, did_you_mean
from runner.model import Model


class BuildContext:
    """The state of one model being built; each build step reports its problems through it."""

    def __init__(self, config: RunConfig, float_dtype: str | None = None):
        self.config = config
        self.spec = config.model
        self.float_dtype = float_dtype  # gradcheck's float64 twin replaces every float dtype
        self.errors: list[ConfigError] = []
        self.warnings: list[str] = []
        self.model: Model | None = None  # once the graph's nodes are built

    def dtype(self, declared: str) -> str:
        if self.float_dtype and declared.startswith("float"):
            return self.float_dtype
        return declared

    def fail(self, key: str, message: str, column: int | None = None) -> None:
        self.errors.append(ConfigError(key, message, column))

    def raise_errors(self) -> None:
        if self.errors:
            raise ConfigErrors(self.errors)

    def node(self, key: str, name, what: str) -> Tensor | None:
        """A graph entry (or an input/constant/variable) by name, or a ConfigError at ``key``."""
        model_names = {**self.model.nodes, **self.model.variables, **self.model.inputs,
                       **self.model.constants}
        if not isinstance(name, str) or name not in model_names:
            self.fail(key, f"no graph node '{name}' for the {what}"
                           f"{did_you_mean(name, model_names)}; graph entries: "
                           f"{', '.join(self.model.nodes) or 'none'}")
            return None
        return model_names[name]


def shape_text(shape) -> str:
    """A shape as an error message writes it: ``[?, 3]``, or ``unknown``."""
    dims = getattr(shape, "dims", shape)
    if dims is None:
        return "unknown"
    return "[" + ", ".join("?" if d is None else str(d) for d in dims) + "]"


def is_scalar(t: Tensor) -> bool:
    return t.shape.dims is not None and len(t.shape.dims) == 0


def engine_message(exc: Exception) -> str:
    """The text of an engine error for a ConfigError (its type's name when it has none)."""
    return str(exc).strip() or type(exc).__name__
