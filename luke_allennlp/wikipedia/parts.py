"""
Building from a dump in parts, on disk: what the builders share to run in bounded memory and on dump parts.

English Wikipedia comes in many dump parts (`enwiki-...-pages-articles1.xml-p1p41242.bz2`, ...), each a complete
XML export. A builder reads each part on its own (one process per part, any scheduler) into a *part file*, and a
merge combines the part files into exactly what one run over the whole dump gives. Part files and the merge's
work are SQLite databases (the standard library's), so that counts and titles live on disk, not in memory:

- `titles(seq, title, redirect)`: the part's main-namespace pages in dump order (`redirect` NULL for an article),
  written while the part streams by (`TitleWriter`). A link's target may be a page or redirect of another part, so
  links are resolved only at the merge, over every part's titles (`merge_titles`, then `resolve_redirects`: the
  same rules as `WikiIndex`, later pages winning over earlier ones with the same title, loops detected);
- counts spilled to a table in runs (`SpilledCounter`) and added up by SQLite at the merge (its sorter spills
  to temporary files too);
- `TitleIndex`: the merged titles as a file that answers `WikiIndex.lookup` one query at a time, for the builders
  that look links up while they stream (the corpus; a one-run vocabulary is one part merged).

A building connection's page cache (and its sorter's memory) is capped at `CACHE_KIB` (`luke_allennlp.resources.sqlite`), so the builders' peak does
not follow the dump's size once their files outgrow it.

`split_dump` cuts a dump into parts (for tests and benchmarks; real dumps come in parts already).
"""

import bz2
import functools
import gzip
import os
import re
import sqlite3
from collections import Counter
from typing import Any, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple

from luke_allennlp.resources.sqlite import connect, get_meta, is_sqlite, open_readonly, set_meta
from luke_allennlp.wikipedia.dump import WikiPage, open_dump
from luke_allennlp.wikipedia.redirects import RedirectStats

SPILL_ENTRIES = 500_000  # counter entries kept in memory before a spill (about 100 MB of Python objects)


def read_part_meta(path: "os.PathLike[str] | str", kind: str) -> Dict[str, Any]:
    """A part file's metadata, checking that it is a part file of `kind`."""
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"{path}: no such part file")
    if not is_sqlite(path):
        raise ValueError(f"{path}: not a part file (not SQLite)")
    connection = sqlite3.connect(f"file:{os.path.abspath(path)}?mode=ro", uri=True)
    try:
        meta = get_meta(connection)
    except sqlite3.DatabaseError:
        raise ValueError(f"{path}: not a part file (no metadata)") from None
    finally:
        connection.close()
    if meta.get("kind") != kind:
        raise ValueError(f"{path}: a part file of kind {meta.get('kind')!r}, not {kind!r}")
    return meta


class attached:
    """`with attached(connection, path) as schema:` the database at `path` attached read-only as `schema`."""

    def __init__(self, connection: sqlite3.Connection, path: "os.PathLike[str] | str", schema: str = "part") -> None:
        self.connection, self.path, self.schema = connection, os.fspath(path), schema

    def __enter__(self) -> str:
        uri = "file:" + os.path.abspath(self.path) + "?mode=ro"
        self.connection.execute(f"ATTACH DATABASE ? AS {self.schema}", (uri,))
        return self.schema

    def __exit__(self, *_: Any) -> None:
        self.connection.execute(f"DETACH DATABASE {self.schema}")


class SpilledCounter:
    """
    A `Counter` over tuples kept in memory up to `limit` entries, then appended to `table` (run after run); the
    runs are added up with SQL (`SUM ... GROUP BY`) when read.
    """

    def __init__(
        self, connection: sqlite3.Connection, table: str, columns: Sequence[str], limit: Optional[int] = None
    ) -> None:
        self.connection, self.table = connection, table
        self.limit = SPILL_ENTRIES if limit is None else limit
        self.width = len(columns)
        connection.execute(f"CREATE TABLE {table}({', '.join(f'{c} TEXT' for c in columns)}, count INTEGER)")
        self.counts: Counter = Counter()

    def update(self, keys: Iterable[Any]) -> None:
        self.counts.update(keys)
        if len(self.counts) >= self.limit:
            self.flush()

    def add(self, counts: Counter) -> None:
        self.counts.update(counts)
        if len(self.counts) >= self.limit:
            self.flush()

    def flush(self) -> None:
        placeholders = ", ".join("?" * (self.width + 1))
        rows = ((*(key if self.width > 1 else (key,)), count) for key, count in self.counts.items())
        self.connection.executemany(f"INSERT INTO {self.table} VALUES ({placeholders})", rows)
        self.counts = Counter()


class TitleWriter:
    """Writes a part's main-namespace titles and redirects to `titles`, in dump order (see `TitleCollector`)."""

    def __init__(self, connection: sqlite3.Connection) -> None:
        self.connection = connection
        connection.execute("CREATE TABLE titles(seq INTEGER PRIMARY KEY, title TEXT NOT NULL, redirect TEXT)")
        self.rows: List[Tuple[str, Optional[str]]] = []

    def add(self, page: WikiPage) -> None:
        if page.namespace == 0:
            self.rows.append((page.title, page.redirect))
            if len(self.rows) >= 10_000:
                self.flush()

    def flush(self) -> None:
        self.connection.executemany("INSERT INTO titles(title, redirect) VALUES (?, ?)", self.rows)
        self.rows = []


def merge_titles(connection: sqlite3.Connection, parts: Sequence["os.PathLike[str] | str"]) -> RedirectStats:
    """
    The titles of the parts, in order, as one index in `connection`: `page_titles(title, redirect)` (a later page
    with a title replaces the earlier one, as in one pass), `articles(title)`, and `redirect_ends(title, end)`:
    where each redirect's chain ends (an article or a title no page has), NULL for a loop (`resolve_redirects`).
    """
    connection.execute("CREATE TABLE page_titles(title TEXT PRIMARY KEY, redirect TEXT) WITHOUT ROWID")
    rows = 0
    for path in parts:
        with attached(connection, path) as part:
            connection.execute(
                f"INSERT INTO page_titles SELECT title, redirect FROM {part}.titles WHERE true "
                "ORDER BY seq ON CONFLICT(title) DO UPDATE SET redirect = excluded.redirect"
            )
            rows += connection.execute(f"SELECT COUNT(*) FROM {part}.titles").fetchone()[0]
    duplicates = rows - connection.execute("SELECT COUNT(*) FROM page_titles").fetchone()[0]
    connection.execute("CREATE TABLE articles(title TEXT PRIMARY KEY) WITHOUT ROWID")
    connection.execute("INSERT INTO articles SELECT title FROM page_titles WHERE redirect IS NULL")
    stats = resolve_redirects(connection)
    stats.duplicate_titles = duplicates
    return stats


def resolve_redirects(connection: sqlite3.Connection) -> RedirectStats:
    """
    `redirect_ends` from `page_titles` by pointer jumping: each round, a redirect whose end is itself a redirect
    takes that redirect's end. A chain that ends is resolved within about log2(its length) rounds, and every
    round resolves at least one more unless only redirects that reach a loop are left; those get NULL.
    """
    connection.execute("CREATE TABLE redirect_ends(title TEXT PRIMARY KEY, end TEXT) WITHOUT ROWID")
    connection.execute("INSERT INTO redirect_ends SELECT title, redirect FROM page_titles WHERE redirect IS NOT NULL")
    unresolved_sql = "SELECT COUNT(*) FROM redirect_ends WHERE end IN (SELECT title FROM redirect_ends)"
    chained = connection.execute(unresolved_sql).fetchone()[0]
    unresolved, previous = chained, None
    while unresolved and unresolved != previous:
        connection.execute(
            "UPDATE redirect_ends SET end = (SELECT r.end FROM redirect_ends r WHERE r.title = "
            "redirect_ends.end) WHERE end IN (SELECT title FROM redirect_ends)"
        )
        previous, unresolved = unresolved, connection.execute(unresolved_sql).fetchone()[0]
    connection.execute("UPDATE redirect_ends SET end = NULL WHERE end IN (SELECT title FROM redirect_ends)")

    def count(sql: str) -> int:
        return connection.execute(f"SELECT COUNT(*) FROM redirect_ends {sql}").fetchone()[0]

    return RedirectStats(
        redirects=count(""),
        chained_redirects=chained,
        redirect_loops=count("WHERE end IS NULL"),
        redirects_to_missing_pages=count("WHERE end IS NOT NULL AND end NOT IN (SELECT title FROM articles)"),
    )


def lookup_sql(target: str, redirect: str = "r") -> str:
    """
    SQL for `WikiIndex.lookup` of the column `target`, given `LEFT JOIN redirect_ends {redirect} ON
    {redirect}.title = {target}`: two columns, the article (NULL in a loop) and the status.
    """
    end = f"CASE WHEN {redirect}.title IS NULL THEN {target} ELSE {redirect}.end END"
    status = (
        f"CASE WHEN {redirect}.title IS NOT NULL AND {redirect}.end IS NULL THEN 'loop' WHEN EXISTS (SELECT 1 "
        f"FROM articles a WHERE a.title = {end}) THEN 'article' ELSE 'missing' END"
    )
    return f"{end} AS article, {status} AS status"


TITLE_INDEX = "title-index"


class TitleIndex:
    """
    `WikiIndex` on disk: the merged titles of part files (`merge_titles`) in a SQLite file, each `lookup` one
    query (answers cached, at most `cache_size`), so that a builder's memory does not hold the dump's titles
    (English Wikipedia: 6.7M articles and 10M redirects, several GB as Python sets and dicts). Picklable: a forked
    or spawned worker opens its own read-only connection.

    # Parameters

    path : `PathLike`
        A file `build` wrote.
    cache_size : `int`, optional (default = `1 << 16`)
        Lookups remembered (most recent first).
    """

    def __init__(self, path: "os.PathLike[str] | str", cache_size: int = 1 << 16) -> None:
        self.path = os.fspath(path)
        self.cache_size = cache_size
        self._connection: Optional[sqlite3.Connection] = None
        self._pid: Optional[int] = None
        self._cached: Any = None
        meta = get_meta(self.connection)
        if meta.get("kind") != TITLE_INDEX:
            raise ValueError(f"{self.path}: not a title index (kind {meta.get('kind')!r})")
        self.stats = RedirectStats(**meta["redirect_stats"])
        self.num_articles: int = meta["articles"]

    @classmethod
    def build(cls, parts: Sequence["os.PathLike[str] | str"], path: "os.PathLike[str] | str") -> "TitleIndex":
        """The index of the titles of part files (in dump order), written to `path`."""
        connection = connect(path, create=True)
        stats = merge_titles(connection, parts)
        articles = connection.execute("SELECT COUNT(*) FROM articles").fetchone()[0]
        connection.execute("DROP TABLE page_titles")
        set_meta(connection, kind=TITLE_INDEX, redirect_stats=stats.__dict__, articles=articles)
        connection.close()
        return cls(path)

    @staticmethod
    def is_index(path: "os.PathLike[str] | str") -> bool:
        """Whether `path` is a file `TitleIndex.build` wrote (not a part file)."""
        if not os.path.isfile(path) or not is_sqlite(path):
            return False
        connection = open_readonly(path, mmap_bytes=0)
        try:
            return get_meta(connection).get("kind") == TITLE_INDEX
        except sqlite3.DatabaseError:
            return False
        finally:
            connection.close()

    @property
    def connection(self) -> sqlite3.Connection:
        if self._pid != os.getpid():  # (a connection must not cross a fork)
            self._connection, self._pid = open_readonly(self.path, mmap_bytes=0), os.getpid()
            self._cached = functools.lru_cache(maxsize=self.cache_size)(self._lookup)
        assert self._connection is not None
        return self._connection

    def __getstate__(self) -> Dict[str, Any]:
        return {**self.__dict__, "_connection": None, "_pid": None, "_cached": None}

    def _lookup(self, title: str) -> Tuple[Optional[str], str]:
        article, status = self.connection.execute(
            f"SELECT {lookup_sql('q.title')} FROM (SELECT ? AS title) q LEFT JOIN redirect_ends r ON r.title = q.title",
            (title,),
        ).fetchone()
        return article, status

    def lookup(self, title: str) -> Tuple[Optional[str], str]:
        """As `WikiIndex.lookup`: `(article, "article")`, `(end, "missing")` or `(None, "loop")`."""
        if self._pid != os.getpid():
            self.connection  # noqa: B018  (opens this process's connection and its cache)
        return self._cached(title)

    def resolve(self, title: str) -> Optional[str]:
        """The article a title leads to through redirects, or None."""
        end, status = self.lookup(title)
        return end if status == "article" else None

    def close(self) -> None:
        if self._connection is not None and self._pid == os.getpid():
            self._connection.close()
        self._connection, self._pid, self._cached = None, None, None


def sum_counts(values: Sequence[Any]) -> Any:
    """Numbers added, dicts merged key by key, lists joined, anything else the same in every part (else listed)."""
    first = values[0]
    if isinstance(first, bool) or not isinstance(first, (int, float, dict, list)):
        return first if all(v == first for v in values) else list(values)
    if isinstance(first, dict):
        keys = list(dict.fromkeys(key for value in values for key in value))
        return {key: sum_counts([value[key] for value in values if key in value]) for key in keys}
    if isinstance(first, list):
        return [item for value in values for item in value]
    return sum(values)


# --- cutting a dump into parts --------------------------------------------------------------------------------------

_PAGE_START = re.compile(rb"^\s*<page>", re.MULTILINE)
_SITEINFO_END = re.compile(rb"</siteinfo>[^\n]*\n")


def _pages_of(data: bytes, path: str) -> Tuple[bytes, List[bytes], bytes]:
    """A dump's text as its head (up to the siteinfo's end), its `<page>` elements, and its tail."""
    head_end = _SITEINFO_END.search(data)
    starts = [m.start() for m in _PAGE_START.finditer(data)]
    tail_start = data.rfind(b"</mediawiki>")
    if head_end is None or tail_start < 0:
        raise ValueError(f"{path}: not a MediaWiki XML export with a <siteinfo>")
    starts = [start for start in starts if start >= head_end.end()] or [tail_start]
    head = data[: starts[0]]
    pages = [data[start:end] for start, end in zip(starts, starts[1:] + [tail_start]) if start < tail_start]
    return head, pages, data[tail_start:]


def split_dump(path: "os.PathLike[str] | str", out_paths: Sequence["os.PathLike[str] | str"]) -> List[int]:
    """
    Cuts a dump into consecutive parts with about equal numbers of pages, each a complete export with the
    dump's own header (siteinfo), as Wikimedia's dump parts are. Returns each part's page count.
    """
    path = os.fspath(path)
    with open_dump(path) as f:
        head, pages, tail = _pages_of(f.read(), path)
    counts = [len(pages) // len(out_paths) + (i < len(pages) % len(out_paths)) for i in range(len(out_paths))]
    start = 0
    for out, count in zip(out_paths, counts):
        write_bytes(out, head + b"".join(pages[start : start + count]) + tail)
        start += count
    return counts


def repeat_dump(path: "os.PathLike[str] | str", out_path: "os.PathLike[str] | str", times: int) -> int:
    """
    A synthetic dump of `times` copies of every page, copy k > 0 titled `TITLE (copy k)` (its links unchanged):
    for benchmarks at a chosen size. Returns the number of pages written.
    """
    path = os.fspath(path)
    with open_dump(path) as f:
        head, pages, tail = _pages_of(f.read(), path)
    title = re.compile(rb"<title>(.*?)</title>")
    copies = [
        page if k == 0 else title.sub(rb"<title>\1 (copy %d)</title>" % k, page, 1)
        for k in range(times)
        for page in pages
    ]
    write_bytes(out_path, head + b"".join(copies) + tail)
    return len(copies)


def write_bytes(path: "os.PathLike[str] | str", data: bytes) -> None:
    path = os.fspath(path)
    opener: Any = bz2.open if path.endswith(".bz2") else gzip.open if path.endswith(".gz") else open
    with opener(path, "wb") as f:
        f.write(data)


def iterate(cursor: sqlite3.Cursor, size: int = 10_000) -> Iterator[tuple]:
    """The rows of a cursor, fetched in batches."""
    while True:
        rows = cursor.fetchmany(size)
        if not rows:
            return
        yield from rows


def fetch_batches(cursor: sqlite3.Cursor, size: int = 10_000) -> Iterator[List[tuple]]:
    """The rows of a cursor, in lists of at most `size`."""
    while True:
        rows = cursor.fetchmany(size)
        if not rows:
            return
        yield rows
