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
from typing import Any, Dict, List, Optional, Tuple

from luke_allennlp.data.entity_vocab import EntityVocab
from luke_allennlp.wikipedia.dump import WikiDump, WikiPage
from luke_allennlp.wikipedia.markup import LINK_SCOPES, clean_wikitext
from luke_allennlp.wikipedia.parallel import ordered_map, page_batches
from luke_allennlp.wikipedia.redirects import ARTICLE, LOOP, MISSING, TitleCollector
from luke_allennlp.wikipedia.titles import Namespaces

logger = logging.getLogger(__name__)


def _count_links(item: Tuple[Namespaces, str, List[WikiPage]]) -> Tuple[Counter, Counter, Counter, int]:
    """The targets of a batch of articles' links to articles in `scope` (before redirects), the scope's other
    links by kind, the links outside the scope by place, and how many links there were."""
    namespaces, scope, pages = item
    targets: Counter = Counter()
    kinds: Counter = Counter()
    outside: Counter = Counter()
    total = 0
    for page in pages:
        clean = clean_wikitext(page.text, namespaces)
        entities, page_kinds, page_outside = clean.scoped_links(scope)
        targets.update(target for _, target in entities)
        kinds.update(page_kinds)
        outside.update(page_outside)
        total += clean.total_links
    return targets, kinds, outside, total


def build_entity_vocab(
    dump_path: "os.PathLike[str] | str",
    vocab_size: int = 500_000,
    min_count: int = 1,
    num_workers: int = 1,
    max_pages: Optional[int] = None,
    language: str = "en",
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
    language : `str`, optional (default = `"en"`)
        The language written next to each title in LUKE's JSONL.
    include_missing_pages : `bool`, optional (default = `False`)
        Also rank link targets that are not pages of the dump (after redirects). A complete dump's missing
        pages are red links, rightly left out; a sample or shortened dump lacks most linked pages.
    links_in : `str`, optional (default = `"text"`)
        Which links are counted: `"text"`, those of the running text (paragraphs, lists, headings), as LUKE's
        vocabulary (through wikipedia2vec) and the pretraining corpus, whose entities can only come from there;
        `"page"`, also those shown in infoboxes and other templates, tables, references and image captions.
        Either way the summary accounts for every link of the dump's articles.
    """
    if links_in not in LINK_SCOPES:
        raise ValueError(f"links_in must be {' or '.join(map(repr, LINK_SCOPES))}, not {links_in!r}")
    if vocab_size <= len(EntityVocab.SPECIAL_TOKENS):
        raise ValueError(
            f"vocab_size must exceed the {len(EntityVocab.SPECIAL_TOKENS)} special entities, got {vocab_size}"
        )
    dump = WikiDump(dump_path, max_pages=max_pages)
    collector = TitleCollector()

    def articles():
        for page in dump:
            collector.add(page)
            if page.is_article and page.text:
                yield page

    targets: Counter = Counter()
    kinds: Counter = Counter()
    outside: Counter = Counter()
    total = 0
    batches = ((dump.namespaces, links_in, batch) for batch in page_batches(articles()))
    for batch_targets, batch_kinds, batch_outside, batch_total in ordered_map(_count_links, batches, num_workers):
        targets.update(batch_targets)
        kinds.update(batch_kinds)
        outside.update(batch_outside)
        total += batch_total
    index = collector.index()

    counts: Counter = Counter()
    links_to = Counter()
    for target, count in targets.items():
        title, status = index.lookup(target)
        links_to[status] += count
        if status == ARTICLE or (status == MISSING and include_missing_pages):
            counts[title] += count
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    eligible = [(title, count) for title, count in ranked if count >= min_count]
    kept = eligible[: vocab_size - len(EntityVocab.SPECIAL_TOKENS)]
    vocab = EntityVocab(
        list(EntityVocab.SPECIAL_TOKENS) + [title for title, _ in kept],
        [0] * len(EntityVocab.SPECIAL_TOKENS) + [count for _, count in kept],
        language=language,
    )
    summary = {
        "dump": os.fspath(dump_path),
        "vocab_size": len(vocab),
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
        "entities_below_min_count": len(ranked) - len(eligible),
        "entities_over_vocab_size": len(eligible) - len(kept),
        "links_to_kept_entities": sum(count for _, count in kept),
        "top_entities": [[title, count] for title, count in kept[:20]],
    }
    logger.info(
        "entity vocabulary: %d entities (+%d special) from %d links (of %d, links_in=%s) to %d articles (%d links to "
        "missing pages, %d through redirect loops)", len(kept), len(EntityVocab.SPECIAL_TOKENS),
        summary["links_counted"], total, links_in, len(counts), links_to[MISSING], links_to[LOOP],
    )  # fmt: skip
    return vocab, summary
