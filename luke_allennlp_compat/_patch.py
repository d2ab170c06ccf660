"""What every repair module shares: the layer's logger and `replace`, which swaps a function of allennlp for a
repaired one exactly once per repair module."""

import logging
import sys
from typing import Any, Callable, FrozenSet

logger = logging.getLogger("luke_allennlp_compat")

_MARK = "__luke_allennlp_compat__"


def _marks(function: Any) -> FrozenSet[str]:
    marks = getattr(function, _MARK, frozenset())
    return marks if isinstance(marks, frozenset) else frozenset({"?"})  # (an older boolean mark)


def replace(owner: Any, name: str, function: Callable) -> None:
    """Puts `function` in place of `owner.name`, with its docstring, marked with the repair module that defines it (and
    the marks of the function it wraps), so that each repair is applied once, and several repairs of one function
    (e.g. `train_model`'s) each wrap it."""
    previous = getattr(owner, name)
    function.__doc__ = previous.__doc__
    setattr(function, _MARK, _marks(previous) | {function.__module__})
    setattr(owner, name, function)


def repaired(function: Any) -> bool:
    """Whether `function` already holds the replacement of the calling repair module."""
    caller = sys._getframe(1).f_globals.get("__name__", "")
    return caller in _marks(function)
