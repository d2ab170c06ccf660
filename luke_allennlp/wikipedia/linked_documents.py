"""
Wikipedia articles as entity disambiguation / linking documents: each article's clean text with its links as gold
mentions (targets through redirects), candidates from a mention dictionary. Held-out pages so give a real
evaluation set in the ED benchmarks' format (`luke_allennlp.resources.entity_disambiguation.write_benchmark`), for
disambiguation (gold mentions) and end-to-end linking (the links are the gold links). Plain Python.

The benchmark format holds words separated by single spaces: a page's text is split at white space, and a word
is also split where a link begins or ends inside it (`(Plato),` -> `( Plato ),`), so that every link is a run of
words; paragraphs are joined by a space.
"""

import re
from collections import Counter
from typing import Iterable, Iterator, List, Optional, Tuple

from luke_allennlp.resources.entity_disambiguation import EdDocument, EdMention
from luke_allennlp.resources.mentions.base import MentionDictionaryBase
from luke_allennlp.wikipedia.dump import WikiDump
from luke_allennlp.wikipedia.markup import clean_wikitext
from luke_allennlp.wikipedia.redirects import ARTICLE, MISSING, WikiIndex

_WORD = re.compile(r"\S+")


def linked_documents(
    dump_path: str,
    dictionary: MentionDictionaryBase,
    page_ids: Optional[Iterable[int]] = None,
    include_missing_pages: bool = False,
    stats: Optional[Counter] = None,
) -> Iterator[EdDocument]:
    """
    The articles of a dump (those of `page_ids` only, if given) as documents whose mentions are their links:
    gold = the target through redirects (an article of the dump, or with `include_missing_pages` a title the dump
    lacks; links into redirect loops or, without it, to missing pages are counted and left out), candidates = the
    dictionary's for the anchor. Counts go to `stats`.
    """
    stats = stats if stats is not None else Counter()
    wanted = None if page_ids is None else set(page_ids)
    index = WikiIndex.from_pages(WikiDump(dump_path))
    dump = WikiDump(dump_path)
    for page in dump:
        if not page.is_article or not page.text.strip() or (wanted is not None and page.page_id not in wanted):
            continue
        clean = clean_wikitext(page.text, dump.namespaces, headings=False)
        links = []
        for link in clean.links:
            title, status = index.lookup(link.target)
            if status == ARTICLE or (status == MISSING and include_missing_pages):
                links.append((link.start, link.end, title))
            else:
                stats["links_through_redirect_loops" if title is None else "links_to_missing_pages"] += 1
        text, spans = _words_with_links(clean.text, [(s, e) for s, e, _ in links])
        mentions = [
            EdMention(s, e, title, dictionary.candidates(anchor))
            for (s, e), (_, _, title), anchor in zip(spans, links, (clean.text[a:b] for a, b, _ in links))
        ]
        stats["documents"] += 1
        stats["mentions"] += len(mentions)
        stats["mentions_without_candidates"] += sum(1 for m in mentions if not m.candidates)
        yield EdDocument(f"{page.page_id} {page.title}", text, mentions)


def _words_with_links(text: str, links: List[Tuple[int, int]]) -> Tuple[str, List[Tuple[int, int]]]:
    """`text` as words separated by single spaces, cut at link edges, and each link's span in the new text."""
    cuts = sorted({p for span in links for p in span})
    pieces: List[Tuple[int, int]] = []  # (start, end) in `text` of each word
    for word in _WORD.finditer(text):
        start = word.start()
        for cut in cuts:
            if word.start() < cut < word.end() and cut > start:
                pieces.append((start, cut))
                start = cut
        pieces.append((start, word.end()))
    new_start, new_end, position = {}, {}, 0
    for start, end in pieces:
        new_start[start] = position
        new_end[end] = position + end - start
        position += end - start + 1
    spans = []
    for start, end in links:
        # an anchor's edges are word edges now, except white space the anchor itself begins or ends with
        inner_start = start + len(text[start:end]) - len(text[start:end].lstrip())
        inner_end = end - (len(text[start:end]) - len(text[start:end].rstrip()))
        spans.append((new_start[inner_start], new_end[inner_end]))
    return " ".join(text[s:e] for s, e in pieces), spans
