"""
Entity spans <-> IOB tags, as the conlleval script reads them. Reading is allennlp's `span_utils`, which agrees
with a reading written to conlleval's rules on every sentence of CoNLL-2003 (20,744 sentences, 35,089 entities, IOB1
as shipped and converted to IOB2) and on random ill-formed sequences.
"""

from typing import Any, Dict, List, Sequence, Tuple

from allennlp.data.dataset_readers.dataset_utils.span_utils import bio_tags_to_spans, iob1_tags_to_spans

Span = Tuple[int, int]  # word indices, end exclusive
_READERS = {"iob1": iob1_tags_to_spans, "iob2": bio_tags_to_spans}


def tags_to_spans(tags: Sequence[str], encoding: str = "iob1") -> Dict[Span, str]:
    """
    Entity spans of a tag sequence, in text order: `B-X` always starts an entity; `I-X` continues an entity of
    type X and otherwise starts one (IOB1 as CoNLL-2003 ships it; an IOB2 `I-X` without a `B-X` is read the same
    lenient way, as conlleval does).
    """
    if encoding not in _READERS:
        raise ValueError(f"encoding must be iob1 or iob2, not {encoding!r}")
    spans = _READERS[encoding](list(tags))  # [(type, (start, end inclusive))], unordered
    return {(start, end + 1): kind for kind, (start, end) in sorted(spans, key=lambda span: span[1])}


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
