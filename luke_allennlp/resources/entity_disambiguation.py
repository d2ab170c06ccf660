"""
Entity disambiguation documents, and the file format in which the standard ED benchmarks (AIDA-CoNLL, MSNBC,
AQUAINT, ACE2004, WNED-WIKI, WNED-CWEB) circulate: the CSV files of Ganea & Hofmann's deep-ed
(`aida_train.csv`, `aida_testA.csv`, `aida_testB.csv`, `wned-*.csv`), which mulrel-nel and LUKE's entity
disambiguation example read. Plain Python.

One line per mention, fields separated by tabs:

    doc_id  doc_id  mention  left_context  right_context  CANDIDATES  cand_1  ...  cand_n  GT:  gold

- `mention` and the contexts are words separated by single spaces; the contexts are the document's words
  just before and after the mention, possibly cut at some distance from it;
- each candidate is `wikipedia_id,p(e|m),title` (the title may hold commas), or the one field `EMPTYCAND`
  stands for no candidate;
- `gold` is `position,wikipedia_id,p(e|m),title` when the gold entity is candidate `position` (1-based), or
  `-1,wikipedia_id,title` when it is none of them; a gold without a title is a NIL mention (no entity).

Titles are normalised as MediaWiki does (`_` -> space, first letter upper-cased; `&amp;` -> `&` as LUKE's
reader does), so that they meet the entity vocabulary's. Wikipedia ids are not used (the writer writes 0).
The mentions of a document are on consecutive lines in text order; its text is put back together from their
contexts (`_stitch`), so that all its mentions can be disambiguated together.
"""

import logging
import os
from collections import Counter
from dataclasses import dataclass, field
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

from luke_allennlp.resources.files import read_lines
from luke_allennlp.resources.titles import normalize_title

logger = logging.getLogger(__name__)

CANDIDATES, NO_CANDIDATES, GOLD = "CANDIDATES", "EMPTYCAND", "GT:"


@dataclass
class EdMention:
    """A mention: characters `start`..`end` (exclusive) of its document's text."""

    start: int
    end: int
    gold: Optional[str] = None  # the gold entity's title; None when unknown (raw text)
    candidates: List[Tuple[str, float]] = field(default_factory=list)  # (title, p(e|m)), most probable first


@dataclass
class EdDocument:
    id: str
    text: str
    mentions: List[EdMention]


def _title(text: str) -> str:
    return normalize_title(text.replace("&amp;", "&"))


def _parse_line(
    line: str, where: str
) -> Tuple[str, List[str], List[str], List[str], List[Tuple[str, float]], Optional[str]]:
    """(doc id, left words, mention words, right words, candidates, gold title or None for NIL) of one line."""
    fields = line.split("\t")
    if len(fields) < 9 or fields[5] != CANDIDATES or fields[-2] != GOLD:
        raise ValueError(
            f"{where}: expected 'doc<TAB>doc<TAB>mention<TAB>left context<TAB>right context<TAB>CANDIDATES<TAB>"
            f"candidates...<TAB>GT:<TAB>gold' ({len(fields)} fields, {fields[5:6]} and {fields[-2:-1]} where "
            f"CANDIDATES and GT: belong)"
        )
    doc_id, mention = fields[0], fields[2].split()
    if not doc_id or not mention:
        raise ValueError(f"{where}: empty document id or mention")
    candidates: List[Tuple[str, float]] = []
    if fields[6:-2] != [NO_CANDIDATES]:
        for text in fields[6:-2]:
            parts = text.split(",", 2)
            try:
                prior = float(parts[1])
            except (IndexError, ValueError):
                raise ValueError(f"{where}: candidate {text!r} is not 'wikipedia_id,p(e|m),title'") from None
            if len(parts) == 3 and parts[2].strip():
                candidates.append((_title(parts[2]), prior))
            else:
                raise ValueError(f"{where}: candidate {text!r} has no title")
    candidates.sort(key=lambda c: -c[1])  # (stable: ties keep the file's order)
    gold_fields = fields[-1].split(",", 2 if fields[-1].startswith("-1") else 3)
    if gold_fields[0] != "-1" and not gold_fields[0].isdigit():
        raise ValueError(f"{where}: gold {fields[-1]!r} is neither 'position,id,p,title' nor '-1,id,title'")
    gold = _title(gold_fields[-1]) if len(gold_fields) == (3 if gold_fields[0] == "-1" else 4) else ""
    return doc_id, fields[3].split(), mention, fields[4].split(), candidates, gold or None


def read_benchmark(path: "os.PathLike[str] | str", stats: Optional[Counter] = None) -> List[EdDocument]:
    """
    The documents of a benchmark file, with their mentions in text order. NIL mentions (a gold without a
    title) are not ED mentions: counted in `stats["nil_mentions"]` and left out. A malformed line raises an
    error naming the file and line.
    """
    path = os.fspath(path)
    stats = stats if stats is not None else Counter()
    lines: Dict[str, List[Tuple[List[str], List[str], List[str], List[Tuple[str, float]], Optional[str]]]] = {}
    for number, line in enumerate(read_lines(path), 1):  # (UTF-8, a BOM dropped, .gz / .bz2 decompressed)
        if not line.strip():
            continue
        doc_id, *mention = _parse_line(line, f"{path}, line {number}")
        lines.setdefault(doc_id, []).append(tuple(mention))  # type: ignore[arg-type]
    documents = []
    for doc_id, mentions in lines.items():
        words, spans, unjoined = _stitch([(left, words, right) for left, words, right, _, _ in mentions])
        stats["contexts_not_overlapping"] += unjoined
        starts = [0]
        for word in words:
            starts.append(starts[-1] + len(word) + 1)
        ed_mentions = []
        for (first, end), (_, _, _, candidates, gold) in zip(spans, mentions):
            if gold is None:
                stats["nil_mentions"] += 1
                continue
            ed_mentions.append(EdMention(starts[first], starts[end] - 1, gold, candidates))
        stats["documents"] += 1
        stats["mentions"] += len(ed_mentions)
        documents.append(EdDocument(doc_id, " ".join(words), ed_mentions))
    if stats["contexts_not_overlapping"]:
        logger.info(
            "%s: %d mentions whose left context does not overlap the text before it (the document's text may "
            "lack what lies between)",
            path,
            stats["contexts_not_overlapping"],
        )
    return documents


def _stitch(pieces: Sequence[Tuple[List[str], List[str], List[str]]]) -> Tuple[List[str], List[Tuple[int, int]], int]:
    """
    A document's words put back together from its mentions' (left context, mention, right context), in text
    order: each mention is placed where its contexts agree with the words known so far, or after them, joined
    where its left context overlaps their end. Returns the words, each mention's word span (end exclusive), and
    how many left contexts overlapped nothing (the text between may be missing).
    """
    words: List[str] = []
    spans: List[Tuple[int, int]] = []
    unjoined = 0
    for left, mention, right in pieces:
        start = _place(words, spans[-1][1] if spans else 0, left, mention, right)
        if start is None:
            # after the known words: the longest start of the left context that they end with is known already
            known = next(
                (t for t in range(min(len(left), len(words)), 0, -1) if words[len(words) - t :] == left[:t]), 0
            )
            unjoined += 1 if words and not known and left else 0
            start = len(words) + len(left) - known
            words.extend(left[known:] + mention + right)
        else:
            if len(left) > start:  # the left context reaches before the first known word
                prefix = left[: len(left) - start]
                words[:0] = prefix
                spans = [(a + len(prefix), b + len(prefix)) for a, b in spans]
                start += len(prefix)
            after = len(words) - start - len(mention)
            words.extend(right[after:])
        spans.append((start, start + len(mention)))
    return words, spans, unjoined


def _place(words: List[str], lowest: int, left: List[str], mention: List[str], right: List[str]) -> Optional[int]:
    """The first position >= `lowest` where `mention` stands in `words` with its contexts agreeing, or None."""
    size = len(mention)
    for p in range(lowest, len(words) - size + 1):
        if words[p : p + size] != mention:
            continue
        before = min(len(left), p)
        after = min(len(right), len(words) - p - size)
        if words[p - before : p] == left[len(left) - before :] and words[p + size : p + size + after] == right[:after]:
            return p
    return None


def write_benchmark(documents: Iterable[EdDocument], path: "os.PathLike[str] | str", context_words: int = 100) -> None:
    """
    Writes documents in the benchmark format, each mention's contexts cut to `context_words` words. A document's
    text must be words separated by single spaces, with mentions on word boundaries; a mention with no gold is
    written as NIL. Wikipedia ids are written as 0.
    """
    with open(path, "w", encoding="utf-8") as f:
        for document in documents:
            words = document.text.split(" ")
            if any(not w or w != w.strip() for w in words):
                raise ValueError(f"document {document.id}: the text must be words separated by single spaces")
            starts, position = {}, 0
            for i, word in enumerate(words):
                starts[position] = i
                position += len(word) + 1
            for mention in document.mentions:
                first, end = (
                    starts.get(mention.start),
                    starts.get(mention.end + 1, len(words) if mention.end == len(document.text) else None),
                )
                if first is None or end is None:
                    raise ValueError(
                        f"document {document.id}: mention {mention.start}-{mention.end} is not on word boundaries"
                    )
                left = " ".join(words[max(0, first - context_words) : first])
                right = " ".join(words[end : end + context_words])
                candidates = [f"0,{prior!r},{title}" for title, prior in mention.candidates] or [NO_CANDIDATES]
                titles = [title for title, _ in mention.candidates]
                if mention.gold is None:
                    gold = "-1"
                elif mention.gold in titles:
                    index = titles.index(mention.gold)
                    gold = f"{index + 1},0,{mention.candidates[index][1]!r},{mention.gold}"
                else:
                    gold = f"-1,0,{mention.gold}"
                fields = [
                    document.id,
                    document.id,
                    " ".join(words[first:end]),
                    left,
                    right,
                    CANDIDATES,
                    *candidates,
                    GOLD,
                    gold,
                ]
                f.write("\t".join(fields) + "\n")
