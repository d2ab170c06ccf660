"""What every repair module shares: the layer's logger and `replace`, which swaps a function of allennlp for a
repaired one exactly once."""

import logging
from typing import Any, Callable

logger = logging.getLogger("luke_allennlp_compat")


def replace(owner: Any, name: str, function: Callable) -> None:
    """Puts `function` in place of `owner.name`, with its docstring, marked so that a repair is never applied twice."""
    function.__doc__ = getattr(owner, name).__doc__
    function.__luke_allennlp_compat__ = True  # type: ignore[attr-defined]
    setattr(owner, name, function)


def repaired(function: Any) -> bool:
    """Whether `function` is already one of this layer's replacements."""
    return getattr(function, "__luke_allennlp_compat__", False)
