"""
The mention dictionary as a JSON file, read whole (for small dictionaries): version 2 is
`{"version": 2, "dump", "min_link_probability", "pages": {title: {name: target}}, "link_probability": {name: p},
"entities": {name: [[entity, links], ...]}, "stats": {...}, "name_tokens": 2}`. Version 1 (no "entities") is still read, for the names of
pages; asking it for candidates is an error that says to rebuild it. `MentionDictionary.from_file` also opens the
SQLite file (`MentionStore`), and `save` writes either.
"""

import json
import os
from collections import Counter
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple, Union

from luke_allennlp.resources.mentions.base import NAME_TOKENS, VERSION, MentionDictionaryBase, check_name_tokens, fold
from luke_allennlp.resources.mentions.name_matcher import NameMatcher
from luke_allennlp.resources.mentions.store import MentionStore, write_store
from luke_allennlp.resources.sqlite import is_sqlite

READABLE_VERSIONS = (1, 2)  # version 1 has no "entities" (p(entity | name))


class MentionDictionary(MentionDictionaryBase):
    """
    A mention dictionary in memory: names linked on each page -> their entity, each name's link probability and
    candidates (`MentionDictionaryBase`'s queries).

    # Parameters

    pages : `Dict[str, Dict[str, str]]`
        Page title -> {name: target title}.
    link_probability : `Dict[str, float]`
        Name -> link probability.
    min_link_probability : `float`, optional (default = `0.0`)
        The threshold the dictionary was built with (names below it are absent).
    dump : `str`, optional (default = `""`)
        The dump it was built from.
    stats : `Optional[Dict[str, Any]]`, optional (default = `None`)
        Counts of what was read and dropped.
    entities : `Optional[Dict[str, List[List]]]`, optional (default = `None`)
        Name -> `[[entity title, links], ...]` over the whole dump, most linked first; `None` for a version-1
        file, which has no candidates.
    source : `str`, optional (default = `""`)
        The file it was read from, for error messages.
    """

    def __init__(
        self,
        pages: Dict[str, Dict[str, str]],
        link_probability: Dict[str, float],
        min_link_probability: float = 0.0,
        dump: str = "",
        stats: Optional[Dict[str, Any]] = None,
        entities: Optional[Dict[str, List[List]]] = None,
        source: str = "",
    ) -> None:
        self.pages = pages
        self._link_probability = link_probability
        self.min_link_probability = min_link_probability
        self.dump = dump
        self.stats = stats or {}
        self.entities = entities
        self.source = source
        self._folded: Optional[Dict[str, Counter]] = None

    def link_probability(self, name: str) -> float:
        return self._link_probability.get(name, 0.0)

    def num_pages(self) -> int:
        return len(self.pages)

    def iter_names(self) -> Iterator[Tuple[str, float]]:
        yield from sorted(self._link_probability.items())

    def _names_for_page(self, title: str) -> Dict[str, str]:
        return self.pages.get(title, {})

    def _candidate_counts(self) -> Dict[str, List[List]]:
        if self.entities is None:
            raise ValueError(
                f"{self.source or 'this mention dictionary'} is a version-1 mention dictionary, which has no entity "
                "counts (p(entity | name)) for candidates: rebuild it with `allennlp build-mention-dictionary`"
            )
        return self.entities

    def _entity_links(self, name: str) -> List[Tuple[str, int]]:
        return [(title, links) for title, links in self._candidate_counts().get(name, ())]

    def _folded_entity_links(self, folded: str) -> List[Tuple[str, int]]:
        if self._folded is None:
            self._folded = {}
            for name, counts in self._candidate_counts().items():
                added = self._folded.setdefault(fold(name), Counter())
                for title, links in counts:
                    added[title] += links
        counts = self._folded.get(folded)
        return sorted(counts.items(), key=lambda x: (-x[1], x[0])) if counts else []

    def _name_matcher(
        self, min_link_probability: float, value: Callable[[str], Optional[int]], cjk_characters: bool
    ) -> NameMatcher:
        names = {
            name: value(name)
            for name in self._candidate_counts()
            if self.link_probability(name) >= min_link_probability
        }
        return NameMatcher(names, cjk_characters=cjk_characters)

    def to_json(self) -> Dict[str, Any]:
        return {
            "version": VERSION,
            "dump": self.dump,
            "min_link_probability": self.min_link_probability,
            "pages": self.pages,
            "link_probability": self._link_probability,
            "entities": self.entities or {},
            "stats": self.stats,
            "name_tokens": NAME_TOKENS,
        }

    def save(self, path: "os.PathLike[str] | str") -> None:
        """As JSON if `path` ends with `.json`, else as a SQLite file (`MentionStore`)."""
        if not os.fspath(path).endswith(".json"):
            write_store(self, path)
            return
        with open(path, "w", encoding="utf-8") as f:
            json.dump(self.to_json(), f, ensure_ascii=False)
            f.write("\n")

    @classmethod
    def from_store(cls, store: MentionStore) -> "MentionDictionary":
        """The whole dictionary of a `MentionStore` in memory (for small dictionaries: what the JSON file holds)."""
        pages, probability, entities = store.contents()
        return cls(
            pages, probability, store.min_link_probability, store.dump, store.stats, entities, source=store.source
        )

    @classmethod
    def from_file(cls, path: "os.PathLike[str] | str") -> "Union[MentionDictionary, MentionStore]":
        """
        A mention dictionary file: a SQLite one opened as a `MentionStore` (queried lazily, nothing loaded), a JSON
        one (version 1 or 2) read whole.
        """
        path = os.fspath(path)
        if is_sqlite(path):
            return MentionStore(path)
        with open(path, encoding="utf-8") as f:
            try:
                data = json.load(f)
            except json.JSONDecodeError as error:
                raise ValueError(f"{path}, line {error.lineno}: not JSON ({error.msg})") from None
        if not isinstance(data, dict) or data.get("version") not in READABLE_VERSIONS:
            found = data.get("version") if isinstance(data, dict) else type(data).__name__
            readable = " or ".join(map(str, READABLE_VERSIONS))
            raise ValueError(f"{path}: not a mention dictionary of version {readable} (version: {found!r})")
        check_name_tokens(data, path)
        keys = ("pages", "link_probability") + (("entities",) if data["version"] >= 2 else ())
        for key in keys:
            if not isinstance(data.get(key), dict):
                raise ValueError(f"{path}: the {key!r} entry is missing or not a dict")
        return cls(
            data["pages"],
            data["link_probability"],
            data.get("min_link_probability", 0.0),
            data.get("dump", ""),
            data.get("stats", {}),
            data.get("entities"),
            source=path,
        )
