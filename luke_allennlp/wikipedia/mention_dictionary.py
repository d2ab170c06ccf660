"""
The mention dictionary of LUKE's SQuAD experiments (paper, Appendix C): for each Wikipedia page, the names
linked on it and the entity each refers to, and how likely each name is to be a link at all.

Built in two streaming passes over a dump (`build_mention_store`; `build_mention_dictionary` in memory):

1. Articles are cleaned (`clean_wikitext`); every link to an article gives a name (its anchor text, as
   shown) and a target; titles and redirects are collected. A page's names come from the links it shows
   anywhere (`links_in="page"`, the default: running text, infoboxes and other templates, tables, references,
   image captions; a name the running text links keeps the text's target) or in its running text only
   (`"text"`, as LUKE's wikipedia2vec-based dictionary). Targets are then followed through redirects; on each
   page a name that refers to two different entities is dropped for that page, and a name whose target is no
   article of the dump (a missing page, a redirect loop) is dropped.
2. Every name's occurrences in the articles' running text are counted: matches at token boundaries,
   case-sensitive, as `NameMatcher(cjk_characters=True).occurrences` finds them: tokens are runs of `\\w+` or one
   other non-space character (a word or symbol with its combining marks), except that each kana or CJK ideograph
   is a token of its own, so that a name in
   Japanese or Chinese text, which has no spaces, is counted wherever it occurs ("東京" in "東京都の"), as the
   readers match names in such text; in text without kana or ideographs these are the word boundaries at which
   the English readers match names (SQuAD's entity inputs). `link_probability(name)` = times linked
   in the running text / times it occurs there, linked or not: the probability that the name is a link where it
   occurs in prose, which is what the SQuAD reader matches names in (tables and templates have no prose to
   count occurrences in). Names below `min_link_probability` are dropped, and so are names never linked in
   running text.

Over the whole dump (whatever `page_titles` keeps), each kept name's links of the running text are counted per
entity (targets through redirects, the same articles as above), which gives the candidates of entity disambiguation and linking:
`candidates(name)` = the entities the name links to, by p(entity | name) = links of the name to the entity /
links of the name to any entity.

Memory stays bounded whatever the dump's size: counts, titles and page names go to SQLite files on disk
(`luke_allennlp.wikipedia.parts`), the workers of pass 2 look the names up there, and the result is a SQLite
`MentionStore` that readers query without loading it. The passes run as four stages, each of which a dump in
parts runs part by part (one process per part, any scheduler), exactly as one run over the whole dump:

1. `collect_mention_links`, per part: titles and redirects, the running text's (name, target) counts, the kept
   pages' links (targets as written: a redirect or page of another part is only known at stage 2);
2. `merge_mention_links`, once: the parts' titles merged and redirects resolved, the counts added up, each
   page's names resolved: the names file;
3. `count_name_occurrences`, per part, with the names file: how often each name occurs in running text;
4. `merge_mention_parts`, once: link probabilities, candidates and pages' names, written as the dictionary.

Stages 1 and 2 are in `luke_allennlp.wikipedia.mention_links`. The files, and their readers (the SQLite
`MentionStore`, the JSON `MentionDictionary` that small dumps may be written as), are in
`luke_allennlp.resources.mentions`. A part file of stage 2 or 3 that was written before names kept their combining
marks (no `name_tokens`, `NAME_TOKENS`) is refused, naming the stage to run again (`check_part_name_tokens`); so is
such a dictionary, naming the command that rebuilds it (`luke_allennlp.resources.mentions.base.check_name_tokens`).
"""

import logging
import os
import tempfile
from collections import Counter
from typing import Any, Dict, Iterable, List, Optional, Sequence, Set, Tuple

from luke_allennlp.resources.mentions.base import FORMAT, NAME_TOKENS, VERSION, fold
from luke_allennlp.resources.mentions.json_dictionary import MentionDictionary
from luke_allennlp.resources.mentions.name_matcher import NameMatcher, cjk_key
from luke_allennlp.resources.mentions.store import INDEXES, SCHEMA, MentionStore, sqlite_name_matcher
from luke_allennlp.resources.sqlite import connect, open_readonly, set_meta
from luke_allennlp.resources.titles import Namespaces
from luke_allennlp.wikipedia.dump import WikiDump, WikiPage
from luke_allennlp.wikipedia.markup import clean_wikitext
from luke_allennlp.wikipedia.mention_links import NAMES, article_pages, collect_mention_links, merge_mention_links
from luke_allennlp.wikipedia.parallel import ordered_map, page_batches
from luke_allennlp.wikipedia.parts import SpilledCounter, attached, fetch_batches, read_part_meta

logger = logging.getLogger(__name__)

OCCURRENCES = "mention-occurrences"  # the kind of stage 3's part files


# --- stage 3, per part: occurrences of the names in text ------------------------------------------------------------

_matcher: NameMatcher = NameMatcher(())  # the names of stage 2, in each worker process


def _init_matcher(names: "Set[str] | str") -> None:
    """The matcher of `count_unlinked_occurrences`: of a set of names, or of the names of a names file."""
    global _matcher
    if not isinstance(names, str):
        _matcher = NameMatcher(names, cjk_characters=True)
        return
    connection = open_readonly(names, mmap_bytes=0)
    _matcher = sqlite_name_matcher(lambda: connection, "names", cjk_characters=True)


def count_unlinked_occurrences(text: str, links: Iterable[Tuple[int, int]]) -> Counter:
    """
    How often each known name occurs in `text` (every occurrence at token boundaries, each kana or ideograph a
    token, overlapping ones included: `NameMatcher(cjk_characters=True).occurrences`), apart from the link anchors `links` (their `(start, end)`), which are counted
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


def count_name_occurrences(
    dump_path: "os.PathLike[str] | str",
    names_path: "os.PathLike[str] | str",
    out_path: "os.PathLike[str] | str",
    max_pages: Optional[int] = None,
    num_workers: int = 1,
) -> None:
    """Stage 3, on one dump part: how often each name of the names file occurs unlinked in the part's running
    text, to the part file `out_path`. Workers look the names up in the names file (not in memory)."""
    check_part_name_tokens(read_part_meta(names_path, NAMES), names_path, "names")
    connection = open_readonly(os.fspath(names_path), mmap_bytes=0)
    columns = {row[1] for row in connection.execute("PRAGMA table_info(names)")}
    connection.close()
    if "cjk_first_token" not in columns:
        raise ValueError(
            f"{os.fspath(names_path)}: a names file of an older version (its names have no keys for "
            "text without spaces): run the stage `names` (`merge_mention_links`) again"
        )
    dump = WikiDump(dump_path, max_pages=max_pages)
    connection = connect(out_path, create=True)
    unlinked = SpilledCounter(connection, "unlinked", ("name",))
    batches = ((dump.namespaces, batch) for batch in page_batches(article_pages(dump)))
    for counts in ordered_map(_count_occurrences, batches, num_workers, _init_matcher, (os.fspath(names_path),)):
        unlinked.add(counts)
    unlinked.flush()
    set_meta(
        connection, kind=OCCURRENCES, dump=os.fspath(dump_path), names=os.fspath(names_path), name_tokens=NAME_TOKENS
    )
    connection.close()


# --- stage 4, the dictionary ----------------------------------------------------------------------------------------


def merge_mention_parts(
    names_path: "os.PathLike[str] | str",
    occurrence_parts: Sequence["os.PathLike[str] | str"],
    out_path: "os.PathLike[str] | str",
    min_link_probability: float = 0.01,
    include_missing_pages: bool = False,
) -> Dict[str, Any]:
    """
    Stage 4: the names file and every part's occurrence counts merged into the mention dictionary `out_path` (a
    SQLite `MentionStore`). Returns its stats.
    """
    if not 0.0 <= min_link_probability <= 1.0:
        raise ValueError(f"min_link_probability must be in [0, 1], got {min_link_probability}")
    names_meta = read_part_meta(names_path, NAMES)
    check_part_name_tokens(names_meta, names_path, "names")
    for path in occurrence_parts:
        check_part_name_tokens(read_part_meta(path, OCCURRENCES), path, "occurrences")
    out_path = os.fspath(out_path)
    building = out_path + ".building"
    connection = connect(building, create=True)
    connection.executescript(SCHEMA)
    connection.execute("ATTACH DATABASE ? AS n", ("file:" + os.path.abspath(os.fspath(names_path)) + "?mode=ro",))
    connection.execute("CREATE TEMP TABLE unlinked_runs(name TEXT, count INTEGER)")
    for path in occurrence_parts:
        with attached(connection, path) as part:
            connection.execute(f"INSERT INTO unlinked_runs SELECT name, count FROM {part}.unlinked")
    connection.execute("CREATE TEMP TABLE unlinked(name TEXT PRIMARY KEY, count INTEGER) WITHOUT ROWID")
    connection.execute("INSERT INTO unlinked SELECT name, SUM(count) FROM unlinked_runs GROUP BY name")
    connection.execute("DROP TABLE unlinked_runs")
    # Link probabilities; the names kept go to `names` (in name order), every name's fate to `name_fates`.
    connection.execute("CREATE TEMP TABLE name_fates(name TEXT PRIMARY KEY, kept INTEGER) WITHOUT ROWID")
    rows = connection.execute(
        "SELECT n.name, n.links, COALESCE(u.count, 0), n.first_token, n.n_tokens FROM n.names n "
        "LEFT JOIN unlinked u ON u.name = n.name ORDER BY n.name"
    )
    stats: Counter = Counter({key: 0 for key in _STATS})
    insert = connection.cursor()
    for batch in fetch_batches(rows):
        fates, kept = [], []
        for name, links, unlinked, first_token, n_tokens in batch:
            probability = links / (links + unlinked)
            fates.append((name, probability >= min_link_probability))
            if probability >= min_link_probability:
                kept.append((name, fold(name), round(probability, 6), first_token, n_tokens, *cjk_key(name)))
        stats["names"] += len(batch)
        stats["low_probability_names_dropped"] += len(batch) - len(kept)
        insert.executemany("INSERT INTO name_fates VALUES (?, ?)", fates)
        insert.executemany(
            "INSERT INTO names(name, folded, link_probability, first_token, n_tokens, links, "
            "cjk_first_token, cjk_n_tokens) VALUES (?, ?, ?, ?, ?, 0, ?, ?)",
            kept,
        )
    connection.execute("DROP TABLE unlinked")
    # Candidates: the kept names' links through redirects, to articles (or to missing pages if asked).
    include = int(include_missing_pages)
    fate = (
        "CASE WHEN e.status = 'loop' THEN 'entity_links_through_redirect_loops' WHEN e.status = 'missing' AND NOT "
        f"{include} THEN 'entity_links_to_missing_pages' ELSE 'entity_links' END"
    )
    connection.execute(
        f"CREATE TEMP TABLE kept_entities AS SELECT names.id AS name_id, e.article, {fate} AS fate, "
        "e.count FROM n.name_entities e JOIN names ON names.name = e.name"
    )
    stats.update(dict(connection.execute("SELECT fate, SUM(count) FROM kept_entities GROUP BY fate")))
    connection.execute(
        "INSERT OR IGNORE INTO titles(title) SELECT article FROM kept_entities "
        "WHERE fate = 'entity_links' ORDER BY article"
    )
    connection.execute(
        "INSERT INTO candidates SELECT e.name_id, t.id, e.count FROM kept_entities e JOIN titles t "
        "ON t.title = e.article WHERE e.fate = 'entity_links'"
    )
    connection.execute(
        "UPDATE names SET links = (SELECT SUM(links) FROM candidates WHERE name_id = names.id) "
        "WHERE id IN (SELECT name_id FROM candidates)"
    )
    # The names of each page, in the order of the checks of a single pass.
    fate = (
        "CASE WHEN p.status = 'loop' THEN 'names_through_redirect_loops' WHEN p.status = 'missing' AND NOT "
        f"{include} THEN 'names_to_missing_pages' WHEN f.name IS NULL THEN 'page_names_never_linked_in_text' "
        "WHEN NOT f.kept THEN 'low_probability_page_names_dropped' ELSE 'page_names' END"
    )
    connection.execute(
        f"CREATE TEMP TABLE page_fates AS SELECT p.page, p.name, p.article, {fate} AS fate "
        "FROM n.page_names p LEFT JOIN name_fates f ON f.name = p.name"
    )
    stats.update(dict(connection.execute("SELECT fate, COUNT(*) FROM page_fates GROUP BY fate")))
    stats["pages_with_names"] = connection.execute(
        "SELECT COUNT(DISTINCT page) FROM page_fates WHERE fate = 'page_names'"
    ).fetchone()[0]
    for column in ("page", "article"):
        connection.execute(
            f"INSERT OR IGNORE INTO titles(title) SELECT {column} FROM page_fates "
            f"WHERE fate = 'page_names' ORDER BY {column}"
        )
    connection.execute(
        "INSERT INTO page_names SELECT page.id, names.id, target.id FROM page_fates p JOIN titles page "
        "ON page.title = p.page JOIN names ON names.name = p.name JOIN titles target ON "
        "target.title = p.article WHERE p.fate = 'page_names'"
    )
    connection.executescript(INDEXES)
    stats.update(names_meta["page_stats"])
    stats["pages"] = names_meta["pages"]
    link_fates = names_meta["link_fates"]
    links = {
        "links": link_fates.get("links", 0),
        "links_in": names_meta["links_in"],
        "links_counted": link_fates.get("links_counted", 0),
        "text_links": connection.execute("SELECT COALESCE(SUM(links), 0) FROM n.names").fetchone()[0],
    }
    for group in ("other_links", "links_not_counted"):
        links[group] = {key.split(":", 1)[1]: n for key, n in sorted(link_fates.items()) if key.startswith(group + ":")}
    summary = {
        **{k: stats[k] for k in sorted(stats)},
        **links,
        "include_missing_pages": include_missing_pages,
        "dump": names_meta["dump_stats"],
        "redirects": names_meta["redirects"],
    }
    set_meta(
        connection,
        format=FORMAT,
        version=VERSION,
        dump=names_meta["dump"],
        min_link_probability=min_link_probability,
        stats=summary,
        name_tokens=NAME_TOKENS,
    )
    connection.execute("DETACH DATABASE n")
    connection.close()
    os.replace(building, out_path)
    logger.info(
        "mention dictionary: %d pages, %d names kept of %d (%d below p=%g), %d ambiguous page names dropped",
        stats["pages_with_names"],
        stats["names"] - stats["low_probability_names_dropped"],
        stats["names"],
        stats["low_probability_names_dropped"],
        min_link_probability,
        stats["ambiguous_names_dropped"],
    )
    return summary


_STATS = (
    "names",
    "low_probability_names_dropped",
    "entity_links",
    "entity_links_to_missing_pages",
    "entity_links_through_redirect_loops",
    "page_names",
    "pages_with_names",
    "names_through_redirect_loops",
    "names_to_missing_pages",
    "page_names_never_linked_in_text",
    "low_probability_page_names_dropped",
)


def check_part_name_tokens(meta: Dict[str, Any], path: "os.PathLike[str] | str", stage: str) -> None:
    """Refuses a part file of the stage `names` or `occurrences` whose names were cut into tokens otherwise than
    today's (`NAME_TOKENS`: a part written before has none), saying to run its stage again."""
    if meta.get("name_tokens") != NAME_TOKENS:
        raise ValueError(
            f"{os.fspath(path)}: a part file built before names kept their combining marks (name tokens "
            f"{meta.get('name_tokens') or 1}, now {NAME_TOKENS}): run the stage `{stage}` again"
        )


# --- the four stages in one run -------------------------------------------------------------------------------------


def build_mention_store(
    dump_path: "os.PathLike[str] | str",
    out_path: "os.PathLike[str] | str",
    min_link_probability: float = 0.01,
    num_workers: int = 1,
    page_titles: Optional[Iterable[str]] = None,
    max_pages: Optional[int] = None,
    include_missing_pages: bool = False,
    links_in: str = "page",
    work_dir: "Optional[os.PathLike[str] | str]" = None,
) -> Dict[str, Any]:
    """
    The four stages over a whole dump, to the SQLite mention dictionary `out_path`. Returns its stats.

    # Parameters

    dump_path : `PathLike`
        A `pages-articles` XML dump (plain, `.bz2` or `.gz`).
    out_path : `PathLike`
        The file to write.
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
    work_dir : `Optional[PathLike]`, optional (default = `None`)
        Where the stages' files go (a temporary folder in it); default: beside `out_path`.
    """
    if not 0.0 <= min_link_probability <= 1.0:
        raise ValueError(f"min_link_probability must be in [0, 1], got {min_link_probability}")
    work_dir = os.fspath(work_dir) if work_dir is not None else os.path.dirname(os.path.abspath(os.fspath(out_path)))
    with tempfile.TemporaryDirectory(prefix=".mention-dictionary-", dir=work_dir) as work:
        links, names, occurrences = (
            os.path.join(work, f"{stage}.sqlite") for stage in ("links", "names", "occurrences")
        )
        collect_mention_links(dump_path, links, links_in, page_titles, max_pages, num_workers)
        merge_mention_links([links], names)
        count_name_occurrences(dump_path, names, occurrences, max_pages, num_workers)
        return merge_mention_parts(names, [occurrences], out_path, min_link_probability, include_missing_pages)


def build_mention_dictionary(dump_path: "os.PathLike[str] | str", **options: Any) -> MentionDictionary:
    """The mention dictionary of a dump, in memory (for small dumps); `options`: `build_mention_store`'s."""
    with tempfile.TemporaryDirectory(prefix="mention-dictionary-") as work:
        path = os.path.join(work, "mentions.sqlite")
        build_mention_store(dump_path, path, work_dir=work, **options)
        store = MentionStore(path)
        dictionary = MentionDictionary.from_store(store)
        store.connection.close()
    dictionary.dump = os.fspath(dump_path)
    dictionary.source = ""
    return dictionary
