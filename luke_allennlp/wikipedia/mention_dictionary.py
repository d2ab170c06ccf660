"""
The mention dictionary of LUKE's SQuAD experiments (paper, Appendix C): for each Wikipedia page, the names
linked on it and the entity each refers to, and how likely each name is to be a link at all.

Built in two streaming passes over a dump (`build_mention_dictionary`):

1. Articles are cleaned (`clean_wikitext`); every link to an article gives a name (its anchor text, as
   shown) and a target; titles and redirects are collected. A page's names come from the links it shows
   anywhere (`links_in="page"`, the default: running text, infoboxes and other templates, tables, references,
   image captions; a name the running text links keeps the text's target) or in its running text only
   (`"text"`, as LUKE's wikipedia2vec-based dictionary). Targets are then followed through redirects; on each
   page a name that refers to two different entities is dropped for that page, and a name whose target is no
   article of the dump (a missing page, a redirect loop) is dropped.
2. Every name's occurrences in the articles' running text are counted: matches at word boundaries (tokens of
   `\\w+` or one other non-space character), case-sensitive, as `NameMatcher.occurrences` finds them (the
   matcher that gives SQuAD's entity inputs uses the same definition). `link_probability(name)` = times linked
   in the running text / times it occurs there, linked or not: the probability that the name is a link where it
   occurs in prose, which is what the SQuAD reader matches names in (tables and templates have no prose to
   count occurrences in). Names below `min_link_probability` are dropped, and so are names never linked in
   running text.

Over the whole dump (whatever `page_titles` keeps), each kept name's links of the running text are counted per
entity (targets through redirects, the same articles as above), which gives the candidates of entity disambiguation and linking:
`candidates(name)` = the entities the name links to, by p(entity | name) = links of the name to the entity /
links of the name to any entity.

The result is one JSON file, read back by `MentionDictionary.from_file`:
`{"version": 2, "dump", "min_link_probability", "pages": {title: {name: target}}, "link_probability":
{name: p}, "entities": {name: [[entity, links], ...]}, "stats": {...}}`. Version 1 (no "entities") is still
read, for the names of pages; asking it for candidates is an error that says to rebuild it.
"""

import json
import logging
import os
from collections import Counter
from typing import Any, Dict, Iterable, List, Optional, Set, Tuple

from luke_allennlp.wikipedia.dump import WikiDump, WikiPage
from luke_allennlp.wikipedia.markup import LINK_SCOPES, clean_wikitext
from luke_allennlp.wikipedia.name_matcher import TOKEN, NameMatcher  # noqa: F401  (TOKEN: the name tokens, defined there)
from luke_allennlp.wikipedia.parallel import ordered_map, page_batches
from luke_allennlp.wikipedia.redirects import LOOP, MISSING, TitleCollector
from luke_allennlp.wikipedia.titles import Namespaces, normalize_title

logger = logging.getLogger(__name__)

VERSION = 2
READABLE_VERSIONS = (1, 2)  # version 1 has no "entities" (p(entity | name))


class MentionDictionary:
    """
    Names linked on each page -> their entity, and each name's link probability.

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

    def names_for_page(self, title: str) -> Dict[str, str]:
        """The names linked on a page (title in any form: `Super_Bowl_50`) -> target titles; {} for an unknown page."""
        return self.pages.get(normalize_title(title), {})

    def link_probability(self, name: str) -> float:
        """How often the name is a link where it occurs; 0.0 for a name never linked (or below the threshold)."""
        return self._link_probability.get(name, 0.0)

    def candidates(self, name: str, ignore_case: bool = False) -> List[Tuple[str, float]]:
        """
        The entities `name` links to, as `(title, p(entity | name))`, most probable first (ties by title); [] for a
        name never linked (or below the threshold). With `ignore_case`, a name not found as written is looked up
        without case and white space (`"new  york"` finds the links of "New York" and "New york" together), for
        uncased tokenizers.
        """
        if self.entities is None:
            raise ValueError(
                f"{self.source or 'this mention dictionary'} is a version-1 mention dictionary, which has no entity "
                "counts (p(entity | name)) for candidates: rebuild it with `allennlp build-mention-dictionary`"
            )
        counts = self.entities.get(name)
        if counts is None and ignore_case:
            folded = self._folded_counts().get(_fold(name))
            counts = sorted(folded.items(), key=lambda x: (-x[1], x[0])) if folded else None
        if not counts:
            return []
        total = sum(count for _, count in counts)
        return [(title, count / total) for title, count in counts]

    def _folded_counts(self) -> Dict[str, Counter]:
        if self._folded is None:
            assert self.entities is not None
            self._folded = {}
            for name, counts in self.entities.items():
                folded = self._folded.setdefault(_fold(name), Counter())
                for title, count in counts:
                    folded[title] += count
        return self._folded

    def to_json(self) -> Dict[str, Any]:
        return {"version": VERSION, "dump": self.dump, "min_link_probability": self.min_link_probability,
                "pages": self.pages, "link_probability": self._link_probability, "entities": self.entities or {},
                "stats": self.stats}  # fmt: skip

    def save(self, path: "os.PathLike[str] | str") -> None:
        with open(path, "w", encoding="utf-8") as f:
            json.dump(self.to_json(), f, ensure_ascii=False)
            f.write("\n")

    @classmethod
    def from_file(cls, path: "os.PathLike[str] | str") -> "MentionDictionary":
        path = os.fspath(path)
        with open(path, encoding="utf-8") as f:
            try:
                data = json.load(f)
            except json.JSONDecodeError as error:
                raise ValueError(f"{path}, line {error.lineno}: not JSON ({error.msg})") from None
        if not isinstance(data, dict) or data.get("version") not in READABLE_VERSIONS:
            found = data.get("version") if isinstance(data, dict) else type(data).__name__
            readable = " or ".join(map(str, READABLE_VERSIONS))
            raise ValueError(f"{path}: not a mention dictionary of version {readable} (version: {found!r})")
        keys = ("pages", "link_probability") + (("entities",) if data["version"] >= 2 else ())
        for key in keys:
            if not isinstance(data.get(key), dict):
                raise ValueError(f"{path}: the {key!r} entry is missing or not a dict")
        return cls(data["pages"], data["link_probability"], data.get("min_link_probability", 0.0),
                   data.get("dump", ""), data.get("stats", {}), data.get("entities"), source=path)  # fmt: skip


def _fold(name: str) -> str:
    """A name without case and white space (the key of `candidates(..., ignore_case=True)`)."""
    return "".join(name.split()).casefold()


def read_page_titles(path: "os.PathLike[str] | str") -> List[str]:
    """Page titles from a file: a SQuAD JSON file (its articles' titles), or one title per line."""
    path = os.fspath(path)
    with open(path, encoding="utf-8") as f:
        text = f.read()
    if not text.lstrip().startswith("{"):
        return [line.strip() for line in text.splitlines() if line.strip()]
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise ValueError(f"{path}, line {error.lineno}: not JSON ({error.msg})") from None
    articles = data.get("data") if isinstance(data, dict) else None
    if not isinstance(articles, list) or not all(isinstance(a, dict) and "title" in a for a in articles):
        raise ValueError(
            f'{path}: a JSON file of titles must be in SQuAD\'s format, {{"data": [{{"title": ...}}, ...]}}'
        )
    return [article["title"] for article in articles]


# --- pass 1: names linked on each page -----------------------------------------------------------------------------


PageLinks = Tuple[str, List[Tuple[str, str]], List[Tuple[str, str]]]  # title, (name, target) in and outside the text


def _page_links(item: Tuple[Namespaces, str, List[WikiPage]]) -> Tuple[List[PageLinks], Counter]:
    """For each page of a batch: its title and the (name, target) of its links to articles in `scope`, those of
    the running text apart; and the batch's links counted by what became of them."""
    namespaces, scope, pages = item
    result = []
    counts: Counter = Counter()
    for page in pages:
        clean = clean_wikitext(page.text, namespaces)
        links, kinds, outside = clean.scoped_links(scope)
        result.append((page.title, links[: len(clean.links)], links[len(clean.links) :]))  # (the text's come first)
        counts["links"] += clean.total_links
        counts["links_counted"] += len(links)
        counts.update({f"other_links:{kind}": n for kind, n in kinds.items()})
        counts.update({f"links_not_counted:{place}": n for place, n in outside.items()})
    return result, counts


# --- pass 2: occurrences of the names in text -------------------------------------------------------------------

_matcher = NameMatcher(())  # the names of pass 1, in each worker process


def _init_matcher(names: Set[str]) -> None:
    global _matcher
    _matcher = NameMatcher(names)


def count_unlinked_occurrences(text: str, links: Iterable[Tuple[int, int]]) -> Counter:
    """
    How often each known name occurs in `text` (every occurrence at token boundaries, overlapping ones included:
    `NameMatcher.occurrences`), apart from the link anchors `links` (their `(start, end)`), which are counted
    as links already.
    """
    linked = set(links)
    return Counter(name for start, end, name in _matcher.occurrences(text) if (start, end) not in linked)


def _count_occurrences(item: Tuple[Namespaces, List[WikiPage]]) -> Counter:
    namespaces, pages = item
    counts: Counter = Counter()
    for page in pages:
        clean = clean_wikitext(page.text, namespaces)
        counts.update(count_unlinked_occurrences(clean.text, ((link.start, link.end) for link in clean.links)))
    return counts


def build_mention_dictionary(
    dump_path: "os.PathLike[str] | str",
    min_link_probability: float = 0.01,
    num_workers: int = 1,
    page_titles: Optional[Iterable[str]] = None,
    max_pages: Optional[int] = None,
    include_missing_pages: bool = False,
    links_in: str = "page",
) -> MentionDictionary:
    """
    # Parameters

    dump_path : `PathLike`
        A `pages-articles` XML dump (plain, `.bz2` or `.gz`).
    min_link_probability : `float`, optional (default = `0.01`)
        Names linked less often than this where they occur are dropped.
    num_workers : `int`, optional (default = `1`)
        Processes cleaning markup and counting names.
    page_titles : `Optional[Iterable[str]]`, optional (default = `None`)
        Keep the names of these pages only (e.g. SQuAD's articles); link probabilities still come from the
        whole dump. All pages by default, which for a full dump is a large file.
    max_pages : `Optional[int]`, optional (default = `None`)
        Read only the first pages of the dump (all namespaces counted).
    include_missing_pages : `bool`, optional (default = `False`)
        Keep names whose target is not a page of the dump (after redirects): red links in a complete dump, but
        most targets of a sample or shortened one.
    links_in : `str`, optional (default = `"page"`)
        Where a page's names come from: `"page"`, every link it shows (running text, infoboxes and other
        templates, tables, references, image captions), a name linked in the running text keeping the text's
        target; `"text"`, its running text only, as LUKE's. Link probabilities come from the running text
        either way.
    """
    if not 0.0 <= min_link_probability <= 1.0:
        raise ValueError(f"min_link_probability must be in [0, 1], got {min_link_probability}")
    if links_in not in LINK_SCOPES:
        raise ValueError(f"links_in must be {' or '.join(map(repr, LINK_SCOPES))}, not {links_in!r}")
    wanted = None if page_titles is None else {normalize_title(t) for t in page_titles}
    stats: Counter = Counter()
    dump = WikiDump(dump_path, max_pages=max_pages)
    collector = TitleCollector()

    def articles(collect: bool):
        for page in dump:
            if collect:
                collector.add(page)
            if page.is_article and page.text:
                yield page

    # Pass 1: names and targets of the pages kept; how often each name is a link of the running text, and to what.
    link_counts: Counter = Counter()
    target_counts: Counter = Counter()  # (name, target as written), links of the running text
    raw_pages: Dict[str, Tuple[List[Tuple[str, str]], List[Tuple[str, str]]]] = {}
    link_fates: Counter = Counter()
    batches = ((dump.namespaces, links_in, batch) for batch in page_batches(articles(collect=True)))
    for results, batch_fates in ordered_map(_page_links, batches, num_workers):
        link_fates.update(batch_fates)
        for title, text_links, other_links in results:
            stats["pages"] += 1
            link_counts.update(name for name, _ in text_links)
            target_counts.update(text_links)
            if wanted is None or title in wanted:
                raw_pages[title] = (text_links, other_links)
    index = collector.index()
    dump_stats = dump.stats.as_dict()
    if wanted is not None:
        stats["requested_pages_not_in_dump"] = len(wanted - raw_pages.keys())

    # Pass 2: how often each name occurs at all.
    unlinked: Counter = Counter()
    names = set(link_counts)
    batches = ((dump.namespaces, batch) for batch in page_batches(articles(collect=False)))
    for counts in ordered_map(_count_occurrences, batches, num_workers, _init_matcher, (names,)):
        unlinked.update(counts)
    probability = {name: link_counts[name] / (link_counts[name] + unlinked[name]) for name in names}
    kept = {name: p for name, p in probability.items() if p >= min_link_probability}
    stats["names"] = len(names)
    stats["low_probability_names_dropped"] = len(names) - len(kept)

    pages: Dict[str, Dict[str, str]] = {}
    for title, (text_links, other_links) in raw_pages.items():
        targets: Dict[str, Set[Tuple[Optional[str], str]]] = {}
        for name, target in text_links:
            targets.setdefault(name, set()).add(index.lookup(target))
        # Links outside the running text add names; where the text links a name, its target is the text's.
        other_targets: Dict[str, Set[Tuple[Optional[str], str]]] = {}
        for name, target in other_links:
            if name not in targets:
                other_targets.setdefault(name, set()).add(index.lookup(target))
        stats["page_names_outside_text"] += len(other_targets)
        targets.update(other_targets)
        names_of_page = {}
        for name, resolved in targets.items():
            if len(resolved) > 1:
                stats["ambiguous_names_dropped"] += 1
                continue
            ((article, status),) = resolved
            if status == LOOP or (status == MISSING and not include_missing_pages):
                stats["names_through_redirect_loops" if status == LOOP else "names_to_missing_pages"] += 1
            elif name not in names:
                stats["page_names_never_linked_in_text"] += 1
            elif name not in kept:
                stats["low_probability_page_names_dropped"] += 1
            else:
                names_of_page[name] = article
        if names_of_page:
            pages[title] = names_of_page
            stats["page_names"] += len(names_of_page)
    stats["pages_with_names"] = len(pages)
    entities = _entity_counts(target_counts, kept, index, include_missing_pages, stats)
    # Every link of the articles: links_counted (names of pages) + other_links + links_not_counted.
    links = {"links": link_fates["links"], "links_in": links_in, "links_counted": link_fates["links_counted"],
             "text_links": sum(link_counts.values())}  # fmt: skip
    for group in ("other_links", "links_not_counted"):
        links[group] = {key.split(":", 1)[1]: n for key, n in sorted(link_fates.items()) if key.startswith(group + ":")}
    summary = {**{k: stats[k] for k in sorted(stats)}, **links, "include_missing_pages": include_missing_pages,
               "dump": dump_stats, "redirects": index.stats.__dict__}  # fmt: skip
    logger.info("mention dictionary: %d pages, %d names kept of %d (%d below p=%g), %d ambiguous page names dropped",
                len(pages), len(kept), len(names), stats["low_probability_names_dropped"], min_link_probability,
                stats["ambiguous_names_dropped"])  # fmt: skip
    link_probability = {name: round(kept[name], 6) for name in sorted(kept)}
    return MentionDictionary(pages, link_probability, min_link_probability, os.fspath(dump_path), summary, entities)


def _entity_counts(target_counts: Counter, kept: Dict[str, float], index, include_missing_pages: bool,
                   stats: Counter) -> Dict[str, List[List]]:  # fmt: skip
    """Name -> [[entity, links], ...] (most linked first, ties by title) for the kept names, through redirects."""
    per_name: Dict[str, Counter] = {}
    for (name, target), count in target_counts.items():
        if name not in kept:
            continue
        article, status = index.lookup(target)
        if status == LOOP or (status == MISSING and not include_missing_pages):
            stats["entity_links_through_redirect_loops" if status == LOOP else "entity_links_to_missing_pages"] += count
            continue
        stats["entity_links"] += count
        per_name.setdefault(name, Counter())[article] += count
    return {name: [[title, n] for title, n in sorted(counts.items(), key=lambda x: (-x[1], x[0]))]
            for name, counts in sorted(per_name.items())}  # fmt: skip
