"""
Entity spans <-> tags, for the tag schemes NER data comes in: IOB1 (CoNLL-2003 as shipped: `I-X` starts an entity,
`B-X` only between two adjacent entities of one type), IOB2 (the Hub's, CoNLL-2002's: every entity starts with `B-X`),
BIOES (`S-X` a one-word entity, `E-X` an entity's last word) and BILOU (the same with `U-` and `L-`).

One reading serves them all, leniently as conlleval reads IOB: `B-`, `S-`, `U-` start an entity; `I-`, `E-`, `L-`
continue the entity of their type and otherwise start one; `E-`, `L-`, `S-`, `U-` end it. On IOB1 and IOB2 tags it
reads what allennlp's `iob1_tags_to_spans` and `bio_tags_to_spans` read (tested on every sentence of CoNLL-2003,
IOB1 as shipped and converted to IOB2, and on random ill-formed sequences), and a valid sequence of any scheme reads
as that scheme defines it. What a scheme does not allow is counted, not lost (`TagScheme`): an IOB2 or BIOES entity
that starts with `I-`, a BIOES entity that starts with `E-` or does not end with `E-`.
"""

import logging
import re
from collections import Counter
from typing import Any, Dict, List, Optional, Sequence, Tuple

logger = logging.getLogger(__name__)

Span = Tuple[int, int]  # word indices, end exclusive
SCHEMES = {"iob1": "BI", "iob2": "BI", "bioes": "BIES", "bilou": "BILU"}  # scheme -> its prefixes (and O)
ENCODINGS = ("auto", *SCHEMES)
TAG = re.compile(r"^(O|[BIESLU]-\S.*)$")
# What each kind of count is invalid under (IOB1 reads every B/I/O sequence as IOB1).
INVALID = {
    "iob1": (),
    "iob2": ("entities_starting_inside",),
    "bioes": ("entities_starting_inside", "entities_starting_at_end", "entities_not_ended"),
    "bilou": ("entities_starting_inside", "entities_starting_at_end", "entities_not_ended"),
}


def read_tags(tags: Sequence[str]) -> Tuple[Dict[Span, str], Counter]:
    """The entity spans of a tag sequence, in text order, and counts of how its entities begin and end:
    `entities_starting_inside` (`I-X`), `entities_starting_at_end` (`E-X`/`L-X` with no entity of X open) and
    `entities_not_ended` (an entity of several words, or a `B-X` alone, not closed by `E-X`/`L-X`: BIOES/BILOU's)."""
    spans: Dict[Span, str] = {}
    counts: Counter = Counter()
    start: Optional[int] = None
    kind = ""
    ended = True

    def close(end: int) -> None:
        nonlocal start
        if start is not None:
            spans[(start, end)] = kind
            counts["entities_not_ended"] += not ended
            start = None

    for index, tag in enumerate(tags):
        if tag == "O":
            close(index)
            continue
        prefix, label = tag[0], tag[2:]
        if prefix in "BSU" or start is None or label != kind:
            close(index)
            start, kind, ended = index, label, prefix in "SU"
            counts["entities_starting_inside"] += prefix == "I"
            counts["entities_starting_at_end"] += prefix in "EL"
        if prefix in "ELSU":
            ended = True
            close(index + 1)
        else:
            ended = False
    close(len(tags))
    return spans, counts


def tags_to_spans(tags: Sequence[str], encoding: str = "iob1") -> Dict[Span, str]:
    """
    Entity spans of a tag sequence, in text order (see the module's doc: one lenient reading for every scheme; an
    IOB2 `I-X` without a `B-X` starts an entity, as conlleval reads it). `encoding` is one of `ENCODINGS`.
    """
    if encoding not in ENCODINGS:
        raise ValueError(f"encoding must be one of {', '.join(ENCODINGS)}, not {encoding!r}")
    return read_tags(tags)[0]


class TagScheme:
    """
    The tags of a dataset read once into spans, with what the scheme does not allow counted. `encoding` declares the
    scheme (a tag of another scheme's prefix is an error naming it), or `"auto"` takes it from the tags: BIOES where
    `S-`/`E-` occur, BILOU where `U-`/`L-` do, else IOB1 where an entity starts with `I-`, else IOB2 (whose reading
    is the same). `report` logs the scheme and the invalid sequences (with the first one's place).
    """

    def __init__(self, encoding: str = "auto") -> None:
        if encoding not in ENCODINGS:
            raise ValueError(
                f"encoding must be one of {', '.join(ENCODINGS)} (the tags' scheme; file_encoding is the characters'), "
                f"not {encoding!r}"
            )
        self.encoding = encoding
        self.reset()

    def reset(self) -> None:
        self.counts: Counter = Counter()
        self.prefixes: set = set()
        self.first: Dict[str, str] = {}  # kind of count -> where it first occurred

    def check(self, tag: Any, where: str) -> str:
        """A tag, which must be `O` or a scheme prefix and a type (and the declared scheme's prefix)."""
        if not isinstance(tag, str) or not TAG.match(tag):
            raise ValueError(
                f"{where}: {tag!r} is not a tag: O, or B-/I- (IOB), E-/S- (BIOES), L-/U- (BILOU) and the type"
            )
        if tag != "O" and self.encoding != "auto" and tag[0] not in SCHEMES[self.encoding]:
            guess = "bioes" if tag[0] in "ES" else "bilou"
            raise ValueError(
                f"{where}: tag {tag} is not {self.encoding.upper()} ({'/'.join(SCHEMES[self.encoding])}-); "
                f"the tags look {guess.upper()}: set the reader's encoding to {guess!r} or 'auto'"
            )
        return tag

    def spans(self, tags: Sequence[str], where: str) -> Dict[Span, str]:
        """The spans of one sentence's tags (checked), counted."""
        for tag in tags:
            self.check(tag, where)
            if tag != "O":
                self.prefixes.add(tag[0])
        spans, counts = read_tags(tags)
        self.counts["entities"] += len(spans)
        for kind, count in counts.items():
            if count:
                self.counts[kind] += count
                self.first.setdefault(kind, where)
        return spans

    def scheme(self) -> str:
        """The declared scheme, or the one the tags read so far are in."""
        if self.encoding != "auto":
            return self.encoding
        if self.prefixes & set("ES"):
            return "bioes"
        if self.prefixes & set("LU"):
            return "bilou"
        return "iob1" if self.counts["entities_starting_inside"] else "iob2"

    def invalid(self) -> int:
        return sum(self.counts[kind] for kind in INVALID[self.scheme()])

    def stats(self) -> Dict[str, Any]:
        return {"tag_scheme": self.scheme(), "invalid_tag_sequences": self.invalid()}

    def report(self, name: str) -> None:
        scheme = self.scheme()
        how = "declared" if self.encoding != "auto" else "from the tags"
        mixed = bool(self.prefixes & set("ES")) and bool(self.prefixes & set("LU"))
        invalid = self.invalid()
        if invalid or mixed:
            kinds = [kind for kind in INVALID[scheme] if self.counts[kind]]
            firsts = "; ".join(
                f"{kind.replace('_', ' ')}: {self.counts[kind]}, first at {self.first[kind]}" for kind in kinds
            )
            logger.warning(
                "%s: tags %s (%s): %d invalid tag sequences (%s), read leniently as conlleval does%s",
                name,
                scheme.upper(),
                how,
                invalid,
                firsts,
                "; the tags mix BIOES's S-/E- and BILOU's U-/L-" if mixed else "",
            )
        else:
            logger.info(
                "%s: tags %s (%s), %d entities, none invalid", name, scheme.upper(), how, self.counts["entities"]
            )


def spans_to_iob2(spans: Dict[Span, str], length: int) -> List[str]:
    tags = ["O"] * length
    for (start, end), kind in spans.items():
        tags[start] = f"B-{kind}"
        for i in range(start + 1, end):
            tags[i] = f"I-{kind}"
    return tags


def entity_output(
    words: List[str], start: int, end: int, kind: str, score: float, separator: str = " "
) -> Dict[str, Any]:
    """An entity as the NER models' output gives it: word indices (`end` exclusive), its words (`text`, joined by
    `separator`: a space, or nothing for text written without spaces), its type and `score`."""
    return {"start": start, "end": end, "text": separator.join(words[start:end]), "type": kind, "score": score}
