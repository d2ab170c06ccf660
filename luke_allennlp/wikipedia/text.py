"""
The running text of a dump's articles as the pretraining corpus reads it (`clean_wikitext` with the dump's namespaces,
headings dropped, one paragraph a line), and of plain text files: what `allennlp build-tokenizer` trains on.
"""

import codecs
import itertools
import os
from typing import Iterator, List, Optional

from luke_allennlp.resources.titles import Namespaces
from luke_allennlp.wikipedia.dump import WikiDump, WikiPage, open_dump
from luke_allennlp.wikipedia.markup import clean_wikitext
from luke_allennlp.wikipedia.parallel import ordered_map, page_batches

_namespaces: Optional[Namespaces] = None


def is_dump(path: "os.PathLike[str] | str") -> bool:
    """Whether a file (plain, `.bz2` or `.gz`, by its bytes) is a MediaWiki XML export: its root is `<mediawiki`."""
    with open_dump(path) as f:
        head = f.read(4096)
    for bom, encoding in ((codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be")):
        if head.startswith(bom):
            head = head[len(bom) :].decode(encoding, errors="ignore").encode("utf-8")
    return b"<mediawiki" in head


def article_texts(
    dump_path: "os.PathLike[str] | str", num_workers: int = 1, max_pages: Optional[int] = None
) -> Iterator[str]:
    """The clean running text of each article of a dump (one paragraph a line), in dump order, cleaned in
    `num_workers` processes; the first `max_pages` articles only if given."""
    dump = WikiDump(dump_path)
    articles = (page for page in dump if page.is_article and page.text.strip())
    first = next(articles, None)
    if first is None:
        return
    # The siteinfo comes before the first page: the dump's namespaces (`[[Категория:...]]`) are known now.
    batches = page_batches(itertools.islice(itertools.chain([first], articles), max_pages))
    for texts in ordered_map(_clean_batch, batches, num_workers, _init_worker, (dump.namespaces,)):
        yield from texts


def text_file_lines(path: "os.PathLike[str] | str") -> Iterator[str]:
    """The non-blank lines of a UTF-8 text file (plain, `.bz2` or `.gz`), a byte order mark dropped; a line that is
    not UTF-8 is an error naming the file and line."""
    with open_dump(path) as f:
        for number, raw in enumerate(f, start=1):
            try:
                line = raw.decode("utf-8-sig" if number == 1 else "utf-8").strip()
            except UnicodeDecodeError as error:
                raise ValueError(f"{os.fspath(path)}, line {number}: not UTF-8 text ({error.reason})") from None
            if line:
                yield line


def _init_worker(namespaces: Namespaces) -> None:
    global _namespaces
    _namespaces = namespaces


def _clean_batch(pages: List[WikiPage]) -> List[str]:
    return [clean_wikitext(page.text, _namespaces, headings=False).text for page in pages]
