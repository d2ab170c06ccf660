"""
Finding the names of a mention dictionary in text: one definition of what a name occurrence is, used both
where the dictionary counts how often a name occurs (its link probability, `mention_dictionary`) and where
names are matched to give entity inputs (SQuAD's, paper Appendix C; entity linking on raw text). Plain Python.

Text is split into tokens, runs of word characters or one other non-space character (`TOKEN`); a word keeps its
combining marks (accents of decomposed text, the vowel signs of Devanagari, Thai, Arabic or Hebrew), which Unicode
counts as word characters (the `regex` module's `\\w`, where `re`'s makes each mark a token of its own). A name
occurs where its exact text (case-sensitive) starts where a token starts and ends where a token ends: "York"
occurs in "New York" but not in "Yorkshire" or "NewYork", "U.S." in "U.S.-based". Optionally
(`cjk_characters`, for text of scripts written without spaces), each kana or CJK ideograph is a token of its own,
so that "男性" occurs in "二人の男性が".
"""

import functools
from typing import Callable, Container, Dict, Iterable, Iterator, List, Optional, Set, Tuple

import regex

# How names and text are split into tokens. `regex`'s `\w` holds combining marks (Unicode's word characters), so a
# word keeps its marks; a mark after a symbol stays with the symbol (one grapheme).
TOKEN = regex.compile(r"\w+|[^\w\s]\p{M}*")
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f"  # kana, CJK ideographs, half-width kana
# TOKEN, but each kana or ideograph alone, with its marks (the voicing mark of decomposed が).
CJK_TOKEN = regex.compile(f"(?!\\p{{M}})[{_CJK}]\\p{{M}}*|(?:(?![{_CJK}])\\w|\\p{{M}})+|[^\\w\\s]\\p{{M}}*")


def cjk_key(name: str) -> Tuple[Optional[str], Optional[int]]:
    """A name's first `CJK_TOKEN` token and its number of them, or (None, None) where they are `TOKEN`'s (a name
    without kana or ideographs, or one such character alone): what a store of names keeps beside its `TOKEN` key to
    answer a `cjk_characters` matcher."""
    tokens = CJK_TOKEN.findall(name)
    if tokens == TOKEN.findall(name):
        return None, None
    return (tokens[0] if tokens else None), len(tokens)


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
    cjk_characters : `bool`, optional (default = `False`)
        Each kana or CJK ideograph is a token (`CJK_TOKEN`): names are found at any such character in Japanese or
        Chinese text.
    """

    _token = TOKEN

    def __init__(self, names: "Dict[str, Optional[int]] | Iterable[str]", cjk_characters: bool = False) -> None:
        self.names: Dict[str, Optional[int]] = dict(names) if isinstance(names, dict) else dict.fromkeys(names)
        if cjk_characters:
            self._token = CJK_TOKEN
        lengths: Dict[str, Set[int]] = {}
        for name in self.names:
            tokens = self._token.findall(name)
            if tokens:
                lengths.setdefault(tokens[0], set()).add(len(tokens))
        # Per first token, the names' lengths in tokens, longest first.
        self._lengths_by_first_token = {token: tuple(sorted(n, reverse=True)) for token, n in lengths.items()}

    def _first(self, token: str) -> Tuple[Tuple[int, ...], Optional[Container[str]]]:
        """The lengths in tokens of the names that start with `token`, longest first, and names to test candidates
        against (None: ask `_has`)."""
        return self._lengths_by_first_token.get(token, ()), self.names

    def _has(self, name: str) -> bool:
        return name in self.names

    def value(self, name: str) -> Optional[int]:
        """The entity id (or None) a found name was given."""
        return self.names[name]

    def _at_each_token(self, text: str) -> Iterator[List[Tuple[int, int, str]]]:
        """For each token of `text`, the names starting there, longest first, as (start, end exclusive, name)."""
        tokens = [(m.start(), m.end(), m.group()) for m in self._token.finditer(text)]
        for i, (start, _, token) in enumerate(tokens):
            found = []
            lengths, names = self._first(token)
            for length in lengths:
                if i + length <= len(tokens):
                    end = tokens[i + length - 1][1]
                    name = text[start:end]
                    if name in names if names is not None else self._has(name):
                        found.append((start, end, name))
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


class LookupNameMatcher(NameMatcher):
    """
    A `NameMatcher` whose names are looked up as they are met, in a store too large to hold (a mention
    dictionary's SQLite file): `first_token(token)` gives the lengths in tokens of the names starting with `token`,
    longest first, and, when they are few, those names (else None: each is then asked with `contains(name)`);
    `value(name)` gives a found name's value. Answers are cached (at most `cache_size` of each), so memory grows
    with the text read, up to a bound, not with the store. With `cjk_characters`, tokens are `CJK_TOKEN`'s, and
    `first_token` must answer for them.
    """

    def __init__(
        self,
        first_token: Callable[[str], Tuple[Tuple[int, ...], Optional[Container[str]]]],
        contains: Callable[[str], bool],
        value: Callable[[str], Optional[int]] = lambda name: None,
        cache_size: int = 1 << 14,
        cjk_characters: bool = False,
    ) -> None:
        self.names = {}
        if cjk_characters:
            self._token = CJK_TOKEN
        self._first = functools.lru_cache(maxsize=cache_size)(first_token)  # type: ignore[method-assign]
        self._has = functools.lru_cache(maxsize=cache_size * 8)(contains)  # type: ignore[method-assign]
        self._value = functools.lru_cache(maxsize=cache_size)(value)

    def value(self, name: str) -> Optional[int]:
        return self._value(name)
