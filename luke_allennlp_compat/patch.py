"""
The one way a function of allennlp is replaced, by this layer's repairs and by the project's behaviours on allennlp's
commands alike (the project's one import of this layer besides `install`: import-linter's contract in pyproject.toml).
Standard library only: it is imported at start-up.

`replace` swaps a function for a new one marked with the module that defines it (and the marks of the function it
wraps); `repaired` says whether the calling module's replacement is already in place, so that each repair or behaviour
module replaces a function once however often its hook runs, and several modules (e.g. of `train_model`) each wrap it.
"""

import logging
import sys
from typing import Any, Callable, FrozenSet

logger = logging.getLogger("luke_allennlp_compat")

MARK = "__luke_allennlp_compat__"  # the attribute of a replaced function: the modules whose replacement it is


def marks(function: Any) -> FrozenSet[str]:
    """The modules whose replacement `function` is (or wraps)."""
    return getattr(function, MARK, frozenset())


def replace(owner: Any, name: str, function: Callable) -> None:
    """Puts `function` in place of `owner.name`, with its docstring, marked with the module that defines it and the
    marks of the function it wraps."""
    previous = getattr(owner, name)
    function.__doc__ = previous.__doc__
    setattr(function, MARK, marks(previous) | {function.__module__})
    setattr(owner, name, function)


def repaired(function: Any) -> bool:
    """Whether `function` already holds the replacement of the calling module."""
    return sys._getframe(1).f_globals.get("__name__", "") in marks(function)
