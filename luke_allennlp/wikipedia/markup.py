"""
Wiki markup -> plain text, with the internal links kept as entity annotations.

`clean_wikitext(text)` returns the text a reader sees on the rendered page (without the infobox, tables,
references and images) as one paragraph per line, and each `[[link]]` to a main-namespace page as a
character span of that text with its target title. It is written for corpus building, not for rendering:
templates are dropped rather than expanded, as LUKE's corpus (through wikipedia2vec) did.

What happens to each construct:

- `[[T]]`, `[[T|anchor]]`, `[[T#section|anchor]]`, `[[:T]]`: the anchor (or `T` as written) is kept and
  annotated with `normalize_title(T)`; a link trail joins the anchor (`[[bus]]es` -> "buses"); the pipe trick
  `[[T (x)|]]` shows "T".
- `[[File:...]]`, `[[Image:...]]`, `[[Category:...]]`, interlanguage links `[[fr:...]]`: dropped entirely.
  Links to other namespaces and sister projects (`[[Help:X|help]]`, `[[wikt:word]]`, `[[:Category:X]]`)
  keep their text but are no entity.
- `{{templates}}` (nested), `{| tables |}`, `<ref>...</ref>` and `<ref/>`, `<!-- comments -->`, `<math>`,
  `<gallery>` and other non-prose elements: dropped with their content. Other HTML tags: the tag is dropped,
  its text kept. `<nowiki>` text is kept literally.
- `'''bold'''`/`''italic''` quotes, heading markers (`== H ==` -> "H", or the whole heading with
  `headings=False`), list bullets (`*#:;`), `----`, magic words (`__TOC__`): dropped.
- `[http://x label]` -> "label"; `[http://x]` -> nothing.
- HTML entities (`&nbsp;`, `&amp;`) are decoded; whitespace is collapsed to single spaces and blank lines
  removed, so each line is one paragraph.
"""
import bisect
import html
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import List, Optional, Tuple
from urllib.parse import unquote

from luke_allennlp.wikipedia.titles import (
    CATEGORY_NAMESPACE,
    FILE_NAMESPACE,
    Namespaces,
    is_language_prefix,
    normalize_title,
)

_DEFAULT_NAMESPACES = Namespaces()


@dataclass(frozen=True)
class WikiLink:
    """`text[start:end]` is the anchor; `target` is the linked title, normalised, before redirects."""

    start: int
    end: int
    target: str


@dataclass
class CleanText:
    text: str  # one paragraph per line
    links: List[WikiLink]
    # How many links of each kind were met: "entity" (in `links`), "file", "category", "interlanguage",
    # "other_namespace", "interwiki", "section", "invalid", "empty_anchor".
    link_counts: Counter = field(default_factory=Counter)
    dropped_headings: int = 0  # with `headings=False`

    def paragraphs(self) -> List[Tuple[int, int]]:
        """The `(start, end)` character span of each line."""
        spans, start = [], 0
        for line in self.text.split("\n"):
            if line:
                spans.append((start, start + len(line)))
            start += len(line) + 1
        return spans


# --- markup removed before links are read (no offsets to keep yet) ---------------------------------------------

_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.S)
_NOWIKI = re.compile(r"<nowiki\s*>(.*?)</nowiki\s*>|<nowiki\s*/>", re.S | re.I)
_NOWIKI_ESCAPES = {c: f"&#{ord(c)};" for c in "[]{}|'<>=*#:;_&"}
# Elements whose content is not running text (or not shown on the page): dropped whole.
_DROPPED = (
    "ref|references|math|chem|ce|score|timeline|gallery|imagemap|syntaxhighlight|source|pre|graph|mapframe|"
    "maplink|templatedata|templatestyles|inputbox|categorytree|hiero|includeonly|table"
)
_DROPPED_ELEMENT = re.compile(rf"<({_DROPPED})(?:\s[^<>]*)?(?<!/)>.*?</\1\s*>", re.S | re.I)
_SELF_CLOSING = re.compile(rf"<(?:{_DROPPED})(?:\s[^<>]*)?/>", re.I)
_BREAK_TAG = re.compile(r"<br\s*/?\s*>|</?br\s*/?>", re.I)
_BLOCK_TAG = re.compile(r"</?(?:p|div|li|ul|ol|dl|dt|dd|blockquote|center|h[1-6]|tr|td|th|caption)(?:\s[^<>]*)?/?>", re.I)
_HTML_TAG = re.compile(
    r"</?(?:[a-z][a-z0-9]*)(?:\s[^<>]*)?/?>", re.I
)  # any other tag: formatting (b, i, span, sup, small, ...) keeps its text
_TEMPLATE_BRACES = re.compile(r"\{\{|\}\}")
_TABLE_EDGES = re.compile(r"^[ \t:]*\{\||^[ \t]*\|\}", re.M)
_HEADING = re.compile(r"^(={1,6})[ \t]*(.*?)[ \t]*\1[ \t]*$", re.M)
_LINE_MARKUP = re.compile(r"^(?:[*#:;]+[ \t]*|-{4,})", re.M)
_MAGIC_WORD = re.compile(r"__[A-Z]+__")
_QUOTES = re.compile(r"'{2,}")

# --- links -------------------------------------------------------------------------------------------------------

_LINK_BRACKETS = re.compile(r"\[\[|\]\]")
_URL_SCHEMES = (
    r"(?:https?|ftps?|mailto|news|irc|ircs|gopher|telnet|nntp|svn|git|sftp|ssh|urn|xmpp|sips?|tel|geo|magnet):|//"
)
_EXTERNAL_LINK = re.compile(rf"\[(?:{_URL_SCHEMES})[^\s\[\]<>\"]*(?:[ \t]+([^\]\n]*))?\]", re.I)
_LINK_TRAIL = re.compile(r"[a-z]+")
_INVALID_TITLE_CHARS = re.compile(r"[\[\]{}<>|\n]")
_PIPE_TRICK = re.compile(r"\s*(?:\([^()]*\)|,.*)$")
# Whitespace that normalisation changes (a lone " " between words stays): at the ends, around newlines, runs,
# and other space characters (tab, no-break space).
_SPACE_RUNS = re.compile(r"\A\s+|\s+\Z|[^\S\n]*\n\s*|[^\S\n]{2,}|[^\S \n]")


def _remove_nested(text: str, spans: List[Tuple[int, int]]) -> str:
    """`text` without the given spans (outermost ones first; spans inside another are ignored)."""
    if not spans:
        return text
    spans.sort()
    pieces, position = [], 0
    for start, end in spans:
        if start >= position:
            pieces.append(text[position:start])
            position = end
        elif end > position:  # overlapping, not nested: extend the cut
            position = end
    pieces.append(text[position:])
    return "".join(pieces)


def _strip_templates(text: str) -> str:
    """Drops `{{...}}` with any nesting; an unclosed `{{` is left as text (as MediaWiki shows it)."""
    stack, spans = [], []
    for match in _TEMPLATE_BRACES.finditer(text):
        if match.group() == "{{":
            stack.append(match.start())
        elif stack:
            spans.append((stack.pop(), match.end()))
    return _remove_nested(text, spans)


def _strip_tables(text: str) -> str:
    """Drops `{| ... |}` tables (nested too); an unclosed table runs to the end, as MediaWiki closes it there."""
    stack, spans = [], []
    for match in _TABLE_EDGES.finditer(text):
        if match.group().rstrip().endswith("{|"):
            stack.append(match.start())
        elif stack:
            spans.append((stack.pop(), match.end()))
    if stack:
        spans.append((stack[0], len(text)))
    return _remove_nested(text, spans)


def _remove_markup(text: str, headings: bool) -> Tuple[str, int]:
    text = _COMMENT.sub("", text)
    text = _NOWIKI.sub(lambda m: "".join(_NOWIKI_ESCAPES.get(c, c) for c in (m.group(1) or "")), text)
    text = _DROPPED_ELEMENT.sub("", text)
    text = _SELF_CLOSING.sub("", text)
    text = _strip_templates(text)
    text = _strip_tables(text)
    text = _BREAK_TAG.sub(" ", text)
    text = _BLOCK_TAG.sub("\n", text)
    text = _HTML_TAG.sub("", text)
    text, heading_count = _HEADING.subn((lambda m: m.group(2)) if headings else "", text)
    text = _LINE_MARKUP.sub("", text)
    text = _MAGIC_WORD.sub("", text)
    return _QUOTES.sub("", text), 0 if headings else heading_count


class _Builder:
    """Accumulates output text and entity links, with offsets in the output."""

    def __init__(self) -> None:
        self.pieces: List[str] = []
        self.length = 0
        self.links: List[WikiLink] = []

    def add(self, text: str) -> None:
        """Appends plain text, replacing external links by their labels and decoding HTML entities."""
        if "[" in text:
            text = _EXTERNAL_LINK.sub(lambda m: m.group(1) or "", text)
            text = _LINK_BRACKETS.sub("", text)  # a stray "[[" or "]]" left by malformed markup
        if "&" in text:
            text = html.unescape(text)
        self.pieces.append(text)
        self.length += len(text)

    def text(self) -> str:
        return "".join(self.pieces)


def _link_spans(text: str) -> List[Tuple[int, int]]:
    """The outermost `[[...]]` spans (a file caption may hold links); unbalanced brackets are left as text."""
    stack, spans = [], []
    for match in _LINK_BRACKETS.finditer(text):
        if match.group() == "[[":
            stack.append(match.start())
        elif stack:
            start = stack.pop()
            if not stack:
                spans.append((start, match.end()))
    return spans


def _add_link(out: _Builder, content: str, trail: str, namespaces: Namespaces, counts: Counter) -> bool:
    """
    Appends what `[[content]]trail` shows, recording an entity link for a main-namespace target. Returns
    whether the link was shown (a link that is not shown leaves its trail as plain text).
    """
    raw_target, pipe, anchor = content.partition("|")
    target = html.unescape(raw_target).strip()
    if "%" in target:
        target = unquote(target)
    colon = target.startswith(":")
    target = target[1:].strip() if colon else target
    if not target or _INVALID_TITLE_CHARS.search(target):
        counts["invalid"] += 1
        out.add(anchor if pipe else content)
        return False
    shown = anchor.replace("\n", " ") if pipe else target.replace("_", " ")  # MediaWiki shows "_" as " "
    if target.startswith("#"):  # a section of this page
        counts["section"] += 1
        out.add(shown + trail)
        return True
    namespace, interwiki, rest = namespaces.split(target)
    if interwiki is not None:
        if not colon and is_language_prefix(interwiki):
            counts["interlanguage"] += 1  # [[fr:Paris]] goes to the sidebar, not the text
            return False
        counts["interwiki"] += 1  # [[wikt:word]] is shown, but is no entity of this wiki
        out.add(shown + trail)
        return True
    if not colon and namespace == FILE_NAMESPACE:
        counts["file"] += 1
        return False
    if not colon and namespace == CATEGORY_NAMESPACE:
        counts["category"] += 1
        return False
    if namespace != 0:
        counts["other_namespace"] += 1
        out.add((shown if not pipe or anchor.strip() else rest) + trail)
        return True
    title = normalize_title(target)
    if pipe and not anchor.strip():  # pipe trick: [[Paris (band)|]] shows "Paris"
        shown = _PIPE_TRICK.sub("", target.split("#", 1)[0])
    start = out.length
    out.add(shown + trail)
    if not title:
        counts["section"] += 1
    elif out.length > start:
        counts["entity"] += 1
        out.links.append(WikiLink(start, out.length, title))
    else:
        counts["empty_anchor"] += 1
    return True


def _normalize_space(text: str, links: List[WikiLink]) -> Tuple[str, List[WikiLink]]:
    """Collapses whitespace (one space; one newline between paragraphs) and moves the link offsets with it."""
    pieces, removed_before, match_starts, position, removed = [], [], [], 0, 0
    for match in _SPACE_RUNS.finditer(text):
        start, end = match.span()
        if start == 0 or end == len(text):
            replacement = ""
        else:
            replacement = "\n" if "\n" in match.group() else " "
        pieces.append(text[position:start])
        pieces.append(replacement)
        position = end
        removed += (end - start) - len(replacement)
        match_starts.append(start)
        removed_before.append(removed)  # removed by this run and the ones before it
    pieces.append(text[position:])

    def shift(offset: int) -> int:  # offset: a non-space character's position in the old text
        i = bisect.bisect_right(match_starts, offset) - 1
        return offset - (removed_before[i] if i >= 0 else 0)

    moved = []
    for link in links:
        anchor = text[link.start : link.end]
        start = link.start + (len(anchor) - len(anchor.lstrip()))
        end = link.end - (len(anchor) - len(anchor.rstrip()))
        if end > start:
            moved.append(WikiLink(shift(start), shift(end - 1) + 1, link.target))
    return "".join(pieces), moved


def clean_wikitext(text: str, namespaces: Optional[Namespaces] = None, headings: bool = True) -> CleanText:
    """
    The plain text of a page's wiki markup (one paragraph per line) and its entity links.

    # Parameters

    text : `str`
        The page's wiki markup.
    namespaces : `Optional[Namespaces]`, optional (default = `None`)
        The dump's namespaces (`WikiDump.namespaces`); English Wikipedia's by default.
    headings : `bool`, optional (default = `True`)
        Keep section headings as lines of their own (their markers removed); `False` drops them, as LUKE's
        corpus does (they are not sentences).
    """
    namespaces = namespaces or _DEFAULT_NAMESPACES
    text, dropped_headings = _remove_markup(text, headings)
    out = _Builder()
    counts: Counter = Counter()
    position = 0
    for start, end in _link_spans(text):
        out.add(text[position:start])
        trail = _LINK_TRAIL.match(text, end)
        trail_text = trail.group() if trail else ""
        shown = _add_link(out, text[start + 2 : end - 2], trail_text, namespaces, counts)
        position = end + len(trail_text) if shown else end
    out.add(text[position:])
    clean, links = _normalize_space(out.text(), out.links)
    lost = counts["entity"] - len(links)
    if lost:  # anchors that were only whitespace
        counts["entity"] -= lost
        counts["empty_anchor"] += lost
    return CleanText(clean, links, counts, dropped_headings)
