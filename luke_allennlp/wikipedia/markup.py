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
- `[[File:...]]`, `[[Image:...]]`, `[[Category:...]]`, interlanguage links `[[fr:...]]`: dropped entirely
  (the interlanguage links of the running text are kept aside, `interlanguage_links`, for merging the entity
  vocabularies of several languages). Namespace names are the dump's (`[[Kategorie:...]]`, `[[ファイル:...]]`)
  and titles follow its case rule (`Namespaces`).
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

Every `[[...]]` of the page is accounted for, whatever the cleaning drops: a link of the running text is counted
by kind in `link_counts` (and is an entity link of `links` if it names an article); a link inside something
dropped is counted by place and kind in `outside_counts`, and if it names an article it is in `outside_links`
with its anchor (links in infoboxes, tables and image captions are real links, their anchors real mentions).
The places (`PLACES`): "template", "table", "reference", "media" (captions of `[[File:...]]` images,
`<gallery>`, `<imagemap>`), "heading" (with `headings=False`), and, not shown as links on the page, "comment",
"nowiki" and "other_element" (`<math>`, `<pre>`, `<syntaxhighlight>`, `<timeline>`, `<includeonly>`, ...).
A link inside another is counted on its own ("media" inside an image's caption; "invalid" inside a link that
is not an image, as such nesting is malformed).
"""

import bisect
import html
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import List, Optional, Tuple
from urllib.parse import unquote

from luke_allennlp.resources.titles import (
    CATEGORY_NAMESPACE,
    FILE_NAMESPACE,
    Namespaces,
    is_language_prefix,
)

_DEFAULT_NAMESPACES = Namespaces()


@dataclass(frozen=True)
class WikiLink:
    """`text[start:end]` is the anchor; `target` is the linked title, normalised, before redirects."""

    start: int
    end: int
    target: str


@dataclass(frozen=True)
class PageLink:
    """A link to an article outside the running text: where it was, its target (normalised, before redirects)
    and its anchor as plain text."""

    place: str
    target: str
    anchor: str


# Where a link outside the running text was (see the module's docstring); the first ones are shown on the page.
RENDERED_PLACES = ("heading", "template", "table", "reference", "media")
PLACES = RENDERED_PLACES + ("comment", "nowiki", "other_element")
LINK_SCOPES = ("text", "page")  # which links the entity vocabulary and mention dictionary count (`scoped_links`)


@dataclass
class CleanText:
    text: str  # one paragraph per line
    links: List[WikiLink]
    # How many links of the running text of each kind were met: "entity" (in `links`), "file", "category",
    # "interlanguage", "other_namespace", "interwiki", "section", "invalid", "empty_anchor".
    link_counts: Counter = field(default_factory=Counter)
    dropped_headings: int = 0  # with `headings=False`
    # Links inside what was dropped: (place, kind) -> count, and those to articles (kind "entity").
    outside_counts: Counter = field(default_factory=Counter)
    outside_links: List[PageLink] = field(default_factory=list)
    # The page's `[[de:Tokio]]` inter-language links: (language prefix, title as written).
    interlanguage_links: List[Tuple[str, str]] = field(default_factory=list)

    @property
    def total_links(self) -> int:
        """Every `[[...]]` of the page."""
        return sum(self.link_counts.values()) + sum(self.outside_counts.values())

    def scoped_links(self, scope: str) -> Tuple[List[Tuple[str, str]], Counter, Counter]:
        """
        The page's links for a builder counting those of `scope` (`LINK_SCOPES`): "text", the running text;
        "page", also the links shown in templates (infoboxes), tables, references and image captions. Returns
        the `(anchor, target)` of each link to an article in the scope, the other links of the scope by kind,
        and the links outside the scope by place: together, every link of the page.
        """
        if scope not in LINK_SCOPES:
            raise ValueError(f"the links counted must be in {' or '.join(map(repr, LINK_SCOPES))}, not {scope!r}")
        entities = [(self.text[link.start : link.end], link.target) for link in self.links]
        kinds = Counter({kind: n for kind, n in self.link_counts.items() if kind != "entity"})
        outside: Counter = Counter()
        if scope == "page":
            entities += [(link.anchor, link.target) for link in self.outside_links]
        for (place, kind), count in self.outside_counts.items():
            if scope == "page" and place in RENDERED_PLACES:
                if kind != "entity":
                    kinds[kind] += count
            else:
                outside[place] += count
        return entities, kinds, outside

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
_ELEMENT_PLACES = {
    "ref": "reference",
    "references": "reference",
    "gallery": "media",
    "imagemap": "media",
    "table": "table",
}
_SELF_CLOSING = re.compile(rf"<(?:{_DROPPED})(?:\s[^<>]*)?/>", re.I)
_BREAK_TAG = re.compile(r"<br\s*/?\s*>|</?br\s*/?>", re.I)
_BLOCK_TAG = re.compile(
    r"</?(?:p|div|li|ul|ol|dl|dt|dd|blockquote|center|h[1-6]|tr|td|th|caption)(?:\s[^<>]*)?/?>", re.I
)
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


Removed = List[Tuple[str, str]]  # (place, text) of what the cleaning dropped, in order


def _remove_nested(text: str, spans: List[Tuple[int, int]], place: str, removed: Removed) -> str:
    """`text` without the given spans (outermost ones first; spans inside another are ignored), each cut
    recorded in `removed`."""
    if not spans:
        return text
    spans.sort()
    cuts: List[List[int]] = []
    for start, end in spans:
        if cuts and start < cuts[-1][1]:
            cuts[-1][1] = max(cuts[-1][1], end)  # nested, or overlapping: extend the cut
        else:
            cuts.append([start, end])
    pieces, position = [], 0
    for start, end in cuts:
        pieces.append(text[position:start])
        removed.append((place, text[start:end]))
        position = end
    pieces.append(text[position:])
    return "".join(pieces)


def _strip_templates(text: str, removed: Removed) -> str:
    """Drops `{{...}}` with any nesting; an unclosed `{{` is left as text (as MediaWiki shows it)."""
    stack, spans = [], []
    for match in _TEMPLATE_BRACES.finditer(text):
        if match.group() == "{{":
            stack.append(match.start())
        elif stack:
            spans.append((stack.pop(), match.end()))
    return _remove_nested(text, spans, "template", removed)


def _strip_tables(text: str, removed: Removed) -> str:
    """Drops `{| ... |}` tables (nested too); an unclosed table runs to the end, as MediaWiki closes it there."""
    stack, spans = [], []
    for match in _TABLE_EDGES.finditer(text):
        if match.group().rstrip().endswith("{|"):
            stack.append(match.start())
        elif stack:
            spans.append((stack.pop(), match.end()))
    if stack:
        spans.append((stack[0], len(text)))
    return _remove_nested(text, spans, "table", removed)


def _dropped(place: str, replacement: str, removed: Removed):
    """A `re.sub` replacement that records the match under `place`."""

    def replace(match: "re.Match[str]") -> str:
        removed.append((place, match.group()))
        return replacement

    return replace


def _remove_markup(text: str, headings: bool, removed: Removed) -> Tuple[str, int]:
    text = _COMMENT.sub(_dropped("comment", "", removed), text)

    def nowiki(match: "re.Match[str]") -> str:
        removed.append(("nowiki", match.group(1) or ""))  # shown, but as literal text
        return "".join(_NOWIKI_ESCAPES.get(c, c) for c in (match.group(1) or ""))

    text = _NOWIKI.sub(nowiki, text)

    def element(match: "re.Match[str]") -> str:
        removed.append((_ELEMENT_PLACES.get(match.group(1).lower(), "other_element"), match.group()))
        return ""

    text = _DROPPED_ELEMENT.sub(element, text)
    text = _SELF_CLOSING.sub("", text)
    text = _strip_templates(text, removed)
    text = _strip_tables(text, removed)
    text = _BREAK_TAG.sub(" ", text)
    text = _BLOCK_TAG.sub("\n", text)
    text = _HTML_TAG.sub("", text)
    if headings:
        text = _HEADING.sub(lambda m: m.group(2), text)
        heading_count = 0
    else:
        text, heading_count = _HEADING.subn(_dropped("heading", "", removed), text)
    text = _LINE_MARKUP.sub("", text)
    text = _MAGIC_WORD.sub("", text)
    return _QUOTES.sub("", text), heading_count


class _Builder:
    """Accumulates output text and entity links, with offsets in the output."""

    def __init__(self) -> None:
        self.pieces: List[str] = []
        self.length = 0
        self.links: List[WikiLink] = []
        self.interlanguage: List[Tuple[str, str]] = []

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


def _link_spans(text: str) -> List[Tuple[int, int, List[Tuple[int, int]]]]:
    """The outermost `[[...]]` spans, each with the spans inside it (a file caption may hold links); unbalanced
    brackets are left as text (and do not hide the links after them)."""
    stack: List[int] = []
    pairs: List[Tuple[int, int]] = []
    for match in _LINK_BRACKETS.finditer(text):
        if match.group() == "[[":
            stack.append(match.start())
        elif stack:
            pairs.append((stack.pop(), match.end()))
    spans: List[Tuple[int, int, List[Tuple[int, int]]]] = []
    for start, end in sorted(pairs):  # properly nested: a pair starting inside the last outer one is inside it
        if spans and start < spans[-1][1]:
            spans[-1][2].append((start, end))
        else:
            spans.append((start, end, []))
    return spans


def _add_link(out: _Builder, content: str, trail: str, namespaces: Namespaces) -> Tuple[bool, str]:
    """
    Appends what `[[content]]trail` shows, recording an entity link for a main-namespace target. Returns
    whether the link was shown (a link that is not shown leaves its trail as plain text), and its kind (see
    `CleanText.link_counts`).
    """
    raw_target, pipe, anchor = content.partition("|")
    target = html.unescape(raw_target).strip()
    if "%" in target:
        target = unquote(target)
    colon = target.startswith(":")
    target = target[1:].strip() if colon else target
    if not target or _INVALID_TITLE_CHARS.search(target):
        out.add(anchor if pipe else content)
        return False, "invalid"
    shown = anchor.replace("\n", " ") if pipe else target.replace("_", " ")  # MediaWiki shows "_" as " "
    if target.startswith("#"):  # a section of this page
        out.add(shown + trail)
        return True, "section"
    namespace, interwiki, rest = namespaces.split(target)
    if interwiki is not None:
        if not colon and is_language_prefix(interwiki):
            out.interlanguage.append((interwiki, rest.strip()))
            return False, "interlanguage"  # [[fr:Paris]] goes to the sidebar, not the text
        out.add(shown + trail)  # [[wikt:word]] is shown, but is no entity of this wiki
        return True, "interwiki"
    if not colon and namespace == FILE_NAMESPACE:
        return False, "file"
    if not colon and namespace == CATEGORY_NAMESPACE:
        return False, "category"
    if namespace != 0:
        out.add((shown if not pipe or anchor.strip() else rest) + trail)
        return True, "other_namespace"
    title = namespaces.normalize(target)
    if pipe and not anchor.strip():  # pipe trick: [[Paris (band)|]] shows "Paris"
        shown = _PIPE_TRICK.sub("", target.split("#", 1)[0])
    start = out.length
    out.add(shown + trail)
    kind = "section" if not title else "entity" if out.length > start else "empty_anchor"
    if kind == "entity":
        out.links.append(WikiLink(start, out.length, title))
    return True, kind


def _plain_anchor(text: str) -> str:
    """An anchor as plain text: templates, tags and quotes dropped, whitespace collapsed."""
    if "{{" in text:  # (what a template in an anchor shows cannot be known without expanding it)
        text = _strip_templates(text, [])
    if "<" in text:
        text = _HTML_TAG.sub("", text)
    if "''" in text:
        text = _QUOTES.sub("", text)
    return " ".join(text.split())


def _count_outside(place: str, content: str, namespaces: Namespaces, clean: "CleanText") -> None:
    """Counts the link `[[content]]` found in `place`; keeps it in `clean.outside_links` if it names an article
    and is shown there."""
    scratch = _Builder()
    _, kind = _add_link(scratch, content, "", namespaces)
    if kind == "entity" and place in RENDERED_PLACES:
        anchor = _plain_anchor(scratch.text())
        if anchor:
            clean.outside_links.append(PageLink(place, scratch.links[0].target, anchor))
        else:
            kind = "empty_anchor"
    clean.outside_counts[(place, kind)] += 1


def _count_removed(removed: Removed, namespaces: Namespaces, clean: "CleanText") -> None:
    """Counts every link (nested ones too) of what the cleaning dropped, under its place."""
    for place, piece in removed:
        if "[[" not in piece:
            continue
        for start, end, inner in _link_spans(piece):
            for s, e in [(start, end)] + inner:
                _count_outside(place, piece[s + 2 : e - 2], namespaces, clean)


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
    removed: Removed = []
    text, dropped_headings = _remove_markup(text, headings, removed)
    result = CleanText("", [], Counter(), dropped_headings)
    _count_removed(removed, namespaces, result)
    out = _Builder()
    counts = result.link_counts
    position = 0
    for start, end, inner in _link_spans(text):
        out.add(text[position:start])
        trail = _LINK_TRAIL.match(text, end)
        trail_text = trail.group() if trail else ""
        shown, kind = _add_link(out, text[start + 2 : end - 2], trail_text, namespaces)
        counts[kind] += 1
        position = end + len(trail_text) if shown else end
        for s, e in inner:  # links inside an image's caption; inside any other link, malformed
            if kind == "file":
                _count_outside("media", text[s + 2 : e - 2], namespaces, result)
            else:
                counts["invalid"] += 1
    out.add(text[position:])
    result.text, result.links = _normalize_space(out.text(), out.links)
    result.interlanguage_links = out.interlanguage
    lost = counts["entity"] - len(result.links)
    if lost:  # anchors that were only whitespace
        counts["entity"] -= lost
        counts["empty_anchor"] += lost
    return result
