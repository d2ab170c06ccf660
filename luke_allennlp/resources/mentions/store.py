"""
The mention dictionary as a SQLite file (what `allennlp build-mention-dictionary` writes unless the output ends with
`.json`): read-only, opened through a memory map and queried as needed, so a reader's memory holds what it
touches, not the dictionary, and data-loader workers share the file's pages (the operating system's page cache)
instead of each loading a copy. Same content and answers as the version-2 JSON (`MentionDictionary`).

Tables: `meta(key, value)` (JSON values: `format`, `version`, `dump`, `min_link_probability`, `stats`, `name_tokens`);
`titles(id, title)`; `names(id, name, folded, link_probability, first_token, n_tokens, links, cjk_first_token,
cjk_n_tokens)` (`folded`: without case and white space, for `ignore_case`; `first_token`/`n_tokens`: `NameMatcher`'s
tokens; `links`: the name's links to its candidates, 0 if it has none; `cjk_first_token`/`cjk_n_tokens`: the
tokens of a `cjk_characters` matcher, where they differ from `first_token`/`n_tokens` (names with kana or ideographs),
else NULL: Japanese names are found in text without spaces, as with the JSON file); `candidates(name_id, title_id, links)`; `page_names(page_id, name_id,
target_id)` (page and target are `titles` ids).
"""

import logging
import os
import sqlite3
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

from luke_allennlp.resources.mentions.base import (
    FORMAT,
    NAME_TOKENS,
    VERSION,
    MentionDictionaryBase,
    check_name_tokens,
    fold,
)
from luke_allennlp.resources.mentions.name_matcher import TOKEN, LookupNameMatcher, NameMatcher, cjk_key
from luke_allennlp.resources.sqlite import connect, get_meta, is_sqlite, open_readonly, set_meta

logger = logging.getLogger(__name__)

SCHEMA = """
CREATE TABLE titles(id INTEGER PRIMARY KEY, title TEXT NOT NULL UNIQUE);
CREATE TABLE names(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, folded TEXT NOT NULL,
                   link_probability REAL NOT NULL, first_token TEXT, n_tokens INTEGER NOT NULL, links INTEGER NOT NULL,
                   cjk_first_token TEXT, cjk_n_tokens INTEGER);
CREATE TABLE candidates(name_id INTEGER, title_id INTEGER, links INTEGER NOT NULL, PRIMARY KEY (name_id, title_id))
    WITHOUT ROWID;
CREATE TABLE page_names(page_id INTEGER, name_id INTEGER, target_id INTEGER, PRIMARY KEY (page_id, name_id))
    WITHOUT ROWID;
"""
INDEXES = """
CREATE INDEX names_folded ON names(folded);
CREATE INDEX names_first_token ON names(first_token, n_tokens);
CREATE INDEX names_cjk_first_token ON names(cjk_first_token, cjk_n_tokens) WHERE cjk_first_token IS NOT NULL;
"""
# A `cjk_characters` matcher's key: the CJK tokens where a name has its own, else its `TOKEN`s (the same ones).
CJK_KEY = ("cjk_first_token = ? OR (first_token = ? AND cjk_first_token IS NULL)", "COALESCE(cjk_n_tokens, n_tokens)")


MAX_NAMES_PER_TOKEN = 64  # a first token's names fetched at once, if no more


def sqlite_name_matcher(
    connection: Callable[[], sqlite3.Connection],
    table: str,
    condition: str = "1",
    parameters: Tuple[Any, ...] = (),
    value: Callable[[str], Optional[int]] = lambda name: None,
    cjk_characters: bool = False,
) -> LookupNameMatcher:
    """
    A matcher of the names of a table with `name`, `first_token` and `n_tokens` columns (`condition` with
    `parameters` selects them), looked up as the text brings them; `connection()` gives this process's connection.
    With `cjk_characters` (`NameMatcher`'s), names are looked up by `CJK_KEY` (the table's `cjk_first_token` and
    `cjk_n_tokens` columns too).
    """
    key, length = CJK_KEY if cjk_characters else ("first_token = ?", "n_tokens")
    key_count = key.count("?")

    def first_token(token: str) -> Tuple[Tuple[int, ...], Optional[frozenset]]:
        arguments = (token,) * key_count + parameters
        rows = (
            connection()
            .execute(
                f"SELECT name, {length} FROM {table} WHERE ({key}) AND {condition} LIMIT {MAX_NAMES_PER_TOKEN + 1}",
                arguments,
            )
            .fetchall()
        )
        if len(rows) <= MAX_NAMES_PER_TOKEN:
            return tuple(sorted({n for _, n in rows}, reverse=True)), frozenset(name for name, _ in rows)
        lengths = connection().execute(
            f"SELECT DISTINCT {length} AS n FROM {table} WHERE ({key}) AND {condition} ORDER BY n DESC", arguments
        )
        return tuple(n for (n,) in lengths), None

    def contains(name: str) -> bool:
        sql = f"SELECT 1 FROM {table} WHERE name = ? AND {condition}"
        return connection().execute(sql, (name, *parameters)).fetchone() is not None

    return LookupNameMatcher(first_token, contains, value, cjk_characters=cjk_characters)


class MentionStore(MentionDictionaryBase):
    """
    A mention dictionary in a SQLite file (`MentionDictionaryBase`'s queries, answered from the file). The
    connection is opened in each process that queries (a forked data-loader worker opens its own; a pickled store
    carries only its path).

    # Parameters

    path : `PathLike`
        The file.
    """

    def __init__(self, path: "os.PathLike[str] | str") -> None:
        self.source = os.fspath(path)
        if not is_sqlite(self.source):
            raise ValueError(f"{self.source}: not a SQLite mention dictionary")
        self._connection: Optional[sqlite3.Connection] = None
        self._pid: Optional[int] = None
        try:
            meta = get_meta(self.connection)
        except sqlite3.DatabaseError as error:
            raise ValueError(f"{self.source}: not a mention dictionary ({error})") from None
        if meta.get("format") != FORMAT or meta.get("version") != VERSION:
            raise ValueError(
                f"{self.source}: not a mention dictionary of version {VERSION} "
                f"(format {meta.get('format')!r}, version {meta.get('version')!r})"
            )
        check_name_tokens(meta, self.source)
        self.dump: str = meta.get("dump", "")
        self.min_link_probability: float = meta.get("min_link_probability", 0.0)
        self.stats: Dict[str, Any] = meta.get("stats", {})
        columns = {row[1] for row in self.connection.execute("PRAGMA table_info(names)")}
        self.has_cjk_keys = "cjk_first_token" in columns  # (files written before them match at `TOKEN`s only)

    @property
    def connection(self) -> sqlite3.Connection:
        if self._pid != os.getpid():  # (a connection must not cross a fork)
            self._connection, self._pid = open_readonly(self.source), os.getpid()
        assert self._connection is not None
        return self._connection

    def __getstate__(self) -> Dict[str, Any]:
        return {**self.__dict__, "_connection": None, "_pid": None}

    def link_probability(self, name: str) -> float:
        row = self.connection.execute("SELECT link_probability FROM names WHERE name = ?", (name,)).fetchone()
        return row[0] if row else 0.0

    def num_pages(self) -> int:
        return self.connection.execute("SELECT COUNT(DISTINCT page_id) FROM page_names").fetchone()[0]

    def iter_names(self) -> Iterator[Tuple[str, float]]:
        yield from self.connection.execute("SELECT name, link_probability FROM names ORDER BY name")

    def contents(self) -> Tuple[Dict[str, Dict[str, str]], Dict[str, float], Dict[str, List[List]]]:
        """The whole dictionary as the JSON file holds it: its `pages`, `link_probability` and `entities`."""
        pages: Dict[str, Dict[str, str]] = {}
        rows = self.connection.execute(
            "SELECT page.title, n.name, target.title FROM page_names p JOIN titles page ON page.id = p.page_id JOIN "
            "names n ON n.id = p.name_id JOIN titles target ON target.id = p.target_id ORDER BY page.title, n.name"
        )
        for page, name, target in rows:
            pages.setdefault(page, {})[name] = target
        probability = dict(self.iter_names())
        entities: Dict[str, List[List]] = {}
        rows = self.connection.execute(
            "SELECT n.name, t.title, c.links FROM names n JOIN candidates c ON c.name_id = n.id JOIN titles t ON "
            "t.id = c.title_id ORDER BY n.name, c.links DESC, t.title"
        )
        for name, title, links in rows:
            entities.setdefault(name, []).append([title, links])
        return pages, probability, entities

    def _names_for_page(self, title: str) -> Dict[str, str]:
        rows = self.connection.execute(
            "SELECT n.name, target.title FROM titles page JOIN page_names p ON p.page_id = page.id JOIN names n ON "
            "n.id = p.name_id JOIN titles target ON target.id = p.target_id WHERE page.title = ?",
            (title,),
        )
        return dict(rows)

    def _entity_links(self, name: str) -> List[Tuple[str, int]]:
        return self.connection.execute(
            "SELECT t.title, c.links FROM names n JOIN candidates c ON c.name_id = n.id JOIN titles t ON "
            "t.id = c.title_id WHERE n.name = ? ORDER BY c.links DESC, t.title",
            (name,),
        ).fetchall()

    def _folded_entity_links(self, folded: str) -> List[Tuple[str, int]]:
        return self.connection.execute(
            "SELECT t.title, SUM(c.links) AS links FROM names n JOIN candidates c ON c.name_id = n.id JOIN titles "
            "t ON t.id = c.title_id WHERE n.folded = ? GROUP BY t.title ORDER BY links DESC, t.title",
            (folded,),
        ).fetchall()

    def _name_matcher(
        self, min_link_probability: float, value: Callable[[str], Optional[int]], cjk_characters: bool
    ) -> NameMatcher:
        # Names are looked up in the file as the text brings them.
        if cjk_characters and not self.has_cjk_keys:
            logger.warning(
                "%s was written without the names' CJK keys: names are found at word boundaries only, not "
                "inside text without spaces; rebuild it to find them there",
                self.source,
            )
            cjk_characters = False
        return sqlite_name_matcher(
            lambda: self.connection,
            "names",
            "link_probability >= ? AND links > 0",
            (min_link_probability,),
            value,
            cjk_characters,
        )


def write_store(dictionary: Any, path: "os.PathLike[str] | str") -> None:
    """
    An in-memory (JSON) mention dictionary (`MentionDictionary`) of version 2 as a SQLite file: to move a JSON file to the format
    readers query without loading it (`MentionDictionary.from_file(json).save(path.sqlite)`).
    """
    if dictionary.entities is None:
        raise ValueError(
            f"{dictionary.source or 'this mention dictionary'} is of version 1, without candidates: "
            "rebuild it with `allennlp build-mention-dictionary`"
        )
    path = os.fspath(path)
    building = path + ".building"
    connection = connect(building, create=True)
    connection.executescript(SCHEMA)
    titles = sorted(
        {t for counts in dictionary.entities.values() for t, _ in counts}
        | {t for page, names in dictionary.pages.items() for t in (page, *names.values())}
    )
    title_ids = {title: i for i, title in enumerate(titles, 1)}
    connection.executemany("INSERT INTO titles VALUES (?, ?)", ((i, t) for t, i in title_ids.items()))
    link_probability = dict(dictionary.iter_names())
    names = list(link_probability)
    name_ids = {name: i for i, name in enumerate(names, 1)}
    rows = []
    for name in names:
        tokens = TOKEN.findall(name)
        links = sum(count for _, count in dictionary.entities.get(name, ()))
        rows.append(
            (
                name_ids[name],
                name,
                fold(name),
                link_probability[name],
                tokens[0] if tokens else None,
                len(tokens),
                links,
                *cjk_key(name),
            )
        )
    connection.executemany("INSERT INTO names VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
    missing = [name for name in dictionary.entities if name not in name_ids] + [
        name for names_of_page in dictionary.pages.values() for name in names_of_page if name not in name_ids
    ]
    if missing:
        raise ValueError(f"{dictionary.source or 'the dictionary'}: names without a link probability: {missing[:5]}")
    connection.executemany(
        "INSERT INTO candidates VALUES (?, ?, ?)",
        (
            (name_ids[name], title_ids[title], count)
            for name, counts in dictionary.entities.items()
            for title, count in counts
        ),
    )
    connection.executemany(
        "INSERT INTO page_names VALUES (?, ?, ?)",
        (
            (title_ids[page], name_ids[name], title_ids[target])
            for page, names_of_page in dictionary.pages.items()
            for name, target in names_of_page.items()
        ),
    )
    connection.executescript(INDEXES)
    set_meta(
        connection,
        format=FORMAT,
        version=VERSION,
        dump=dictionary.dump,
        min_link_probability=dictionary.min_link_probability,
        stats=dictionary.stats,
        name_tokens=NAME_TOKENS,
    )
    connection.close()
    os.replace(building, path)
