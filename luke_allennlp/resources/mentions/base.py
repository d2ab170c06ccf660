"""
What a mention dictionary answers, whichever file holds it: the names linked on each Wikipedia page and their
targets, how likely each name is to be a link where it occurs (its link probability), and the entities each name
links to over the whole dump (its candidates, by p(entity | name)). The queries are written here once; a backend
(`MentionDictionary`, the JSON file in memory; `MentionStore`, the SQLite file queried lazily) gives the counts
they are computed from.
"""

import abc
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

from luke_allennlp.resources.mentions.name_matcher import NameMatcher
from luke_allennlp.resources.titles import normalize_title

FORMAT = "luke-mention-dictionary"  # the SQLite file's `format`
VERSION = 2  # of both files: version 2 has candidates (p(entity | name)), version 1 (JSON only) has not
# How names are cut into tokens (`name_matcher.TOKEN`, `CJK_TOKEN`), on which a dictionary's lookups and link
# probabilities depend: 2 since a word keeps its combining marks (decomposed "München", Devanagari vowel signs); the
# dictionaries built before have no `name_tokens` and find and count names differently (`check_name_tokens`).
NAME_TOKENS = 2


def check_name_tokens(meta: Dict[str, Any], path: str) -> None:
    """
    Refuses a mention dictionary that `allennlp build-mention-dictionary` wrote with other name tokens than today's
    `NAME_TOKENS` (the SQLite file's metadata, or the JSON file's top level: a build's `stats` without
    `name_tokens`), naming the command that rebuilds it. A dictionary written by hand (no build `stats`) is read as
    it is. Both backends call it as they open a file.
    """
    found = meta.get("name_tokens")
    if found == NAME_TOKENS or (found is None and not meta.get("stats")):
        return
    stats = meta.get("stats") or {}
    command = [
        "allennlp build-mention-dictionary",
        meta.get("dump") or "DUMP",
        path,
        f"--min-link-probability {meta.get('min_link_probability', 0.0):g}",
    ]
    if stats.get("links_in", "page") != "page":
        command.append(f"--links-in {stats['links_in']}")
    if stats.get("include_missing_pages"):
        command.append("--include-missing-pages")
    raise ValueError(
        f"{path}: built before names kept their combining marks (name tokens {found or 1}, now {NAME_TOKENS}): it "
        f"finds and counts names differently; rebuild it: {' '.join(command)} (with its --page-titles, if any)"
    )


def fold(name: str) -> str:
    """A name without case and white space (the key of `candidates(..., ignore_case=True)`)."""
    return "".join(name.split()).casefold()


class MentionDictionaryBase(abc.ABC):
    """
    A mention dictionary's queries: `names_for_page`, `link_probability`, `candidates`, `name_matcher`,
    `num_pages`, `iter_names`; and what it was built from and with: `dump`, `min_link_probability` (names below it
    are absent), `stats` (counts of what was read and dropped), `source` (the file it was read from, for error
    messages).
    """

    source: str = ""
    dump: str = ""
    min_link_probability: float = 0.0
    stats: Dict[str, Any]

    def names_for_page(self, title: str) -> Dict[str, str]:
        """The names linked on a page (title in any form: `Super_Bowl_50`) -> target titles; {} for an unknown page."""
        return self._names_for_page(normalize_title(title))

    @abc.abstractmethod
    def link_probability(self, name: str) -> float:
        """How often the name is a link where it occurs; 0.0 for a name never linked (or below the threshold)."""

    def candidates(self, name: str, ignore_case: bool = False) -> List[Tuple[str, float]]:
        """
        The entities `name` links to, as `(title, p(entity | name))`, most probable first (ties by title); [] for a
        name never linked (or below the threshold). With `ignore_case`, a name not found as written is looked up
        without case and white space (`"new  york"` finds the links of "New York" and "New york" together), for
        uncased tokenizers.
        """
        counts = self._entity_links(name)
        if not counts and ignore_case:
            counts = self._folded_entity_links(fold(name))
        total = sum(links for _, links in counts)
        return [(title, links / total) for title, links in counts]

    def name_matcher(
        self,
        min_link_probability: float,
        value: Callable[[List[Tuple[str, float]]], Optional[int]],
        cjk_characters: bool = False,
    ) -> NameMatcher:
        """
        A matcher of the names that have candidates and a link probability of at least `min_link_probability`, each
        found name given `value(its candidates)`; `cjk_characters`: found at any kana or CJK ideograph too
        (`NameMatcher`'s), for text without spaces.
        """
        return self._name_matcher(min_link_probability, lambda name: value(self.candidates(name)), cjk_characters)

    @abc.abstractmethod
    def num_pages(self) -> int:
        """How many pages have names."""

    @abc.abstractmethod
    def iter_names(self) -> Iterator[Tuple[str, float]]:
        """Every name with its link probability, in name order."""

    # What a backend gives the queries.

    @abc.abstractmethod
    def _names_for_page(self, title: str) -> Dict[str, str]:
        """The names of the page with this (normalised) title -> target titles."""

    @abc.abstractmethod
    def _entity_links(self, name: str) -> List[Tuple[str, int]]:
        """`(title, links of the name to it)` for the name as written, most linked first (ties by title)."""

    @abc.abstractmethod
    def _folded_entity_links(self, folded: str) -> List[Tuple[str, int]]:
        """`_entity_links` added up over the names whose `fold` is `folded`."""

    @abc.abstractmethod
    def _name_matcher(
        self, min_link_probability: float, value: Callable[[str], Optional[int]], cjk_characters: bool
    ) -> NameMatcher:
        """`name_matcher`, with `value` given the found name."""
