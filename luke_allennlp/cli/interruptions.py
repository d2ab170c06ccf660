"""
A signal that stops a command (SIGTERM, SIGHUP), remembered until the command has ended. The `allennlp` command's
handler (`user_errors`) raises `Interrupted` wherever the main thread is, and code there may catch it as any
`Exception`: torch's `load_state_dict` rewords it into a `RuntimeError` about a parameter, a fallback takes it for a
format it does not read and goes on. So the handler also records it here: allennlp's trainer (and so the project's,
which calls it) raises it again before its next batch (`raise_pending`), and the command reports the interruption at
its end whatever surfaced (`pending`).
"""

import signal
from typing import List, Optional

_pending: List[int] = []  # the signal received, until the command ends
_interrupted_class: Optional[type] = None


def interrupted_class() -> type:
    """`Interrupted(signum)`: what SIGTERM and SIGHUP raise, a `SigTermReceived` (allennlp's `train` catches it to
    archive the best weights so far, as for Ctrl-C)."""
    global _interrupted_class
    if _interrupted_class is None:
        from allennlp.common.util import SigTermReceived

        class Interrupted(SigTermReceived):
            def __init__(self, signum: int) -> None:
                super().__init__(signal.Signals(signum).name)
                self.signum = signum

        _interrupted_class = Interrupted
    return _interrupted_class


def record(signum: int) -> BaseException:
    """Remembers `signum` and returns the exception to raise for it."""
    if not _pending:
        _pending.append(signum)
    return interrupted_class()(signum)


def pending() -> Optional[int]:
    """The signal received since the command started (or `clear`), if any."""
    return _pending[0] if _pending else None


def clear() -> None:
    _pending.clear()


def raise_pending() -> None:
    """Raises the `Interrupted` of a signal received but not yet acted on (code caught the first one)."""
    if _pending:
        raise interrupted_class()(_pending[0])
