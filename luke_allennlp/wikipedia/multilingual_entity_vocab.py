"""
mLUKE's multilingual entity vocabulary: the entities of several Wikipedias, one id for the articles of different
languages about the same thing.

Each input is a dump (its links counted through its own redirects, as for LUKE's vocabulary) or an entity
vocabulary already built from one (LUKE's JSONL or TSV; the original LUKE builds one per language, then merges).
Articles are merged by inter-language links:

- from a Wikidata JSON dump (`latest-all.json.bz2`, as the original): an item's sitelinks to the Wikipedias given
  (`"jawiki": {"title": "東京都"}`) name one entity; it is streamed, one item per line;
- from the dumps' own inline inter-language links (`[[de:Tokio]]` at the end of older pages' wikitext).

Every title is followed through its language's redirects first (an input vocabulary has none to follow). Merging
never puts two titles of one language into one entity: links are applied in a fixed order (Wikidata items by
number, then inline links sorted), and a link that would join two entities that both have a title in one language
is left out and counted as a conflict (the first links win), so the result does not depend on the input order of
the Wikidata dump. An entity's count is the sum of its titles' counts; entities found in fewer than
`min_languages` languages or linked less than `min_count` times are dropped, the rest ranked by count (ties by
their titles) and cut at `vocab_size`, after `[PAD]`, `[UNK]`, `[MASK]` (one id each, no language).
"""

import json
import logging
import os
import re
from collections import Counter
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple, Union

from luke_allennlp.resources.entity_vocab import EntityVocab
from luke_allennlp.resources.sqlite import is_sqlite
from luke_allennlp.resources.titles import Namespaces
from luke_allennlp.wikipedia.dump import open_dump, wiki_site
from luke_allennlp.wikipedia.entity_vocab_builder import (
    PART_KIND,
    DumpLinks,
    check_vocab_size,
    count_dump_links,
    count_parts_links,
)
from luke_allennlp.wikipedia.parts import read_part_meta
from luke_allennlp.wikipedia.redirects import ARTICLE, MISSING

logger = logging.getLogger(__name__)

PathLike = Union[str, "os.PathLike[str]"]
Node = Tuple[str, str]  # (language, title)
_VOCAB_FILE_LANGUAGE = re.compile(r"([a-z][a-z0-9_]*?)wiki[-_.]")
MAX_CONFLICT_EXAMPLES = 20


class LanguageCounts:
    """
    One language's linked titles: `counts` (title -> links), `resolve` (a title, through redirects, to a counted
    one, or None), its `namespaces` (title rule), inline inter-language links, and the summary of its input.
    """

    def __init__(
        self,
        language: str,
        counts: Counter,
        resolve: Callable[[str], Optional[str]],
        namespaces: Namespaces,
        interlanguage: Sequence[Tuple[str, str, str]] = (),
        summary: Optional[Dict[str, Any]] = None,
    ) -> None:
        self.language = language
        self.counts = counts
        self.resolve = resolve
        self.namespaces = namespaces
        self.interlanguage = interlanguage
        self.summary = summary or {}


def count_language(
    path: "PathLike | Sequence[PathLike]",
    language: Optional[str] = None,
    num_workers: int = 1,
    max_pages: Optional[int] = None,
    include_missing_pages: bool = False,
    links_in: str = "text",
) -> LanguageCounts:
    """
    A dump's linked titles (or an entity vocabulary's, for a `.jsonl` / `.tsv` file; or those of a dump's part
    files, written by `build-entity-vocab --stage count`, given as a list) and its language.
    """
    if not isinstance(path, (str, os.PathLike)):
        parts = [os.fspath(p) for p in path]
        return _dump_counts(
            " ".join(parts), count_parts_links(parts, include_missing_pages), language, include_missing_pages
        )
    path = os.fspath(path)
    if path.endswith((".jsonl", ".tsv")):
        vocab = EntityVocab.from_file(path, language=language or "")
        if vocab.language is None and not language:
            raise ValueError(f"{path}: a multilingual vocabulary; the inputs are one vocabulary or dump per language")
        match = _VOCAB_FILE_LANGUAGE.match(os.path.basename(path))
        language = language or vocab.language or (match.group(1).replace("_", "-") if match else None)
        if not language:
            raise ValueError(f"{path}: which language? Name it with --language (its entries carry none)")
        counts = Counter(
            {title: vocab.count(vocab[title]) for title in vocab if title not in EntityVocab.SPECIAL_TOKENS}
        )
        namespaces = Namespaces(language=language)
        summary = {"vocabulary": path, "language": language, "linked_titles": len(counts)}
        return LanguageCounts(language, counts, lambda t: t if t in counts else None, namespaces, (), summary)
    links = count_dump_links(path, num_workers, max_pages, include_missing_pages, links_in, language)
    return _dump_counts(path, links, None, include_missing_pages)


def _dump_counts(path: str, links: DumpLinks, language: Optional[str], include_missing_pages: bool) -> LanguageCounts:
    language = language or links.language
    if not language:
        raise ValueError(
            f"{path}: which language? The dump has no <dbname>, its file name no 'xxwiki-' prefix: name it with "
            "--language"
        )
    namespaces = (
        links.namespaces if language == links.language else Namespaces(case=links.namespaces.case, language=language)
    )

    def resolve(title: str) -> Optional[str]:  # (`links` owns the index's folder: kept alive with this function)
        end, status = links.index.lookup(title)
        ok = status == ARTICLE or (status == MISSING and include_missing_pages)
        return end if ok and end in links.counts else None

    summary = {"language": language, **links.summary}
    return LanguageCounts(language, links.counts, resolve, namespaces, links.interlanguage, summary)


def group_parts(inputs: Sequence[PathLike]) -> List["PathLike | List[str]"]:
    """
    The inputs of `build_multilingual_entity_vocab` with each run of consecutive part files (`build-entity-vocab
    --stage count`) of one language made one input: a dump given in parts.
    """
    grouped: List[Any] = []
    previous = None
    for path in inputs:
        language = _part_language(path)
        if language is None:
            grouped.append(path)
        elif previous == language and isinstance(grouped[-1], list):
            grouped[-1].append(os.fspath(path))
        else:
            grouped.append([os.fspath(path)])
        previous = language
    return grouped


def _part_language(path: PathLike) -> Optional[str]:
    """The language of a part file of the entity vocabulary (`""` if it has none), None for any other input."""
    if not os.path.isfile(path) or not is_sqlite(path):
        return None
    return read_part_meta(path, PART_KIND)["language"] or ""


def read_wikidata_sitelinks(
    path: PathLike, sites: Dict[str, str], stats: Optional[Counter] = None
) -> Iterator[Tuple[int, Dict[str, str]]]:
    """
    Streams a Wikidata JSON dump (a JSON array, one entity per line; plain, `.bz2` or `.gz`) and yields, for each
    item with sitelinks to at least two of `sites` (site -> language, `{"jawiki": "ja"}`), its number and
    `{language: title}`. Only lines naming two of the sites are parsed (most items have no Wikipedia article in
    any of them). A dump cut short keeps the items read (the error is logged and counted). Counts go to `stats`.
    """
    path = os.fspath(path)
    stats = stats if stats is not None else Counter()
    if not os.path.isfile(path):
        raise FileNotFoundError(f"{path}: no such Wikidata dump")
    needles = [f'"{site}":'.encode() for site in sites]
    with open_dump(path) as stream:
        line_number = 0
        try:
            for line_number, raw in enumerate(stream, 1):
                line = raw.strip().rstrip(b",")
                if line in (b"", b"[", b"]"):
                    continue
                stats["wikidata_entities"] += 1
                if sum(1 for needle in needles if needle in line) < 2:
                    continue
                try:
                    item = json.loads(line)
                    number = int(str(item["id"]).lstrip("QPL"))
                    titles = {sites[site]: link["title"] for site, link in item["sitelinks"].items() if site in sites}
                except (ValueError, KeyError, TypeError, AttributeError) as error:
                    raise ValueError(
                        f"{path}, line {line_number}: not a Wikidata entity with sitelinks ({type(error).__name__}: "
                        f"{error})"
                    ) from None
                if len(titles) >= 2:
                    stats["wikidata_items_in_two_or_more_languages"] += 1
                    yield number, titles
        except (EOFError, OSError) as error:  # a truncated .bz2 / .gz
            logger.warning(
                "%s: ends early after line %d (%s); the items read so far are kept", path, line_number, error
            )
            stats["wikidata_errors"] += 1


class _Groups:
    """Entities as groups of (language, title), joined only when no language would get two titles."""

    def __init__(self) -> None:
        self.group_of: Dict[Node, int] = {}
        self.members: Dict[int, Dict[str, str]] = {}  # group -> {language: title}

    def group(self, node: Node) -> int:
        if node not in self.group_of:
            self.group_of[node] = len(self.group_of)
            self.members[self.group_of[node]] = {node[0]: node[1]}
        return self.group_of[node]

    def join(self, a: Node, b: Node) -> str:
        """Joins the entities of two titles: "joined", "already" (one entity already) or "conflict"."""
        first, second = self.group(a), self.group(b)
        if first == second:
            return "already"
        if self.members[first].keys() & self.members[second].keys():
            return "conflict"
        for language, title in self.members.pop(second).items():
            self.group_of[language, title] = first
            self.members[first][language] = title
        return "joined"


def merge_languages(
    languages: Sequence[LanguageCounts],
    wikidata: Optional[PathLike] = None,
    inline_links: bool = True,
) -> Tuple[List[Tuple[List[Tuple[str, str]], int]], Dict[str, Any]]:
    """
    The entities of several languages, merged: `([(title, language), ...], count)` for each (titles in the order
    of `languages`), in no particular order, with the counters of the merge.
    """
    order = {counts.language: i for i, counts in enumerate(languages)}
    if len(order) != len(languages):
        raise ValueError(f"two inputs have the same language: {[c.language for c in languages]}")
    by_language = {counts.language: counts for counts in languages}
    groups = _Groups()
    stats: Counter = Counter()
    conflicts: List[List[List[str]]] = []

    def join(a: Node, b: Node, source: str) -> None:
        outcome = groups.join(a, b)
        stats[f"{source}_links_{outcome}"] += 1
        if outcome == "conflict" and len(conflicts) < MAX_CONFLICT_EXAMPLES:
            conflicts.append([list(a), list(b)])

    if wikidata is not None:
        sites = {wiki_site(language): language for language in order}
        items = []
        for number, titles in read_wikidata_sitelinks(wikidata, sites, stats):
            nodes = []
            for language in sorted(titles, key=order.__getitem__):
                counts = by_language[language]
                title = counts.namespaces.normalize(titles[language])
                resolved = counts.resolve(title)
                if resolved is None:
                    stats["wikidata_titles_not_linked"] += 1
                    continue
                stats["wikidata_titles_through_redirects"] += resolved != title
                nodes.append((language, resolved))
            if len(nodes) >= 2:
                items.append((number, nodes))
        for _, nodes in sorted(items):
            for node in nodes[1:]:
                join(nodes[0], node, "wikidata")
    if inline_links:
        edges = []
        for counts in languages:
            for page, prefix, raw_title in counts.interlanguage:
                stats["inline_links"] += 1
                target = by_language.get(prefix)
                if target is None or prefix == counts.language:
                    stats["inline_links_to_other_languages"] += 1
                    continue
                source, title = counts.resolve(page), target.resolve(target.namespaces.normalize(raw_title))
                if source is None or title is None:
                    stats["inline_links_not_linked"] += 1
                    continue
                edges.append(((counts.language, source), (prefix, title)))
        for a, b in sorted(edges, key=lambda edge: (order[edge[0][0]], edge[0][1], order[edge[1][0]], edge[1][1])):
            join(a, b, "inline")
    entities = []
    for counts in languages:  # every counted title, linked to others or not
        for title in counts.counts:
            groups.group((counts.language, title))
    for members in groups.members.values():
        ordered = sorted(members.items(), key=lambda item: order[item[0]])
        entities.append(
            (
                [(title, language) for language, title in ordered],
                sum(by_language[language].counts[title] for language, title in ordered),
            )
        )
    summary = {key: stats[key] for key in sorted(stats)}
    summary["conflicts"] = stats["wikidata_links_conflict"] + stats["inline_links_conflict"]
    summary["conflict_examples"] = conflicts
    return entities, summary


def build_multilingual_entity_vocab(
    inputs: Sequence["PathLike | Sequence[PathLike]"],
    wikidata: Optional[PathLike] = None,
    languages: Optional[Sequence[Optional[str]]] = None,
    vocab_size: int = 1_200_000,
    min_count: int = 1,
    min_languages: int = 1,
    inline_links: bool = True,
    num_workers: int = 1,
    max_pages: Optional[int] = None,
    include_missing_pages: bool = False,
    links_in: str = "text",
) -> Tuple[EntityVocab, Dict[str, Any]]:
    """
    The multilingual entity vocabulary of several dumps (or per-language vocabularies), with a summary.

    # Parameters

    inputs : `Sequence[PathLike | Sequence[PathLike]]`
        One dump (`.xml`, `.bz2`, `.gz`) or entity vocabulary (`.jsonl`, `.tsv`) per language, or the list of a
        dump's part files (`count_part_links`, in dump order; `group_parts` makes these lists of a flat list).
    wikidata : `Optional[PathLike]`, optional (default = `None`)
        A Wikidata JSON dump whose sitelinks merge the languages' articles.
    languages : `Optional[Sequence[Optional[str]]]`, optional (default = `None`)
        Each input's language code, overriding what the input says (`None`: the dump's `<dbname>`, or its file
        name `jawiki-...`; a vocabulary's entries).
    vocab_size : `int`, optional (default = `1_200_000`, mLUKE's)
        The number of ids, the three special entities included.
    min_count : `int`, optional (default = `1`)
        Keep only entities linked at least this often (over all languages).
    min_languages : `int`, optional (default = `1`)
        Keep only entities with an article in at least this many of the languages.
    inline_links : `bool`, optional (default = `True`)
        Also merge by the dumps' `[[de:Tokio]]` links.
    num_workers, max_pages, include_missing_pages, links_in :
        As for `build_entity_vocab`, for every dump.
    """
    check_vocab_size(vocab_size)
    if min_languages < 1:
        raise ValueError(f"min_languages must be at least 1, got {min_languages}")
    if languages is not None and len(languages) != len(inputs):
        raise ValueError(f"{len(inputs)} inputs but {len(languages)} languages")
    per_language = [
        count_language(
            path, (languages or [None] * len(inputs))[i], num_workers, max_pages, include_missing_pages, links_in
        )
        for i, path in enumerate(inputs)
    ]
    entities, merge = merge_languages(per_language, wikidata, inline_links)
    ranked = sorted(entities, key=lambda entity: (-entity[1], entity[0]))
    by_languages = Counter(len(pairs) for pairs, _ in ranked)
    enough = [entity for entity in ranked if len(entity[0]) >= min_languages]
    eligible = [entity for entity in enough if entity[1] >= min_count]
    kept = eligible[: vocab_size - len(EntityVocab.SPECIAL_TOKENS)]
    special: List[Optional[List[Tuple[str, Optional[str]]]]] = [[(t, None)] for t in EntityVocab.SPECIAL_TOKENS]
    vocab = EntityVocab._from_entries(
        special + [list(pairs) for pairs, _ in kept],  # type: ignore[misc]
        [0] * len(special) + [count for _, count in kept],
        language=None,
        source="multilingual entity vocabulary",
    )
    summary = {
        "inputs": [counts.summary for counts in per_language],
        "languages": [counts.language for counts in per_language],
        "wikidata": os.fspath(wikidata) if wikidata is not None else None,
        "vocab_size": len(vocab),
        "merge": merge,
        "entities": len(ranked),
        "entities_by_languages": {str(n): by_languages[n] for n in sorted(by_languages)},
        "min_languages": min_languages,
        "entities_below_min_languages": len(ranked) - len(enough),
        "entities_below_min_count": len(enough) - len(eligible),
        "entities_over_vocab_size": len(eligible) - len(kept),
        "kept_by_language": dict(Counter(lang for pairs, _ in kept for _, lang in pairs)),
        "top_entities": [[[list(pair) for pair in pairs], count] for pairs, count in kept[:20]],
    }
    logger.info(
        "multilingual entity vocabulary: %d entities (+%d special) of %s; %d merge conflicts",
        len(kept),
        len(special),
        ", ".join(summary["languages"]),
        merge["conflicts"],
    )
    return vocab, summary
