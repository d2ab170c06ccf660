"""
Finding the names of a mention dictionary in text: one definition of what a name occurrence is, used both
where the dictionary counts how often a name occurs (its link probability, `mention_dictionary`) and where
names are matched to give entity inputs (SQuAD's, paper Appendix C; entity linking on raw text). Plain Python.

Text is split into tokens, runs of word characters or one other non-space character (`TOKEN`). A name
occurs where its exact text (case-sensitive) starts where a token starts and ends where a token ends: "York"
occurs in "New York" but not in "Yorkshire" or "NewYork", "U.S." in "U.S.-based".
"""

import re
from typing import Dict, Iterable, Iterator, List, Optional, Set, Tuple

TOKEN = re.compile(r"\w+|[^\w\s]")  # how names and text are split into tokens


class NameMatcher:
    """
    Finds names in text at token boundaries (see the module's docstring).

    - `occurrences(text)`: every occurrence of every name, overlapping ones included (how often each name
      occurs, for link probabilities);
    - `find(text)`: the mentions, scanning left to right and taking the longest name that starts at each token,
      without overlaps (as LUKE's `_detect_mentions` does over words).

    # Parameters

    names : `Dict[str, Optional[int]]` or an iterable of names
        Each name and its entity id; `None` for a name whose target is not in the entity vocabulary (it is
        still matched, so that it hides the shorter names inside it). A plain iterable gives every name `None`.
    """

    def __init__(self, names: "Dict[str, Optional[int]] | Iterable[str]") -> None:
        self.names: Dict[str, Optional[int]] = dict(names) if isinstance(names, dict) else dict.fromkeys(names)
        lengths: Dict[str, Set[int]] = {}
        for name in self.names:
            tokens = TOKEN.findall(name)
            if tokens:
                lengths.setdefault(tokens[0], set()).add(len(tokens))
        # Per first token, the names' lengths in tokens, longest first.
        self._lengths_by_first_token = {token: tuple(sorted(n, reverse=True)) for token, n in lengths.items()}

    def _at_each_token(self, text: str) -> Iterator[List[Tuple[int, int, str]]]:
        """For each token of `text`, the names starting there, longest first, as (start, end exclusive, name)."""
        tokens = [(m.start(), m.end(), m.group()) for m in TOKEN.finditer(text)]
        for i, (start, _, token) in enumerate(tokens):
            found = []
            for length in self._lengths_by_first_token.get(token, ()):
                if i + length <= len(tokens):
                    end = tokens[i + length - 1][1]
                    if text[start:end] in self.names:
                        found.append((start, end, text[start:end]))
            yield found

    def occurrences(self, text: str) -> List[Tuple[int, int, str]]:
        """Every occurrence of every name (overlaps included), as (start, end exclusive, name), in text order."""
        return [occurrence for found in self._at_each_token(text) for occurrence in found]

    def find(self, text: str) -> List[Tuple[int, int, str]]:
        """The longest name at each token, left to right, without overlaps: (start, end exclusive, name)."""
        matches = []
        position = 0
        for found in self._at_each_token(text):
            if found and found[0][0] >= position:
                matches.append(found[0])
                position = found[0][1]
        return matches
