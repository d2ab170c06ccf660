"""Entity spans <-> IOB tags, as the conlleval script reads them."""
from typing import Dict, List, Sequence, Tuple

Span = Tuple[int, int]  # word indices, end exclusive


def tags_to_spans(tags: Sequence[str], encoding: str = "iob1") -> Dict[Span, str]:
    """
    Entity spans of a tag sequence: `B-X` always starts an entity; `I-X` continues an entity of type X and
    otherwise starts one (IOB1 as CoNLL-2003 ships it; an IOB2 `I-X` without a `B-X` is read the same
    lenient way, as conlleval does).
    """
    if encoding not in ("iob1", "iob2"):
        raise ValueError(f"encoding must be iob1 or iob2, not {encoding!r}")
    spans: Dict[Span, str] = {}
    start, current = None, None
    for i, tag in enumerate(list(tags) + ["O"]):
        prefix, _, kind = tag.partition("-")
        if start is not None and (prefix != "I" or kind != current):
            spans[(start, i)] = current
            start, current = None, None
        if prefix == "B" or (prefix == "I" and start is None):
            start, current = i, kind
    return spans


def spans_to_iob2(spans: Dict[Span, str], length: int) -> List[str]:
    tags = ["O"] * length
    for (start, end), kind in spans.items():
        tags[start] = f"B-{kind}"
        for i in range(start + 1, end):
            tags[i] = f"I-{kind}"
    return tags
