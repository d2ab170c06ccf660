"""
The entity vocabulary of LUKE's pretraining: the most linked Wikipedia articles.

One streaming pass over the dump: workers clean each article's markup and count its links' targets, while the
main process collects titles and redirects; at the end every target is followed through redirects and only
existing articles are kept, ranked by how often they are linked (ties by title, so the result is
deterministic), after `[PAD]`=0, `[UNK]`=1, `[MASK]`=2. By default only the links of the running text count, as
in LUKE (`links_in`); the summary accounts for every other link of the articles by kind or place.
"""

import logging
import os
from collections import Counter
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple

from luke_allennlp.data.entity_vocab import EntityVocab
from luke_allennlp.wikipedia.dump import WikiDump, WikiPage
from luke_allennlp.wikipedia.markup import LINK_SCOPES, clean_wikitext
from luke_allennlp.wikipedia.parallel import ordered_map, page_batches
from luke_allennlp.wikipedia.redirects import ARTICLE, LOOP, MISSING, TitleCollector, WikiIndex
from luke_allennlp.wikipedia.titles import Namespaces

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
    """What one pass over a dump counted: `counts` (linked title after redirects -> links), the dump (its
    stats, language and namespaces), its title `index`, the inter-language links `(page title, prefix, title)`,
    and the summary of the links."""

    dump: WikiDump
    index: WikiIndex
    counts: Counter
    interlanguage: List[Tuple[str, str, str]]
    summary: Dict[str, Any]


def count_dump_links(
    dump_path: "os.PathLike[str] | str",
    num_workers: int = 1,
    max_pages: Optional[int] = None,
    include_missing_pages: bool = False,
    links_in: str = "text",
    language: Optional[str] = None,
) -> DumpLinks:
    """The links of a dump counted through redirects (see `build_entity_vocab` for the parameters); `language`
    overrides the dump's own."""
    if links_in not in LINK_SCOPES:
        raise ValueError(f"links_in must be {' or '.join(map(repr, LINK_SCOPES))}, not {links_in!r}")
    dump = WikiDump(dump_path, max_pages=max_pages, language=language)
    collector = TitleCollector()

    def articles():
        for page in dump:
            collector.add(page)
            if page.is_article and page.text:
                yield page

    targets: Counter = Counter()
    kinds: Counter = Counter()
    outside: Counter = Counter()
    interlanguage: List[Tuple[str, str, str]] = []
    total = 0
    batches = ((dump.namespaces, links_in, batch) for batch in page_batches(articles()))
    for batch_targets, batch_kinds, batch_outside, batch_total, batch_interlanguage in ordered_map(
        _count_links, batches, num_workers
    ):
        targets.update(batch_targets)
        kinds.update(batch_kinds)
        outside.update(batch_outside)
        total += batch_total
        interlanguage += batch_interlanguage
    index = collector.index()

    counts: Counter = Counter()
    links_to = Counter()
    for target, count in targets.items():
        title, status = index.lookup(target)
        links_to[status] += count
        if status == ARTICLE or (status == MISSING and include_missing_pages):
            counts[title] += count
    summary = {
        "dump": os.fspath(dump_path),
        "pages": dump.stats.as_dict(),
        "redirects": index.stats.__dict__,
        # Every link of the articles: links_to_* (those counted) + other_links + links_not_counted.
        "links": total,
        "links_in": links_in,
        "links_counted": sum(targets.values()),
        "links_to_articles": links_to[ARTICLE],
        "links_to_missing_pages": links_to[MISSING],
        "links_through_redirect_loops": links_to[LOOP],
        "other_links": {kind: n for kind, n in sorted(kinds.items())},
        "links_not_counted": {place: n for place, n in sorted(outside.items())},
        "include_missing_pages": include_missing_pages,
        "linked_titles": len(counts),
    }
    return DumpLinks(dump, index, counts, interlanguage, summary)


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
    links = count_dump_links(dump_path, num_workers, max_pages, include_missing_pages, links_in, language)
    counts, total = links.counts, links.summary["links"]
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    eligible = [(title, count) for title, count in ranked if count >= min_count]
    kept = eligible[: vocab_size - len(EntityVocab.SPECIAL_TOKENS)]
    vocab = EntityVocab(
        list(EntityVocab.SPECIAL_TOKENS) + [title for title, _ in kept],
        [0] * len(EntityVocab.SPECIAL_TOKENS) + [count for _, count in kept],
        language=links.dump.language or "en",
    )
    summary = {
        "dump": links.summary["dump"],
        "vocab_size": len(vocab),
        **{key: value for key, value in links.summary.items() if key != "dump"},
        "entities_below_min_count": len(ranked) - len(eligible),
        "entities_over_vocab_size": len(eligible) - len(kept),
        "links_to_kept_entities": sum(count for _, count in kept),
        "top_entities": [[title, count] for title, count in kept[:20]],
    }
    logger.info(
        "entity vocabulary: %d entities (+%d special) from %d links (of %d, links_in=%s) to %d articles (%d links to "
        "missing pages, %d through redirect loops)", len(kept), len(EntityVocab.SPECIAL_TOKENS),
        summary["links_counted"], total, links_in, len(counts), summary["links_to_missing_pages"],
        summary["links_through_redirect_loops"],
    )  # fmt: skip
    return vocab, summary
