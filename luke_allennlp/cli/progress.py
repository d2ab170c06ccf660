"""
Progress bars that read well in a file.

allennlp's progress bars (`Tqdm`: reading data, building the vocabulary, training, validation, `evaluate`,
`predict`) redraw one line with `\\r` ten times a second. Written to a file (`2> train.log`, a batch job's log,
`nohup`), that is one line growing for hours, which `tail` and `less` show as one screen of redraws. When standard
error is not a terminal, each redraw here is a line of its own, at most one every `LUKE_PROGRESS_SECONDS` seconds
(default 10; 0: every update, one line a training step) and the last one when the bar closes; allennlp's copy of the
progress in the log file (`out.log`, every 10 s) is unchanged. On a terminal nothing changes. (allennlp's
`--file-friendly-logging` did the same for `train` alone, every 2 s, when asked.)
"""

import os
import sys
import time
import types
from typing import Any

from luke_allennlp_compat.patch import repaired, replace

DEFAULT_SECONDS = 10.0


def to_terminal() -> bool:
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):  # no stream, or a closed one
        return False


def seconds_between_lines() -> float:
    """`LUKE_PROGRESS_SECONDS` (a number of seconds, at least 0), else the default."""
    value = os.environ.get("LUKE_PROGRESS_SECONDS", "").strip()
    if not value:
        return DEFAULT_SECONDS
    try:
        seconds = float(value)
    except ValueError:
        raise ValueError(f"LUKE_PROGRESS_SECONDS is {value!r}: give a number of seconds (0: every update)") from None
    if seconds < 0:
        raise ValueError(f"LUKE_PROGRESS_SECONDS is {value!r}: give a number of seconds (0: every update)")
    return seconds


def repair_tqdm(module: types.ModuleType) -> None:
    original = module.Tqdm.tqdm
    if repaired(original):
        return

    class ProgressLines(module.TqdmToLogsWriter):  # type: ignore[name-defined,misc]
        """tqdm's redraws as lines on standard error (carriage returns and cursor moves dropped; a redraw at the same
        count, as at the bar's close, not again), and allennlp's copy in the log file."""

        def __init__(self) -> None:
            super().__init__()
            self.bar: Any = None
            self.count: Any = None  # the bar's count at the last line

        def write(self, message: str) -> None:
            line = module.replace_cr_with_newline(message).strip()
            count = getattr(self.bar, "n", None)
            if not line or (count is not None and count == self.count):
                return
            self.count = count
            sys.stderr.write(line + "\n")
            now = time.time()
            if now - self.last_message_written_time >= 10 or "100%" in line:
                module.logger.info(line)
                self.last_message_written_time = now

    def tqdm(*args: Any, **kwargs: Any) -> Any:
        if to_terminal():
            return original(*args, **kwargs)
        lines = ProgressLines()
        bar = original(*args, **{"file": lines, "mininterval": seconds_between_lines(), **kwargs})
        lines.bar = bar
        return bar

    replace(module.Tqdm, "tqdm", tqdm)
    module.Tqdm.tqdm = staticmethod(tqdm)
