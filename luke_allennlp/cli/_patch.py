"""What every behaviour module shares: the logger, and `replace`, which swaps a function of allennlp for this
package's version exactly once per behaviour module (the compatibility layer's repairs mark their functions the same
way, so that a behaviour wrapping a repaired function keeps both marks)."""

import logging
import sys
from typing import Any, Callable, FrozenSet

logger = logging.getLogger("luke_allennlp.cli")

MARK = "__luke_allennlp_compat__"  # the attribute both layers mark replaced functions with


def marks(function: Any) -> FrozenSet[str]:
    """The modules whose replacement `function` is (or wraps)."""
    found = getattr(function, MARK, frozenset())
    return found if isinstance(found, frozenset) else frozenset({"?"})


def replace(owner: Any, name: str, function: Callable) -> None:
    """Puts `function` in place of `owner.name`, with its docstring, marked with the module that defines it (and the
    marks of the function it wraps), so that each behaviour is applied once and several (e.g. `train_model`'s) each
    wrap it."""
    previous = getattr(owner, name)
    function.__doc__ = previous.__doc__
    setattr(function, MARK, marks(previous) | {function.__module__})
    setattr(owner, name, function)


def repaired(function: Any) -> bool:
    """Whether `function` already holds the replacement of the calling module."""
    return sys._getframe(1).f_globals.get("__name__", "") in marks(function)
