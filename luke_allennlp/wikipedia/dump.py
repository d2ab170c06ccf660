"""
Streaming a MediaWiki XML export (`pages-articles.xml`, plain, `.bz2` or `.gz`) page by page.

The file is read with `xml.etree.ElementTree.iterparse` and every `<page>` is cleared once read, so memory
stays flat whatever the dump's size. Any export schema version works (the `{...export-0.N/}` namespace is
ignored), in any encoding its XML declaration names: expat reads UTF-8, UTF-16 (with its byte order mark) and
the one-byte encodings itself; multi-byte ones (Shift_JIS, EUC-JP, GBK, Big5, ...) are decoded by Python's codecs
first. The `<siteinfo>` gives the wiki's language (`<dbname>jawiki</dbname>`, else the file name
`jawiki-...`, else `xml:lang`), its title case rule and its localised namespace names. A dump cut mid-page (a truncated download) yields the complete pages before the cut and records the
error in `DumpStats.errors`; a file that is not a MediaWiki export at all raises `DumpError` naming the file.
"""

import bz2
import codecs
import functools
import gzip
import io
import logging
import os
import re
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from typing import IO, Dict, Iterable, Iterator, List, Optional, Union
from xml.sax.saxutils import escape, quoteattr

from luke_allennlp.resources.titles import FIRST_LETTER, Namespaces

logger = logging.getLogger(__name__)

PathLike = Union[str, "os.PathLike[str]"]
# Localised redirect magic words exist; the `<redirect>` element (exports 0.5 and later) is what is trusted,
# this is the fallback for older exports.
_REDIRECT_TEXT = re.compile(r"\s*#\s*REDIRECT\s*:?\s*\[\[([^\]|\n]+)", re.IGNORECASE)
_DECLARED_ENCODING = re.compile(rb"""\A<\?xml[^>]*?\sencoding\s*=\s*["']([A-Za-z][\w.:-]*)["']""")
_DBNAME = re.compile(r"([a-z][a-z0-9_]*?)wiki")
_FILE_NAME_DBNAME = re.compile(r"([a-z][a-z0-9_]*?)wiki-")


class DumpError(ValueError):
    """The file is not a MediaWiki XML export."""


@dataclass
class WikiPage:
    title: str  # normalised (see `normalize_title`)
    page_id: int  # MediaWiki's page id (-1 when the export has none)
    namespace: int
    text: str
    redirect: Optional[str] = None  # normalised target title of a redirect page

    @property
    def is_article(self) -> bool:
        """A main-namespace page that is not a redirect."""
        return self.namespace == 0 and self.redirect is None


@dataclass
class DumpStats:
    """What streaming the dump met: every page is counted in exactly one of the `*_pages` fields."""

    pages: int = 0  # every <page> read
    article_pages: int = 0  # namespace 0, not a redirect (may have empty text)
    redirect_pages: int = 0  # namespace 0 redirects
    non_article_pages: int = 0  # other namespaces (redirects there included)
    pages_without_title: int = 0
    pages_without_text: int = 0  # articles whose text is empty (also counted in article_pages)
    errors: List[str] = field(default_factory=list)  # a truncated or malformed dump: where it stopped

    def as_dict(self) -> dict:
        return {
            **{k: v for k, v in self.__dict__.items() if k != "errors"},
            "dump_errors": len(self.errors),
            "dump_error_messages": list(self.errors),
        }


def open_dump(path: PathLike) -> IO[bytes]:
    """Opens a dump, decompressing bzip2 or gzip by its magic bytes (not its name)."""
    path = os.fspath(path)
    with open(path, "rb") as f:
        magic = f.read(3)
    if magic == b"BZh":
        return bz2.open(path, "rb")
    if magic[:2] == b"\x1f\x8b":
        return gzip.open(path, "rb")
    return open(path, "rb")


def language_of_dbname(dbname: str) -> Optional[str]:
    """A Wikipedia's language code from its database name (`jawiki` -> `ja`, `zh_yuewiki` -> `zh-yue`)."""
    match = _DBNAME.fullmatch(dbname.strip())
    return match.group(1).replace("_", "-") if match else None


def wiki_site(language: str) -> str:
    """The database (and Wikidata site) name of a language's Wikipedia (`zh-yue` -> `zh_yuewiki`)."""
    return language.replace("-", "_") + "wiki"


@functools.lru_cache(maxsize=None)
def _expat_reads(encoding: str) -> bool:
    """Whether expat decodes `encoding` itself (it does not do multi-byte ones but UTF-8 and UTF-16)."""
    try:
        ET.fromstring(f'<?xml version="1.0" encoding="{encoding}"?><a/>'.encode("ascii"))
        return True
    except (ET.ParseError, LookupError, ValueError):
        return False


class _Utf8Transcoder(io.RawIOBase):
    """A byte stream in `encoding` read as UTF-8, its XML declaration rewritten to say so."""

    def __init__(self, stream: IO[bytes], encoding: str) -> None:
        self.stream = stream
        self.decoder = codecs.getincrementaldecoder(encoding)()
        self.pending = b""
        self.first = True
        self.done = False

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:  # type: ignore[no-untyped-def]
        while not self.pending and not self.done:
            chunk = self.stream.read(1 << 16)
            text = self.decoder.decode(chunk, final=not chunk)
            self.done = not chunk
            if self.first and text:
                text = re.sub(r"""\A(<\?xml[^>]*?\sencoding\s*=\s*["'])[^"']*""", r"\1UTF-8", text)
                self.first = False
            self.pending = text.encode("utf-8")
        size = min(len(buffer), len(self.pending))
        buffer[:size] = self.pending[:size]
        self.pending = self.pending[size:]
        return size


def _as_expat_input(stream: IO[bytes], path: str) -> IO[bytes]:
    """The stream, or a UTF-8 transcoding of it when its declared encoding is one expat cannot read."""
    head = stream.peek(256)[:256] if hasattr(stream, "peek") else b""
    match = _DECLARED_ENCODING.match(head)
    if not match or _expat_reads(match.group(1).decode("ascii")):
        return stream
    encoding = match.group(1).decode("ascii")
    try:
        codecs.lookup(encoding)
    except LookupError:
        raise DumpError(f"{path}: declares the encoding {encoding!r}, which Python does not know") from None
    logger.info("%s: decoding %s into UTF-8 for the XML parser", path, encoding)
    return io.BufferedReader(_Utf8Transcoder(stream, encoding), 1 << 16)


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _child_text(element: ET.Element, name: str) -> Optional[str]:
    for child in element:
        if _local(child.tag) == name:
            return child.text or ""
    return None


class WikiDump:
    """
    The pages of a dump, streamed: `for page in WikiDump(path): ...`. Each iteration reads the file again.

    # Parameters

    path : `PathLike`
        The dump (`.xml`, `.xml.bz2` or `.xml.gz`).
    max_pages : `Optional[int]`, optional (default = `None`)
        Stop after this many pages (of any namespace).
    language : `Optional[str]`, optional (default = `None`)
        The wiki's language code, overriding what the dump says (`language`).
    """

    def __init__(self, path: PathLike, max_pages: Optional[int] = None, language: Optional[str] = None) -> None:
        self.path = os.fspath(path)
        self.max_pages = max_pages
        self.language_override = language
        self.dbname: Optional[str] = None  # siteinfo's, once read
        self.xml_lang: Optional[str] = None  # the root element's xml:lang
        match = _FILE_NAME_DBNAME.match(os.path.basename(self.path))
        self.file_name_language = match.group(1).replace("_", "-") if match else None
        self.namespaces = Namespaces(language=self.language or "")
        self.stats = DumpStats()
        if not os.path.isfile(self.path):
            raise FileNotFoundError(f"{self.path}: no such dump file")

    @property
    def language(self) -> Optional[str]:
        """The wiki's language: as overridden, else from siteinfo's `<dbname>` (known once reading began), the file
        name (`jawiki-20240101-pages-articles.xml.bz2`) or the root's `xml:lang`; None if nothing says."""
        dbname_language = language_of_dbname(self.dbname) if self.dbname else None
        return self.language_override or dbname_language or self.file_name_language or self.xml_lang

    def __iter__(self) -> Iterator[WikiPage]:
        self.stats = DumpStats()
        with open_dump(self.path) as stream:
            yield from self._pages(_as_expat_input(stream, self.path))

    def _pages(self, stream: IO[bytes]) -> Iterator[WikiPage]:
        stats = self.stats
        root: Optional[ET.Element] = None
        events = ET.iterparse(stream, events=("start", "end"))
        started = last_log = time.time()
        try:
            for event, element in events:
                name = _local(element.tag)
                if event == "start":
                    if root is None:
                        root = element
                        if name != "mediawiki":
                            raise DumpError(
                                f"{self.path}: not a MediaWiki XML export (root element <{name}>, not <mediawiki>)"
                            )
                        self.xml_lang = element.get("{http://www.w3.org/XML/1998/namespace}lang") or None
                        self.namespaces.set_language(self.language or "")
                    continue
                if name == "namespace" and element.get("key") is not None:
                    self.namespaces.add(element.text or "", int(element.get("key")))
                elif name == "dbname" and root is not None and element.text:
                    self.dbname = element.text.strip()
                    self.namespaces.set_language(self.language or "")
                elif name == "case" and element.text:
                    self.namespaces.case = element.text.strip()
                elif name == "page":
                    page = self._page(element)
                    root.clear()  # drop the page (and anything before it) from the tree
                    if page is not None:
                        yield page
                    if self.max_pages is not None and stats.pages >= self.max_pages:
                        return
                    if stats.pages % 1000 == 0 and time.time() - last_log > 60:
                        last_log = time.time()
                        logger.info(
                            "%s: %d pages read (%.0f pages/s)",
                            self.path,
                            stats.pages,
                            stats.pages / (last_log - started),
                        )
        except (ET.ParseError, EOFError, OSError, UnicodeDecodeError) as error:
            if root is None:
                raise DumpError(f"{self.path}: not a MediaWiki XML export ({type(error).__name__}: {error})") from None
            message = (
                f"{self.path}: dump ends early or is malformed after {stats.pages} pages "
                f"({type(error).__name__}: {error})"
            )
            logger.warning("%s; the pages read so far are kept", message)
            stats.errors.append(message)
            return
        if root is None:
            raise DumpError(f"{self.path}: empty file, not a MediaWiki XML export")

    def _page(self, element: ET.Element) -> Optional[WikiPage]:
        stats = self.stats
        stats.pages += 1
        normalize = self.namespaces.normalize
        title = normalize(_child_text(element, "title") or "")
        if not title:
            stats.pages_without_title += 1
            return None
        page_id = _child_text(element, "id")
        namespace = _child_text(element, "ns")
        text, redirect = "", None
        for child in element:
            child_name = _local(child.tag)
            if child_name == "redirect":
                redirect = normalize(child.get("title") or "")
            elif child_name == "revision":  # full-history dumps: the last revision wins
                text = _child_text(child, "text") or ""
        if not redirect:
            match = _REDIRECT_TEXT.match(text)
            if match:
                redirect = normalize(match.group(1))
        # (a `<redirect/>` without any target stays a redirect, to "": links through it resolve to nothing)
        page = WikiPage(
            title=title,
            page_id=int(page_id) if page_id and page_id.strip().isdigit() else -1,
            namespace=int(namespace)
            if namespace and namespace.strip().lstrip("-").isdigit()
            else self.namespaces.namespace_of(title),
            text=text,
            redirect=redirect,
        )
        if page.namespace != 0:
            stats.non_article_pages += 1
        elif redirect is not None:
            stats.redirect_pages += 1
        else:
            stats.article_pages += 1
            if not text.strip():
                stats.pages_without_text += 1
        return page


def write_dump(
    path: PathLike,
    pages: Iterable[WikiPage],
    namespaces: Optional[Dict[int, str]] = None,
    dbname: Optional[str] = None,
    lang: str = "en",
    case: str = FIRST_LETTER,
    encoding: str = "utf-8",
) -> None:
    """
    Writes pages as a MediaWiki XML export (schema 0.10), bzip2- or gzip-compressed when `path` ends with `.bz2`
    or `.gz`: small dumps of one's own pages, for tests and demos. `namespaces` adds or renames namespaces
    (`{14: "Kategorie"}`); `dbname` (`"dewiki"`), `lang` (`xml:lang`) and `case` go to the siteinfo; an
    `encoding` other than UTF-8 is declared (`<?xml ... encoding="ISO-8859-1"?>`), characters it lacks written
    as character references.
    """
    path = os.fspath(path)
    names = {
        -2: "Media",
        -1: "Special",
        0: "",
        1: "Talk",
        4: "Wikipedia",
        6: "File",
        10: "Template",
        14: "Category",
        **(namespaces or {}),
    }
    lines = [
        f'<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/" version="0.10" xml:lang={quoteattr(lang)}>',
        "  <siteinfo>",
        "    <sitename>Wikipedia</sitename>",
    ]
    if dbname is not None:
        lines.append(f"    <dbname>{escape(dbname)}</dbname>")
    lines += [f"    <case>{escape(case)}</case>", "    <namespaces>"]
    lines += [
        f'      <namespace key="{key}" case="{escape(case)}">{escape(name)}</namespace>' for key, name in names.items()
    ]
    lines += ["    </namespaces>", "  </siteinfo>"]
    for page in pages:
        lines += [
            "  <page>",
            f"    <title>{escape(page.title)}</title>",
            f"    <ns>{page.namespace}</ns>",
            f"    <id>{page.page_id}</id>",
        ]
        if page.redirect is not None:
            lines.append(f"    <redirect title={quoteattr(page.redirect)} />")
        lines += [
            "    <revision>",
            f'      <text xml:space="preserve">{escape(page.text)}</text>',
            "    </revision>",
            "  </page>",
        ]
    lines.append("</mediawiki>")
    if codecs.lookup(encoding).name != "utf-8":
        lines.insert(0, f'<?xml version="1.0" encoding="{encoding}"?>')
    data = ("\n".join(lines) + "\n").encode(encoding, errors="xmlcharrefreplace")
    opener = bz2.open if path.endswith(".bz2") else gzip.open if path.endswith(".gz") else open
    with opener(path, "wb") as f:
        f.write(data)
