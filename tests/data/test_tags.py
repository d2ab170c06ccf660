"""Tag schemes: one lenient reading of IOB1, IOB2, BIOES and BILOU, what each scheme does not allow counted."""

import logging
import random

import pytest
from allennlp.data.dataset_readers.dataset_utils.span_utils import bio_tags_to_spans, iob1_tags_to_spans

from luke_allennlp.data.tags import TagScheme, read_tags, spans_to_iob2, tags_to_spans
from tests.data_readers.hub_layouts import conll_documents, iob2


def allennlp_spans(reader, tags):
    return {(start, end + 1): kind for kind, (start, end) in reader(list(tags))}


def test_iob_reads_as_allennlp_reads_it_on_all_of_conll2003_and_on_random_sequences(shared_data):
    sentences = [
        s["tags"]
        for name in ("eng.train", "eng.testa", "eng.testb")
        for d in conll_documents(shared_data / "conll2003" / name)
        for s in d
    ]
    assert len(sentences) == 14041 + 3250 + 3453
    for tags in sentences:
        spans = read_tags(tags)[0]
        assert spans == allennlp_spans(iob1_tags_to_spans, tags) == read_tags(iob2(tags))[0]
        assert spans == allennlp_spans(bio_tags_to_spans, iob2(tags))
        assert spans_to_iob2(spans, len(tags)) == iob2(tags)
    rng = random.Random(0)
    for _ in range(3000):
        tags = [rng.choice(["O", "B-A", "I-A", "B-B", "I-B"]) for _ in range(rng.randint(0, 8))]
        assert read_tags(tags)[0] == allennlp_spans(iob1_tags_to_spans, tags) == allennlp_spans(bio_tags_to_spans, tags)


def test_bioes_and_bilou_and_their_invalid_sequences():
    assert tags_to_spans(["B-A", "I-A", "E-A", "S-B", "O", "U-C", "B-D", "L-D"], "bioes") == {
        (0, 3): "A",
        (3, 4): "B",
        (5, 6): "C",
        (6, 8): "D",
    }
    spans, counts = read_tags(["I-A", "E-A", "E-B", "B-C", "O", "B-D"])
    assert spans == {(0, 2): "A", (2, 3): "B", (3, 4): "C", (5, 6): "D"}
    assert (counts["entities_starting_inside"], counts["entities_starting_at_end"], counts["entities_not_ended"]) == (
        1,
        1,
        2,
    )


def test_tag_scheme_from_the_tags_and_declared(caplog):
    scheme = TagScheme()
    scheme.spans(["B-PER", "I-PER", "O"], "f:1")
    assert scheme.scheme() == "iob2"
    scheme.spans(["I-LOC", "O"], "f:5")
    assert scheme.scheme() == "iob1" and scheme.invalid() == 0
    bioes = TagScheme()
    bioes.spans(["S-PER", "B-LOC", "I-LOC"], "f:9")  # the LOC entity is not ended by E-LOC
    assert bioes.scheme() == "bioes" and bioes.invalid() == 1
    with caplog.at_level(logging.WARNING):
        bioes.report("f")
    assert "f: tags BIOES (from the tags): 1 invalid tag sequences (entities not ended: 1, first at f:9)" in caplog.text
    declared = TagScheme("iob2")
    declared.spans(["I-PER"], "g:3")
    assert declared.stats() == {"tag_scheme": "iob2", "invalid_tag_sequences": 1}
    with pytest.raises(
        ValueError,
        match=r"g:4: tag U-PER is not IOB2 \(B/I-\); the tags look BILOU: set the reader's encoding to 'bilou' or 'auto'",
    ):
        declared.spans(["U-PER"], "g:4")
    with pytest.raises(ValueError, match=r"g:5: 'X-PER' is not a tag"):
        declared.spans(["X-PER"], "g:5")
    with pytest.raises(ValueError, match="encoding must be one of auto, iob1, iob2, bioes, bilou"):
        TagScheme("bio")
