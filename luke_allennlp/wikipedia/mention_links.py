"""
Stages 1 and 2 of the mention dictionary's build (`luke_allennlp.wikipedia.mention_dictionary` describes them all):
the names linked on each page with their targets, collected per dump part (`collect_mention_links`) and merged over
the parts, targets through redirects, into the names file (`merge_mention_links`) that stage 3 counts the
occurrences of.
"""

import itertools
import os
from collections import Counter
from typing import Dict, Iterable, Iterator, List, Optional, Sequence, Set, Tuple

from luke_allennlp.resources.mentions.base import NAME_TOKENS
from luke_allennlp.resources.mentions.name_matcher import TOKEN, cjk_key
from luke_allennlp.resources.sqlite import connect, set_meta
from luke_allennlp.resources.titles import Namespaces, normalize_title
from luke_allennlp.wikipedia.dump import WikiDump, WikiPage
from luke_allennlp.wikipedia.markup import LINK_SCOPES, clean_wikitext
from luke_allennlp.wikipedia.parallel import ordered_map, page_batches
from luke_allennlp.wikipedia.parts import (
    SpilledCounter,
    TitleWriter,
    attached,
    fetch_batches,
    iterate,
    lookup_sql,
    merge_titles,
    read_part_meta,
    sum_counts,
)

LINKS, NAMES = "mention-links", "mention-names"  # the kinds of the part files of stages 1 and 2


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


def article_pages(dump: WikiDump, titles: Optional[TitleWriter] = None) -> Iterator[WikiPage]:
    """The dump's articles that have text; every page's title to `titles` (if given) as the dump streams by."""
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
    batches = ((dump.namespaces, links_in, batch) for batch in page_batches(article_pages(dump, titles)))
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
    set_meta(
        connection,
        kind=LINKS,
        dump=os.fspath(dump_path),
        links_in=links_in,
        max_pages=max_pages,
        page_titles=None if wanted is None else sorted(wanted),
        pages=pages,
        link_fates=dict(link_fates),
        dump_stats=dump.stats.as_dict(),
    )
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
    connection.execute(
        "CREATE TABLE name_targets AS SELECT name, target, SUM(count) AS count FROM link_runs GROUP BY name, target"
    )
    connection.execute("DROP TABLE link_runs")
    # Each name with both keys of `sqlite_name_matcher`: stage 3 looks names up with `cjk_characters` ones.
    connection.execute(
        "CREATE TABLE names(name TEXT PRIMARY KEY, links INTEGER, first_token TEXT, n_tokens INTEGER, "
        "cjk_first_token TEXT, cjk_n_tokens INTEGER) WITHOUT ROWID"
    )
    rows = connection.execute("SELECT name, SUM(count) FROM name_targets GROUP BY name ORDER BY name")
    insert = connection.cursor()
    for batch in fetch_batches(rows):
        insert.executemany(
            "INSERT INTO names VALUES (?, ?, ?, ?, ?, ?)",
            [(name, links, *_tokens(name), *cjk_key(name)) for name, links in batch],
        )
    connection.execute("CREATE INDEX names_first_token ON names(first_token, n_tokens)")
    connection.execute(
        "CREATE INDEX names_cjk_first_token ON names(cjk_first_token, cjk_n_tokens) WHERE cjk_first_token IS NOT NULL"
    )
    connection.execute(
        f"CREATE TABLE name_entities AS SELECT t.name AS name, {lookup_sql('t.target')}, "
        "SUM(t.count) AS count FROM name_targets t LEFT JOIN redirect_ends r ON r.title = t.target "
        "GROUP BY 1, 2, 3"
    )
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
    set_meta(
        connection,
        kind=NAMES,
        dump=" ".join(meta["dump"] for meta in metas),
        links_in=metas[0]["links_in"],
        page_stats=page_stats,
        pages=sum(meta["pages"] for meta in metas),
        link_fates=sum_counts([meta["link_fates"] for meta in metas]),
        dump_stats=sum_counts([meta["dump_stats"] for meta in metas]),
        redirects=redirect_stats.__dict__,
        name_tokens=NAME_TOKENS,
    )
    connection.close()


def _merge_page_names(connection, parts) -> Dict[str, int]:
    """`page_names(page, name, article, status)`, the names of each page kept (the last page of a title)."""
    connection.execute("CREATE TABLE owners(title TEXT PRIMARY KEY, part INTEGER, seq INTEGER) WITHOUT ROWID")
    connection.execute("CREATE TABLE page_names(page TEXT, name TEXT, article TEXT, status TEXT)")
    stats = Counter(ambiguous_names_dropped=0, page_names_outside_text=0)
    for number, path in enumerate(parts):
        with attached(connection, path) as part:
            connection.execute(
                f"INSERT INTO owners SELECT title, {number}, seq FROM {part}.pages WHERE true "
                "ORDER BY seq ON CONFLICT(title) DO UPDATE SET part = excluded.part, seq = excluded.seq"
            )
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


def _tokens(name: str) -> Tuple[Optional[str], int]:
    tokens = TOKEN.findall(name)
    return (tokens[0] if tokens else None), len(tokens)
