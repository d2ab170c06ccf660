"""Warnings about single examples of a file, said once per kind when its read ends."""

import logging
from typing import Dict, List, Optional, Tuple


class ExampleWarnings:
    """
    Per-example warnings of a read (an answer that fits in no window, mentions cut by `max_entities`), counted by kind
    and said in one line per kind at the end of the read (`report`), with the first few examples: an evaluation file
    logged dozens of per-question warnings that read like failures. Outside a read (`immediately`: a predictor's
    single example), each is logged as it comes.
    """

    SHOWN = 3  # examples named per kind

    def __init__(self, immediately: Optional[logging.Logger] = None) -> None:
        self._kinds: Dict[str, Tuple[int, List[str]]] = {}
        self.immediately = immediately

    def add(self, kind: str, example: str) -> None:
        """One more example of `kind` (the examples it names, in the plural: "answers that fit in no window")."""
        if self.immediately is not None:
            self.immediately.warning("%s: one of the %s", example, kind)
        count, examples = self._kinds.get(kind, (0, []))
        if len(examples) < self.SHOWN:
            examples.append(example)
        self._kinds[kind] = (count + 1, examples)

    def count(self, kind: str) -> int:
        return self._kinds.get(kind, (0, []))[0]

    def report(self, logger: logging.Logger, where: str, of: int, unit: str) -> None:
        """Logs one line per kind ("FILE: 12 answers that fit in no window (of 1000 questions), e.g. q1; q2; q3") and
        starts counting afresh."""
        for kind, (count, examples) in self._kinds.items():
            more = "; ..." if count > len(examples) else ""
            logger.warning("%s: %d %s (of %d %s), e.g. %s%s", where, count, kind, of, unit, "; ".join(examples), more)
        self._kinds = {}
