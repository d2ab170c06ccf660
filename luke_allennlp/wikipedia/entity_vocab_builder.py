"""
The entity vocabulary of LUKE's pretraining: the most linked Wikipedia articles.

One streaming pass over the dump: workers clean each article's markup and count its links' targets, while the
main process writes titles and redirects to disk; at the end every target is followed through redirects and only
existing articles are kept, ranked by how often they are linked (ties by title, so the result is
deterministic), after `[PAD]`=0, `[UNK]`=1, `[MASK]`=2. By default only the links of the running text count, as
in LUKE (`links_in`); the summary accounts for every other link of the articles by kind or place.

One run is a dump of one part (`count_part_links`, then `merge_entity_vocab_parts`): titles, redirects and counts
go to a SQLite file in the system's temporary folder (`TMPDIR`; about 1-2 GB for English Wikipedia), so memory
stays bounded whatever the dump's size.
"""

import logging
import os
import tempfile
from collections import Counter
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from luke_allennlp.resources.entity_vocab import EntityVocab
from luke_allennlp.resources.sqlite import connect, set_meta
from luke_allennlp.resources.titles import FIRST_LETTER, Namespaces
from luke_allennlp.wikipedia.dump import WikiDump, WikiPage
from luke_allennlp.wikipedia.markup import LINK_SCOPES, clean_wikitext
from luke_allennlp.wikipedia.parallel import ordered_map, page_batches
from luke_allennlp.wikipedia.parts import (
    SpilledCounter,
    TitleIndex,
    TitleWriter,
    attached,
    lookup_sql,
    merge_titles,
    read_part_meta,
    sum_counts,
)
from luke_allennlp.wikipedia.redirects import ARTICLE, LOOP, MISSING, RedirectStats

logger = logging.getLogger(__name__)


def check_vocab_size(vocab_size: int) -> None:
    if vocab_size <= len(EntityVocab.SPECIAL_TOKENS):
        raise ValueError(
            f"vocab_size must exceed the {len(EntityVocab.SPECIAL_TOKENS)} special entities, got {vocab_size}"
        )


def _count_links(item: Tuple[Namespaces, str, List[WikiPage]]) -> Tuple[Counter, Counter, Counter, int, list]:
    """The targets of a batch of articles' links to articles in `scope` (before redirects), the scope's other
    links by kind, the links outside the scope by place, how many links there were, and the inter-language
    links `(page title, language prefix, title)`."""
    namespaces, scope, pages = item
    targets: Counter = Counter()
    kinds: Counter = Counter()
    outside: Counter = Counter()
    interlanguage = []
    total = 0
    for page in pages:
        clean = clean_wikitext(page.text, namespaces)
        entities, page_kinds, page_outside = clean.scoped_links(scope)
        targets.update(target for _, target in entities)
        kinds.update(page_kinds)
        outside.update(page_outside)
        total += clean.total_links
        interlanguage += [(page.title, prefix, title) for prefix, title in clean.interlanguage_links]
    return targets, kinds, outside, total, interlanguage


@dataclass
class DumpLinks:
    """What a dump's links counted (one pass, or its parts merged): `counts` (linked title after redirects ->
    links, the titles counted), the dump's `language` and `namespaces` (its title rule), its title `index` (on
    disk, in `work`), the inter-language links `(page title, prefix, title)` in dump order, and the summary."""

    language: Optional[str]
    namespaces: Namespaces
    index: TitleIndex
    counts: Counter
    interlanguage: List[Tuple[str, str, str]]
    summary: Dict[str, Any]
    work: Any = None  # (the temporary folder of `index`, removed with this object)


def count_dump_links(
    dump_path: "os.PathLike[str] | str",
    num_workers: int = 1,
    max_pages: Optional[int] = None,
    include_missing_pages: bool = False,
    links_in: str = "text",
    language: Optional[str] = None,
) -> DumpLinks:
    """The links of a dump counted through redirects (see `build_entity_vocab` for the parameters); `language`
    overrides the dump's own. The same as counting it as one part (`count_part_links`, `count_parts_links`)."""
    with tempfile.TemporaryDirectory(prefix="entity-vocab-") as work:
        part = os.path.join(work, "part.sqlite")
        count_part_links(dump_path, part, num_workers, max_pages, links_in, language)
        links = count_parts_links([part], include_missing_pages)
    links.summary["dump"] = os.fspath(dump_path)
    return links


@dataclass
class _Scan:
    """What streaming a dump's articles counted besides the targets."""

    kinds: Counter
    outside: Counter
    total: int
    links_counted: int


def _scan(
    dump: WikiDump,
    links_in: str,
    num_workers: int,
    add_page: Callable[[WikiPage], None],
    add_targets: Callable[[Counter], None],
    add_interlanguage: Callable[[list], None],
) -> _Scan:
    """Streams the dump: every page to `add_page` (titles), each batch's link targets to `add_targets`, its
    inter-language links to `add_interlanguage`."""
    if links_in not in LINK_SCOPES:
        raise ValueError(f"links_in must be {' or '.join(map(repr, LINK_SCOPES))}, not {links_in!r}")

    def articles():
        for page in dump:
            add_page(page)
            if page.is_article and page.text:
                yield page

    scan = _Scan(Counter(), Counter(), 0, 0)
    batches = ((dump.namespaces, links_in, batch) for batch in page_batches(articles()))
    for targets, kinds, outside, total, interlanguage in ordered_map(_count_links, batches, num_workers):
        add_targets(targets)
        scan.links_counted += sum(targets.values())
        scan.kinds.update(kinds)
        scan.outside.update(outside)
        scan.total += total
        add_interlanguage(interlanguage)
    return scan


def _links_summary(
    dump: Any,
    pages: Dict[str, Any],
    redirects: Dict[str, Any],
    scan: _Scan,
    links_in: str,
    links_to: Counter,
    include_missing_pages: bool,
    linked_titles: int,
) -> Dict[str, Any]:
    return {
        "dump": dump,
        "pages": pages,
        "redirects": redirects,
        # Every link of the articles: links_to_* (those counted) + other_links + links_not_counted.
        "links": scan.total,
        "links_in": links_in,
        "links_counted": scan.links_counted,
        "links_to_articles": links_to[ARTICLE],
        "links_to_missing_pages": links_to[MISSING],
        "links_through_redirect_loops": links_to[LOOP],
        "other_links": {kind: n for kind, n in sorted(scan.kinds.items())},
        "links_not_counted": {place: n for place, n in sorted(scan.outside.items())},
        "include_missing_pages": include_missing_pages,
        "linked_titles": linked_titles,
    }


def build_entity_vocab(
    dump_path: "os.PathLike[str] | str",
    vocab_size: int = 500_000,
    min_count: int = 1,
    num_workers: int = 1,
    max_pages: Optional[int] = None,
    language: Optional[str] = None,
    include_missing_pages: bool = False,
    links_in: str = "text",
) -> Tuple[EntityVocab, Dict[str, Any]]:
    """
    Counts the links of a dump and returns the vocabulary with a summary of what was counted and dropped.

    # Parameters

    dump_path : `PathLike`
        A `pages-articles` XML dump (plain, `.bz2` or `.gz`).
    vocab_size : `int`, optional (default = `500_000`, the paper's)
        The size of the vocabulary, the three special entities included (as in LUKE's `build_entity_vocab`).
    min_count : `int`, optional (default = `1`)
        Keep only entities linked at least this often.
    num_workers : `int`, optional (default = `1`)
        Processes cleaning markup.
    max_pages : `Optional[int]`, optional (default = `None`)
        Read only the first pages of the dump (all namespaces counted).
    language : `Optional[str]`, optional (default = `None`)
        The language written next to each title in LUKE's JSONL: the dump's (`WikiDump.language`), else `"en"`.
    include_missing_pages : `bool`, optional (default = `False`)
        Also rank link targets that are not pages of the dump (after redirects). A complete dump's missing
        pages are red links, rightly left out; a sample or shortened dump lacks most linked pages.
    links_in : `str`, optional (default = `"text"`)
        Which links are counted: `"text"`, those of the running text (paragraphs, lists, headings), as LUKE's
        vocabulary (through wikipedia2vec) and the pretraining corpus, whose entities can only come from there;
        `"page"`, also those shown in infoboxes and other templates, tables, references and image captions.
        Either way the summary accounts for every link of the dump's articles.
    """
    check_vocab_size(vocab_size)
    # One run is one part merged: titles, redirects and counts on disk, not in memory (`count_part_links`).
    with tempfile.TemporaryDirectory(prefix="entity-vocab-") as work:
        part = os.path.join(work, "part.sqlite")
        count_part_links(dump_path, part, num_workers, max_pages, links_in, language)
        vocab, summary = merge_entity_vocab_parts([part], vocab_size, min_count, include_missing_pages, work)
    summary["dump"] = os.fspath(dump_path)
    return vocab, summary


def _vocabulary(
    kept: List[Tuple[str, int]], eligible: int, linked_titles: int, language: str, links: Dict[str, Any]
) -> Tuple[EntityVocab, Dict[str, Any]]:
    """The vocabulary of the `kept` titles (most linked first, ties by title), of the `eligible` linked at least
    `min_count` times."""
    vocab = EntityVocab(
        list(EntityVocab.SPECIAL_TOKENS) + [title for title, _ in kept],
        [0] * len(EntityVocab.SPECIAL_TOKENS) + [count for _, count in kept],
        language=language,
    )
    summary = {
        "dump": links["dump"],
        "vocab_size": len(vocab),
        **{key: value for key, value in links.items() if key != "dump"},
        "entities_below_min_count": linked_titles - eligible,
        "entities_over_vocab_size": eligible - len(kept),
        "links_to_kept_entities": sum(count for _, count in kept),
        "top_entities": [[title, count] for title, count in kept[:20]],
    }
    logger.info(
        "entity vocabulary: %d entities (+%d special) from %d links (of %d, links_in=%s) to %d articles (%d links to "
        "missing pages, %d through redirect loops)",
        len(kept),
        len(EntityVocab.SPECIAL_TOKENS),
        summary["links_counted"],
        summary["links"],
        summary["links_in"],
        linked_titles,
        summary["links_to_missing_pages"],
        summary["links_through_redirect_loops"],
    )
    return vocab, summary


# --- in parts -------------------------------------------------------------------------------------------------------

PART_KIND = "entity-vocab-counts"


def count_part_links(
    dump_path: "os.PathLike[str] | str",
    out_path: "os.PathLike[str] | str",
    num_workers: int = 1,
    max_pages: Optional[int] = None,
    links_in: str = "text",
    language: Optional[str] = None,
) -> None:
    """
    One dump part's titles, redirects and link targets (as written, before redirects) to the part file `out_path`
    (see `luke_allennlp.wikipedia.parts`), for `merge_entity_vocab_parts`.
    """
    dump = WikiDump(dump_path, max_pages=max_pages, language=language)
    connection = connect(out_path, create=True)
    titles = TitleWriter(connection)
    targets = SpilledCounter(connection, "targets", ("target",))
    connection.execute("CREATE TABLE interlanguage(seq INTEGER PRIMARY KEY, page TEXT, prefix TEXT, title TEXT)")

    def add_interlanguage(links: list) -> None:
        connection.executemany("INSERT INTO interlanguage(page, prefix, title) VALUES (?, ?, ?)", links)

    scan = _scan(dump, links_in, num_workers, titles.add, targets.add, add_interlanguage)
    titles.flush()
    targets.flush()
    set_meta(
        connection,
        kind=PART_KIND,
        dump=os.fspath(dump_path),
        links_in=links_in,
        language=dump.language,
        case=dump.namespaces.case,
        pages=dump.stats.as_dict(),
        kinds=dict(scan.kinds),
        outside=dict(scan.outside),
        total=scan.total,
        links_counted=scan.links_counted,
    )
    connection.close()


def merge_entity_vocab_parts(
    parts: Sequence["os.PathLike[str] | str"],
    vocab_size: int = 500_000,
    min_count: int = 1,
    include_missing_pages: bool = False,
    work_dir: "Optional[os.PathLike[str] | str]" = None,
) -> Tuple[EntityVocab, Dict[str, Any]]:
    """
    The vocabulary of a dump from its parts' files (in dump order): the same as `build_entity_vocab` over the whole
    dump. Links are followed through the redirects of every part; the counts are added up on disk.
    """
    check_vocab_size(vocab_size)
    metas = _part_metas(parts)
    with tempfile.TemporaryDirectory(prefix="entity-vocab-", dir=work_dir) as work:
        connection = connect(os.path.join(work, "merge.sqlite"), create=True)
        redirects = _merge_links(connection, parts)
        links_to = Counter(dict(connection.execute("SELECT status, SUM(count) FROM linked GROUP BY status")))
        counted = _counted(include_missing_pages)
        linked_titles = connection.execute(f"SELECT COUNT(*) FROM linked WHERE {counted}").fetchone()[0]
        where = f"WHERE ({counted}) AND count >= {int(min_count)}"
        eligible = connection.execute(f"SELECT COUNT(*) FROM linked {where}").fetchone()[0]
        kept = connection.execute(
            f"SELECT article, count FROM linked {where} ORDER BY count DESC, article LIMIT "
            f"{vocab_size - len(EntityVocab.SPECIAL_TOKENS)}"
        ).fetchall()
        connection.close()
    summary = _parts_summary(metas, redirects, links_to, include_missing_pages, linked_titles)
    return _vocabulary(kept, eligible, linked_titles, metas[0]["language"] or "en", summary)


def count_parts_links(parts: Sequence["os.PathLike[str] | str"], include_missing_pages: bool = False) -> DumpLinks:
    """
    The links of a dump's part files (in dump order) counted through the redirects of every part, for mLUKE's
    vocabulary (`count_language`): every counted title with its links, the title index on disk and the
    inter-language links, as one pass over the whole dump gives.
    """
    metas = _part_metas(parts)
    if any(meta["language"] != metas[0]["language"] for meta in metas):
        raise ValueError(f"the parts are of different languages: {sorted({str(m['language']) for m in metas})}")
    work = tempfile.TemporaryDirectory(prefix="entity-vocab-")
    connection = connect(os.path.join(work.name, "merge.sqlite"), create=True)
    redirects = _merge_links(connection, parts)
    links_to = Counter(dict(connection.execute("SELECT status, SUM(count) FROM linked GROUP BY status")))
    counted = _counted(include_missing_pages)
    counts = Counter(dict(connection.execute(f"SELECT article, count FROM linked WHERE {counted}")))
    interlanguage: List[Tuple[str, str, str]] = []
    for path in parts:
        with attached(connection, path) as part:
            interlanguage += connection.execute(f"SELECT page, prefix, title FROM {part}.interlanguage ORDER BY seq")
    connection.close()
    index = TitleIndex.build(parts, os.path.join(work.name, "titles-index.sqlite"))
    summary = _parts_summary(metas, redirects, links_to, include_missing_pages, len(counts))
    namespaces = Namespaces(case=metas[0].get("case", FIRST_LETTER), language=metas[0]["language"] or "")
    return DumpLinks(metas[0]["language"], namespaces, index, counts, interlanguage, summary, work)


def _part_metas(parts: Sequence["os.PathLike[str] | str"]) -> List[Dict[str, Any]]:
    if not parts:
        raise ValueError("no part files to merge")
    metas = [read_part_meta(path, PART_KIND) for path in parts]
    if any(meta["links_in"] != metas[0]["links_in"] for meta in metas):
        raise ValueError("the parts were counted with different links_in: count them all with the same options")
    return metas


def _merge_links(connection: Any, parts: Sequence["os.PathLike[str] | str"]) -> RedirectStats:
    """The parts' titles merged, and `linked(article, status, count)`: their link counts through redirects."""
    redirects = merge_titles(connection, parts)
    connection.execute("CREATE TABLE runs(target TEXT, count INTEGER)")
    for path in parts:
        with attached(connection, path) as part:
            connection.execute(f"INSERT INTO runs SELECT target, count FROM {part}.targets")
    connection.execute(
        f"CREATE TABLE linked AS SELECT {lookup_sql('t.target')}, SUM(t.count) AS count FROM "
        "(SELECT target, SUM(count) AS count FROM runs GROUP BY target) t LEFT JOIN redirect_ends r "
        "ON r.title = t.target GROUP BY 1, 2"
    )
    return redirects


def _counted(include_missing_pages: bool) -> str:
    return "status = 'article'" + (" OR status = 'missing'" if include_missing_pages else "")


def _parts_summary(
    metas: List[Dict[str, Any]],
    redirects: RedirectStats,
    links_to: Counter,
    include_missing_pages: bool,
    linked_titles: int,
) -> Dict[str, Any]:
    scan = _Scan(
        sum_counts([Counter(meta["kinds"]) for meta in metas]),
        sum_counts([Counter(meta["outside"]) for meta in metas]),
        sum(meta["total"] for meta in metas),
        sum(meta["links_counted"] for meta in metas),
    )
    dump = [meta["dump"] for meta in metas]
    return _links_summary(
        dump,
        sum_counts([meta["pages"] for meta in metas]),
        redirects.__dict__,
        scan,
        metas[0]["links_in"],
        links_to,
        include_missing_pages,
        linked_titles,
    )
