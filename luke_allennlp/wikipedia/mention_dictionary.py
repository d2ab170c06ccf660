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

The dictionary is also read from (and for small dumps written as) the version-2 JSON file
`{"version": 2, "dump", "min_link_probability", "pages": {title: {name: target}}, "link_probability":
{name: p}, "entities": {name: [[entity, links], ...]}, "stats": {...}, "name_tokens": 2}`, read whole by `MentionDictionary.from_file`,
which opens a SQLite file as a `MentionStore` with the same queries. Version 1 (no "entities") is still read, for
the names of pages; asking it for candidates is an error that says to rebuild it. A dictionary (or part file) the
builder wrote before names kept their combining marks has no `name_tokens` and is refused, naming the command (or
stage) that rebuilds it (`mention_store.check_name_tokens`, `check_part_name_tokens`).
"""

import itertools
import json
import logging
import os
import tempfile
from collections import Counter
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Set, Tuple, Union

from luke_allennlp.wikipedia.dump import WikiDump, WikiPage
from luke_allennlp.wikipedia.markup import LINK_SCOPES, clean_wikitext
from luke_allennlp.wikipedia.mention_store import FORMAT as STORE_FORMAT
from luke_allennlp.wikipedia.mention_store import (
    INDEXES,
    NAME_TOKENS,
    SCHEMA,
    MentionStore,
    check_name_tokens,
    fold,
    sqlite_name_matcher,
    write_store,
)
from luke_allennlp.wikipedia.mention_store import VERSION as STORE_VERSION
from luke_allennlp.wikipedia.name_matcher import TOKEN, NameMatcher, cjk_key
from luke_allennlp.wikipedia.parallel import ordered_map, page_batches
from luke_allennlp.wikipedia.parts import (
    SpilledCounter,
    TitleWriter,
    attached,
    connect,
    is_sqlite,
    iterate,
    lookup_sql,
    merge_titles,
    open_readonly,
    read_part_meta,
    set_meta,
    sum_counts,
)
from luke_allennlp.wikipedia.titles import Namespaces, normalize_title

logger = logging.getLogger(__name__)

VERSION = 2
READABLE_VERSIONS = (1, 2)  # version 1 has no "entities" (p(entity | name))
LINKS, NAMES, OCCURRENCES = "mention-links", "mention-names", "mention-occurrences"  # the kinds of part files


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
            folded = self._folded_counts().get(fold(name))
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
                folded = self._folded.setdefault(fold(name), Counter())
                for title, count in counts:
                    folded[title] += count
        return self._folded

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
        self.candidates("")  # a version-1 file, without candidates, raises here
        names = {name: value(self.candidates(name)) for name in self.entities or {}
                 if self.link_probability(name) >= min_link_probability}  # fmt: skip
        return NameMatcher(names, cjk_characters=cjk_characters)

    def num_pages(self) -> int:
        """How many pages have names."""
        return len(self.pages)

    def to_json(self) -> Dict[str, Any]:
        return {"version": VERSION, "dump": self.dump, "min_link_probability": self.min_link_probability,
                "pages": self.pages, "link_probability": self._link_probability, "entities": self.entities or {},
                "stats": self.stats, "name_tokens": NAME_TOKENS}  # fmt: skip

    def save(self, path: "os.PathLike[str] | str") -> None:
        """As JSON if `path` ends with `.json`, else as a SQLite file (`MentionStore`)."""
        if not os.fspath(path).endswith(".json"):
            assert VERSION == STORE_VERSION  # the store holds what a version-2 JSON dictionary holds
            write_store(self, path)
            return
        with open(path, "w", encoding="utf-8") as f:
            json.dump(self.to_json(), f, ensure_ascii=False)
            f.write("\n")

    @classmethod
    def from_store(cls, store: MentionStore) -> "MentionDictionary":
        """The whole dictionary of a `MentionStore` in memory (for small dictionaries: what the JSON file holds)."""
        connection = store.connection
        pages: Dict[str, Dict[str, str]] = {}
        rows = connection.execute(
            "SELECT page.title, n.name, target.title FROM page_names p JOIN titles page ON page.id = p.page_id JOIN "
            "names n ON n.id = p.name_id JOIN titles target ON target.id = p.target_id ORDER BY page.title, n.name"
        )
        for page, name, target in rows:
            pages.setdefault(page, {})[name] = target
        probability = dict(connection.execute("SELECT name, link_probability FROM names ORDER BY name"))
        entities: Dict[str, List[List]] = {}
        rows = connection.execute(
            "SELECT n.name, t.title, c.links FROM names n JOIN candidates c ON c.name_id = n.id JOIN titles t ON "
            "t.id = c.title_id ORDER BY n.name, c.links DESC, t.title"
        )
        for name, title, links in rows:
            entities.setdefault(name, []).append([title, links])
        return cls(pages, probability, store.min_link_probability, store.dump, store.stats, entities,
                   source=store.source)  # fmt: skip

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
        return cls(data["pages"], data["link_probability"], data.get("min_link_probability", 0.0),
                   data.get("dump", ""), data.get("stats", {}), data.get("entities"), source=path)  # fmt: skip


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


# --- stage 1, per part: names linked on each page -------------------------------------------------------------------


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


def _articles(dump: WikiDump, titles: Optional[TitleWriter] = None) -> Iterator[WikiPage]:
    for page in dump:
        if titles is not None:
            titles.add(page)
        if page.is_article and page.text:
            yield page


def collect_mention_links(
    dump_path: "os.PathLike[str] | str",
    out_path: "os.PathLike[str] | str",
    links_in: str = "page",
    page_titles: Optional[Iterable[str]] = None,
    max_pages: Optional[int] = None,
    num_workers: int = 1,
) -> None:
    """
    Stage 1, on one dump part: its titles and redirects, the (name, target as written) counts of its running
    text's links, and the links of its pages (those of `page_titles`) with their names, to the part file
    `out_path` (see `build_mention_dictionary` for the parameters).
    """
    if links_in not in LINK_SCOPES:
        raise ValueError(f"links_in must be {' or '.join(map(repr, LINK_SCOPES))}, not {links_in!r}")
    wanted = None if page_titles is None else {normalize_title(t) for t in page_titles}
    dump = WikiDump(dump_path, max_pages=max_pages)
    connection = connect(out_path, create=True)
    titles = TitleWriter(connection)
    text_links = SpilledCounter(connection, "text_links", ("name", "target"))
    connection.execute("CREATE TABLE pages(seq INTEGER PRIMARY KEY, title TEXT NOT NULL)")
    connection.execute("CREATE TABLE page_links(page INTEGER NOT NULL, name TEXT, target TEXT, in_text INTEGER)")
    pages, link_fates = 0, Counter()
    batches = ((dump.namespaces, links_in, batch) for batch in page_batches(_articles(dump, titles)))
    for results, batch_fates in ordered_map(_page_links, batches, num_workers):
        link_fates.update(batch_fates)
        page_rows, link_rows = [], []
        for title, in_text, other in results:
            pages += 1
            text_links.update(in_text)
            if wanted is None or title in wanted:
                page_rows.append((pages, title))
                link_rows += [(pages, name, target, 1) for name, target in in_text]
                link_rows += [(pages, name, target, 0) for name, target in other]
        connection.executemany("INSERT INTO pages VALUES (?, ?)", page_rows)
        connection.executemany("INSERT INTO page_links VALUES (?, ?, ?, ?)", link_rows)
    titles.flush()
    text_links.flush()
    set_meta(connection, kind=LINKS, dump=os.fspath(dump_path), links_in=links_in, max_pages=max_pages,
             page_titles=None if wanted is None else sorted(wanted), pages=pages, link_fates=dict(link_fates),
             dump_stats=dump.stats.as_dict())  # fmt: skip
    connection.close()


# --- stage 2, merging the parts' links ------------------------------------------------------------------------------


def merge_mention_links(parts: Sequence["os.PathLike[str] | str"], out_path: "os.PathLike[str] | str") -> None:
    """
    Stage 2: the parts of stage 1 (in dump order) merged into the names file `out_path`: the titles of every part
    with redirects resolved; each name linked in running text with its links (`names`, which stage 3 counts the
    occurrences of) and their entities through redirects (`name_entities`); and each kept page's names, each with
    its one target (`page_names`: a name that refers to two entities on a page is dropped there).
    """
    if not parts:
        raise ValueError("no part files to merge")
    metas = [read_part_meta(path, LINKS) for path in parts]
    for key in ("links_in", "page_titles"):
        if any(meta[key] != metas[0][key] for meta in metas):
            raise ValueError(f"the parts were built with different {key}: build them all with the same options")
    connection = connect(out_path, create=True)
    redirect_stats = merge_titles(connection, parts)
    connection.execute("CREATE TABLE link_runs(name TEXT, target TEXT, count INTEGER)")
    for path in parts:
        with attached(connection, path) as part:
            connection.execute(f"INSERT INTO link_runs SELECT name, target, count FROM {part}.text_links")
    connection.execute("CREATE TABLE name_targets AS SELECT name, target, SUM(count) AS count FROM link_runs "
                       "GROUP BY name, target")  # fmt: skip
    connection.execute("DROP TABLE link_runs")
    # Each name with both keys of `sqlite_name_matcher`: stage 3 looks names up with `cjk_characters` ones.
    connection.execute("CREATE TABLE names(name TEXT PRIMARY KEY, links INTEGER, first_token TEXT, n_tokens INTEGER, "
                       "cjk_first_token TEXT, cjk_n_tokens INTEGER) WITHOUT ROWID")  # fmt: skip
    rows = connection.execute("SELECT name, SUM(count) FROM name_targets GROUP BY name ORDER BY name")
    insert = connection.cursor()
    for batch in _batched(iterate(rows)):
        insert.executemany(
            "INSERT INTO names VALUES (?, ?, ?, ?, ?, ?)",
            [(name, links, *_tokens(name), *cjk_key(name)) for name, links in batch],
        )
    connection.execute("CREATE INDEX names_first_token ON names(first_token, n_tokens)")
    connection.execute("CREATE INDEX names_cjk_first_token ON names(cjk_first_token, cjk_n_tokens) "
                       "WHERE cjk_first_token IS NOT NULL")  # fmt: skip
    connection.execute(f"CREATE TABLE name_entities AS SELECT t.name AS name, {lookup_sql('t.target')}, "
                       "SUM(t.count) AS count FROM name_targets t LEFT JOIN redirect_ends r ON r.title = t.target "
                       "GROUP BY 1, 2, 3")  # fmt: skip
    connection.execute("CREATE INDEX name_entities_name ON name_entities(name)")
    page_stats = _merge_page_names(connection, parts)
    wanted = metas[0]["page_titles"]
    if wanted is not None:
        connection.execute("CREATE TEMP TABLE wanted(title TEXT PRIMARY KEY) WITHOUT ROWID")
        connection.executemany("INSERT INTO wanted VALUES (?)", ((title,) for title in wanted))
        page_stats["requested_pages_not_in_dump"] = connection.execute(
            "SELECT COUNT(*) FROM wanted WHERE title NOT IN (SELECT title FROM owners)"
        ).fetchone()[0]
    connection.execute("DROP TABLE owners")
    set_meta(connection, kind=NAMES, dump=" ".join(meta["dump"] for meta in metas), links_in=metas[0]["links_in"],
             page_stats=page_stats, pages=sum(meta["pages"] for meta in metas),
             link_fates=sum_counts([meta["link_fates"] for meta in metas]),
             dump_stats=sum_counts([meta["dump_stats"] for meta in metas]), redirects=redirect_stats.__dict__,
             name_tokens=NAME_TOKENS)  # fmt: skip
    connection.close()


def _merge_page_names(connection, parts) -> Dict[str, int]:
    """`page_names(page, name, article, status)`, the names of each page kept (the last page of a title)."""
    connection.execute("CREATE TABLE owners(title TEXT PRIMARY KEY, part INTEGER, seq INTEGER) WITHOUT ROWID")
    connection.execute("CREATE TABLE page_names(page TEXT, name TEXT, article TEXT, status TEXT)")
    stats = Counter(ambiguous_names_dropped=0, page_names_outside_text=0)
    for number, path in enumerate(parts):
        with attached(connection, path) as part:
            connection.execute(f"INSERT INTO owners SELECT title, {number}, seq FROM {part}.pages WHERE true "
                               "ORDER BY seq ON CONFLICT(title) DO UPDATE SET part = excluded.part, seq = excluded.seq")  # fmt: skip
    connection.execute("CREATE INDEX owners_part_seq ON owners(part, seq)")
    for number, path in enumerate(parts):
        with attached(connection, path) as part:
            rows = connection.execute(
                f"SELECT o.title, l.name, l.in_text, {lookup_sql('l.target')} FROM {part}.page_links l JOIN owners o "
                f"ON o.part = {number} AND o.seq = l.page LEFT JOIN redirect_ends r ON r.title = l.target "
                "ORDER BY l.rowid"
            )
            insert = connection.cursor()
            for title, links in itertools.groupby(iterate(rows), key=lambda row: row[0]):
                insert.executemany("INSERT INTO page_names VALUES (?, ?, ?, ?)", _names_of_page(title, links, stats))
            rows.close()
    return dict(stats)


def _names_of_page(title: str, links: Iterable[tuple], stats: Counter) -> List[Tuple[str, str, Optional[str], str]]:
    """A page's names with their target `(article, status)`: a name that the running text links keeps the text's
    targets; a name with two targets is dropped."""
    targets: Dict[str, Set[Tuple[Optional[str], str]]] = {}
    other_targets: Dict[str, Set[Tuple[Optional[str], str]]] = {}
    rows = list(links)
    for _, name, in_text, article, status in rows:
        if in_text:
            targets.setdefault(name, set()).add((article, status))
    for _, name, in_text, article, status in rows:
        if not in_text and name not in targets:
            other_targets.setdefault(name, set()).add((article, status))
    stats["page_names_outside_text"] += len(other_targets)
    targets.update(other_targets)
    names = []
    for name, resolved in targets.items():
        if len(resolved) > 1:
            stats["ambiguous_names_dropped"] += 1
            continue
        ((article, status),) = resolved
        names.append((title, name, article, status))
    return names


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
        raise ValueError(f"{os.fspath(names_path)}: a names file of an older version (its names have no keys for "
                         "text without spaces): run the stage `names` (`merge_mention_links`) again")  # fmt: skip
    dump = WikiDump(dump_path, max_pages=max_pages)
    connection = connect(out_path, create=True)
    unlinked = SpilledCounter(connection, "unlinked", ("name",))
    batches = ((dump.namespaces, batch) for batch in page_batches(_articles(dump)))
    for counts in ordered_map(_count_occurrences, batches, num_workers, _init_matcher, (os.fspath(names_path),)):
        unlinked.add(counts)
    unlinked.flush()
    set_meta(connection, kind=OCCURRENCES, dump=os.fspath(dump_path), names=os.fspath(names_path),
             name_tokens=NAME_TOKENS)  # fmt: skip
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
    rows = connection.execute("SELECT n.name, n.links, COALESCE(u.count, 0), n.first_token, n.n_tokens FROM n.names n "
                              "LEFT JOIN unlinked u ON u.name = n.name ORDER BY n.name")  # fmt: skip
    stats: Counter = Counter({key: 0 for key in _STATS})
    insert = connection.cursor()
    for batch in _batched(iterate(rows)):
        fates, kept = [], []
        for name, links, unlinked, first_token, n_tokens in batch:
            probability = links / (links + unlinked)
            fates.append((name, probability >= min_link_probability))
            if probability >= min_link_probability:
                kept.append((name, fold(name), round(probability, 6), first_token, n_tokens, *cjk_key(name)))
        stats["names"] += len(batch)
        stats["low_probability_names_dropped"] += len(batch) - len(kept)
        insert.executemany("INSERT INTO name_fates VALUES (?, ?)", fates)
        insert.executemany("INSERT INTO names(name, folded, link_probability, first_token, n_tokens, links, "
                           "cjk_first_token, cjk_n_tokens) VALUES (?, ?, ?, ?, ?, 0, ?, ?)", kept)  # fmt: skip
    connection.execute("DROP TABLE unlinked")
    # Candidates: the kept names' links through redirects, to articles (or to missing pages if asked).
    include = int(include_missing_pages)
    fate = ("CASE WHEN e.status = 'loop' THEN 'entity_links_through_redirect_loops' WHEN e.status = 'missing' AND NOT "
            f"{include} THEN 'entity_links_to_missing_pages' ELSE 'entity_links' END")  # fmt: skip
    connection.execute(f"CREATE TEMP TABLE kept_entities AS SELECT names.id AS name_id, e.article, {fate} AS fate, "
                       "e.count FROM n.name_entities e JOIN names ON names.name = e.name")  # fmt: skip
    stats.update(dict(connection.execute("SELECT fate, SUM(count) FROM kept_entities GROUP BY fate")))
    connection.execute("INSERT OR IGNORE INTO titles(title) SELECT article FROM kept_entities "
                       "WHERE fate = 'entity_links' ORDER BY article")  # fmt: skip
    connection.execute("INSERT INTO candidates SELECT e.name_id, t.id, e.count FROM kept_entities e JOIN titles t "
                       "ON t.title = e.article WHERE e.fate = 'entity_links'")  # fmt: skip
    connection.execute("UPDATE names SET links = (SELECT SUM(links) FROM candidates WHERE name_id = names.id) "
                       "WHERE id IN (SELECT name_id FROM candidates)")  # fmt: skip
    # The names of each page, in the order of the checks of a single pass.
    fate = ("CASE WHEN p.status = 'loop' THEN 'names_through_redirect_loops' WHEN p.status = 'missing' AND NOT "
            f"{include} THEN 'names_to_missing_pages' WHEN f.name IS NULL THEN 'page_names_never_linked_in_text' "
            "WHEN NOT f.kept THEN 'low_probability_page_names_dropped' ELSE 'page_names' END")  # fmt: skip
    connection.execute(f"CREATE TEMP TABLE page_fates AS SELECT p.page, p.name, p.article, {fate} AS fate "
                       "FROM n.page_names p LEFT JOIN name_fates f ON f.name = p.name")  # fmt: skip
    stats.update(dict(connection.execute("SELECT fate, COUNT(*) FROM page_fates GROUP BY fate")))
    stats["pages_with_names"] = connection.execute(
        "SELECT COUNT(DISTINCT page) FROM page_fates WHERE fate = 'page_names'"
    ).fetchone()[0]
    for column in ("page", "article"):
        connection.execute(f"INSERT OR IGNORE INTO titles(title) SELECT {column} FROM page_fates "
                           f"WHERE fate = 'page_names' ORDER BY {column}")  # fmt: skip
    connection.execute("INSERT INTO page_names SELECT page.id, names.id, target.id FROM page_fates p JOIN titles page "
                       "ON page.title = p.page JOIN names ON names.name = p.name JOIN titles target ON "
                       "target.title = p.article WHERE p.fate = 'page_names'")  # fmt: skip
    connection.executescript(INDEXES)
    stats.update(names_meta["page_stats"])
    stats["pages"] = names_meta["pages"]
    link_fates = names_meta["link_fates"]
    links = {"links": link_fates.get("links", 0), "links_in": names_meta["links_in"],
             "links_counted": link_fates.get("links_counted", 0),
             "text_links": connection.execute("SELECT COALESCE(SUM(links), 0) FROM n.names").fetchone()[0]}  # fmt: skip
    for group in ("other_links", "links_not_counted"):
        links[group] = {key.split(":", 1)[1]: n for key, n in sorted(link_fates.items()) if key.startswith(group + ":")}
    summary = {**{k: stats[k] for k in sorted(stats)}, **links, "include_missing_pages": include_missing_pages,
               "dump": names_meta["dump_stats"], "redirects": names_meta["redirects"]}  # fmt: skip
    set_meta(connection, format=STORE_FORMAT, version=VERSION, dump=names_meta["dump"],
             min_link_probability=min_link_probability, stats=summary, name_tokens=NAME_TOKENS)  # fmt: skip
    connection.execute("DETACH DATABASE n")
    connection.close()
    os.replace(building, out_path)
    logger.info("mention dictionary: %d pages, %d names kept of %d (%d below p=%g), %d ambiguous page names dropped",
                stats["pages_with_names"], stats["names"] - stats["low_probability_names_dropped"], stats["names"],
                stats["low_probability_names_dropped"], min_link_probability, stats["ambiguous_names_dropped"])  # fmt: skip
    return summary


_STATS = ("names", "low_probability_names_dropped", "entity_links", "entity_links_to_missing_pages",
          "entity_links_through_redirect_loops", "page_names", "pages_with_names", "names_through_redirect_loops",
          "names_to_missing_pages", "page_names_never_linked_in_text", "low_probability_page_names_dropped")  # fmt: skip


def check_part_name_tokens(meta: Dict[str, Any], path: "os.PathLike[str] | str", stage: str) -> None:
    """Refuses a part file of the stage `names` or `occurrences` whose names were cut into tokens otherwise than
    today's (`NAME_TOKENS`: a part written before has none), saying to run its stage again."""
    if meta.get("name_tokens") != NAME_TOKENS:
        raise ValueError(f"{os.fspath(path)}: a part file built before names kept their combining marks (name tokens "
                         f"{meta.get('name_tokens') or 1}, now {NAME_TOKENS}): run the stage `{stage}` again")  # fmt: skip


def _tokens(name: str) -> Tuple[Optional[str], int]:
    tokens = TOKEN.findall(name)
    return (tokens[0] if tokens else None), len(tokens)


def _batched(rows: Iterable[tuple], size: int = 10_000) -> Iterator[List[tuple]]:
    iterator = iter(rows)
    while True:
        batch = list(itertools.islice(iterator, size))
        if not batch:
            return
        yield batch


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
