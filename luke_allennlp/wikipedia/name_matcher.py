"""
Finding the names of a mention dictionary in text, as SQuAD's entity inputs (paper Appendix C) and entity linking
on raw text do. Plain Python.
"""
import re
from typing import Dict, List, Optional, Tuple

from luke_allennlp.wikipedia.mention_dictionary import TOKEN  # the tokens the dictionary counts names by

_WORD_CHARACTER = re.compile(r"\w")


class NameMatcher:
    """
    Finds names in text: case-sensitive, starting and ending at token boundaries (tokens as the mention
    dictionary counts occurrences: runs of word characters, or one other non-space character), scanning left to
    right and taking the longest name that starts at each token, without overlaps (as LUKE's `_detect_mentions`
    does over words).

    # Parameters

    names : `Dict[str, Optional[int]]`
        Each name and its entity id; `None` for a name whose target is not in the entity vocabulary (it is
        still matched, so that it hides the shorter names inside it, and counted).
    """

    def __init__(self, names: Dict[str, Optional[int]]) -> None:
        self.names = names
        self._by_first_token: Dict[str, List[str]] = {}
        for name in sorted(names, key=len, reverse=True):
            first = TOKEN.match(name)
            if first is not None:  # a name starting with white space never matches
                self._by_first_token.setdefault(first.group(), []).append(name)

    def find(self, text: str) -> List[Tuple[int, int, str]]:
        """Matches as (character start, end exclusive, name), in text order."""
        found = []
        position = 0
        for token in TOKEN.finditer(text):
            start = token.start()
            if start < position:
                continue
            for name in self._by_first_token.get(token.group(), ()):
                end = start + len(name)
                # The match must end where a token ends: not between two word characters.
                inside_word = end < len(text) and _WORD_CHARACTER.match(text[end - 1]) and _WORD_CHARACTER.match(text[end])
                if text.startswith(name, start) and not inside_word:
                    found.append((start, end, name))
                    position = end
                    break
        return found
