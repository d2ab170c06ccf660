import itertools
import logging
from pathlib import Path

import pytest

from data_readers.luke_conll2003 import LukeConll2003Reader
from luke_allennlp.data.tags import spans_to_iob2, tags_to_spans
from tests.data_readers.subwords import decodes_to


@pytest.fixture(scope="module")
def reader(tiny_luke_dir):
    return LukeConll2003Reader(str(tiny_luke_dir))


def test_tags_to_spans_iob1_and_iob2():
    # IOB1 as shipped: I- starts an entity, B- separates two adjacent entities of one type.
    assert tags_to_spans(["I-PER", "I-PER", "O", "I-LOC", "B-LOC", "I-ORG"]) == {
        (0, 2): "PER",
        (3, 4): "LOC",
        (4, 5): "LOC",
        (5, 6): "ORG",
    }
    assert tags_to_spans(["B-PER", "I-PER", "B-PER", "O", "B-MISC"], "iob2") == {
        (0, 2): "PER",
        (2, 3): "PER",
        (4, 5): "MISC",
    }
    assert spans_to_iob2({(0, 2): "PER", (3, 4): "LOC"}, 5) == ["B-PER", "I-PER", "O", "B-LOC", "O"]
    assert tags_to_spans(["S-PER", "B-LOC", "E-LOC", "O", "U-ORG", "B-X", "L-X"], "bioes") == {
        (0, 1): "PER",
        (1, 3): "LOC",
        (4, 5): "ORG",
        (5, 7): "X",
    }
    with pytest.raises(ValueError, match="encoding must be one of auto, iob1, iob2, bioes, bilou"):
        tags_to_spans(["O"], "bio")


def test_reads_real_dev_set_without_losing_an_entity(reader, shared_data):
    instances = list(reader.read(str(shared_data / "conll2003" / "eng.testa")))
    assert len(instances) == 3250  # sentences, as the data README counts them
    assert reader.stats["documents"] == 216
    gold = sum(len(i["metadata"]["gold_spans"]) for i in instances)
    labelled = sum(int(((i["labels"].labels != None) & (i["labels"].labels != "O")).sum()) for i in instances)  # noqa: E711
    assert gold == labelled == 5942
    assert reader.stats["truncated_sentences"] == 0 and reader.stats["gold_entities_too_long"] == 0
    # Spans of more subwords than the embedder's entity positions (30): counted, none of them a gold entity.
    assert (reader.stats["spans"], reader.stats["spans_with_positions_capped"]) == (512968, 111)
    assert reader.stats["gold_entities_with_positions_capped"] == 0


def test_instance_layout(reader, shared_data):
    instance = next(iter(reader.read(str(shared_data / "conll2003" / "eng.testa"))))
    meta = instance["metadata"]
    words = meta["words"]  # "CRICKET - LEICESTERSHIRE TAKE OVER AT TOP AFTER INNINGS VICTORY ."
    n = len(words)
    spans = meta["spans"]
    assert len(spans) == sum(min(16, n - i) for i in range(n))  # every span of up to 16 words, once
    word_ids = instance["word_ids"].tensor
    assert len(word_ids) <= 512 and word_ids[0] == 0 and word_ids[-1] == 2  # <s> ... </s>
    # The start/end positions point at the first/last subword of the span's words.
    tokenizer = reader.tokenizer
    starts = instance["entity_start_positions"].tensor.flatten()[: len(spans)]
    ends = instance["entity_end_positions"].tensor.flatten()[: len(spans)]
    for k in (0, 5, len(spans) - 1):
        s, e = spans[k]
        expected = tokenizer(words[s:e], is_split_into_words=True, add_special_tokens=False)["input_ids"]
        assert word_ids[starts[k] : ends[k] + 1].tolist() == expected
    chunks, per_chunk = instance["entity_ids"].tensor.shape
    assert per_chunk == 128 and chunks == -(-len(spans) // 128)
    assert instance["entity_attention_mask"].tensor.sum() == len(spans)


def test_context_fills_the_window_around_the_sentence(tiny_luke_dir, tmp_path):
    reader = LukeConll2003Reader(str(tiny_luke_dir), max_seq_length=12)
    text = "-DOCSTART- -X- O O\n\n" + "".join(
        f"w{i}a NN O O\nw{i}b NN O I-PER\n\n" for i in range(6)
    )  # six sentences of two one-subword-ish words
    path = tmp_path / "doc.txt"
    path.write_text(text)
    instances = list(reader.read(str(path)))
    tokenizer = reader.tokenizer
    middle = instances[3]
    sentence = tokenizer(middle["metadata"]["words"], is_split_into_words=True, add_special_tokens=False)["input_ids"]
    ids = middle["word_ids"].tensor.tolist()
    assert len(ids) == 12
    inner = ids[1:-1]
    at = next(i for i in range(len(inner)) if inner[i : i + len(sentence)] == sentence)
    assert 0 < at and at + len(sentence) < len(inner)  # context on both sides
    assert middle["metadata"]["gold_spans"] == {(1, 2): "PER"}


def test_bad_input_is_named(tiny_luke_dir, tmp_path, caplog):
    reader = LukeConll2003Reader(str(tiny_luke_dir), max_seq_length=8)
    bad = tmp_path / "bad.txt"
    bad.write_text("-DOCSTART- -X- O O\n\nEU NNP I-NP I-ORG\nrejects VBZ I-VP X-TAG\n")
    with pytest.raises(ValueError, match=r"bad.txt:4: expected 'word ... NER' columns"):
        list(reader.read(str(bad)))
    odd = tmp_path / "odd.txt"
    long_sentence = "".join(f"word{i} NN O {'I-ORG' if i == 9 else 'O'}\n" for i in range(10))
    odd.write_text("-DOCSTART- -X- O O\n\n-DOCSTART- -X- O O\n\n" + long_sentence)
    with caplog.at_level(logging.WARNING):
        instances = list(reader.read(str(odd)))
    assert reader.stats["empty_documents"] == 1 and "has no sentences" in caplog.text
    assert reader.stats["truncated_sentences"] == 1 and reader.stats["truncated_gold_entities"] == 1
    assert "odd.txt:5: sentence of" in caplog.text and "1 gold entities lost" in caplog.text
    assert "odd.txt: 1 of 1 sentences have more subwords than max_seq_length allows and were cut" in caplog.text
    # The lost entity stays in the gold spans, so evaluation counts it as missed.
    assert instances[0]["metadata"]["gold_spans"] == {(9, 10): "ORG"}
    assert max(e for _, e in instances[0]["metadata"]["spans"]) < 10
    with pytest.raises(ValueError, match="3 words but 2 tags"):
        reader.text_to_instance(["a", "b", "c"], ["O", "O"])


def test_text_to_instance_with_context(reader):
    instance = reader.text_to_instance(
        ["Peter", "visited", "Paris"], left_context=[["Hello", "."]], right_context=[["Bye"]]
    )
    assert instance["metadata"]["words"] == ["Peter", "visited", "Paris"]
    assert "labels" not in instance.fields
    assert (
        reader.tokenizer.decode(instance["word_ids"].tensor) == "<s> Hello . Peter visited Paris Bye</s>"
    )  # each word after a space
    assert instance["metadata"]["spans"][:3].tolist() == [[0, 1], [0, 2], [0, 3]]


def test_a_document_longer_than_the_model_limit_is_read_without_transformers_warning(tiny_luke_dir, tmp_path, caplog):
    """A document is tokenised whole and each sentence takes the part of it that fits `max_seq_length`: transformers'
    "Token indices sequence length is longer than the specified maximum (N > 512)" warned of a loss there is not.
    `document_to_instances` (the predictor's documents) builds the instances that reading the file builds."""
    reader = LukeConll2003Reader(str(tiny_luke_dir), max_seq_length=12)
    reader.tokenizer.model_max_length = 12  # as a released checkpoint says 512
    sentences = [[f"w{i}a", f"w{i}b"] for i in range(6)]
    path = tmp_path / "doc.txt"
    path.write_text("-DOCSTART- -X- O O\n\n" + "".join(f"{a} NN O O\n{b} NN O O\n\n" for a, b in sentences))
    transformers_logger = logging.getLogger("transformers.tokenization_utils_base")  # (its root does not propagate)
    transformers_logger.addHandler(caplog.handler)
    try:
        from_file = list(reader.read(str(path)))
        from_words = reader.document_to_instances(sentences, "doc")
    finally:
        transformers_logger.removeHandler(caplog.handler)
    assert "Token indices sequence length" not in caplog.text and reader.stats["truncated_sentences"] == 0
    assert [i["metadata"]["id"] for i in from_words] == [f"doc#{n}" for n in range(1, 7)]
    for got, want in zip(from_words, from_file, strict=True):
        for name in ("word_ids", "entity_ids", "entity_start_positions", "entity_end_positions"):
            assert got[name].tensor.tolist() == want[name].tensor.tolist()
    with pytest.raises(ValueError, match="doc: sentence 2 of the document has no words"):
        reader.document_to_instances([["a"], []], "doc")


def test_unknown_label_at_evaluation_is_named(reader, tmp_path):
    from allennlp.data import Vocabulary

    vocab = Vocabulary({"labels": {"O": 1, "PER": 1}}, non_padded_namespaces=["labels"])
    path = tmp_path / "dev.txt"
    path.write_text("-DOCSTART- -X- O O\n\nAcme NNP I-NP I-ORG\nwins VBZ I-VP O\n")
    instance = next(iter(reader.read(str(path))))
    with pytest.raises(ValueError, match=r"dev.txt:3: label\(s\) \['ORG'\] not in the 'labels' vocabulary"):
        instance.index_fields(vocab)


def test_columns_split_on_spaces_not_on_unicode_white_space(reader, tmp_path):
    path = tmp_path / "nbsp.txt"
    path.write_text("-DOCSTART- -X- O O\n\nIt PRP I-NP O\ncost VBD I-VP O\n10\u00a0000 CD I-NP O\neuros NNS I-NP O\n")
    (instance,) = list(reader.read(str(path)))
    assert instance["metadata"]["words"] == ["It", "cost", "10\u00a0000", "euros"]


def test_text_is_utf8_with_an_optional_bom(reader, conll_slice, tmp_path):
    path = tmp_path / "bom.txt"
    path.write_bytes(b"\xef\xbb\xbf" + conll_slice.read_bytes())
    documents = list(reader.read_documents(str(path)))
    assert len(documents) == 2 and sum(len(d) for d in documents) == 29  # no extra sentence from the mark
    path.write_bytes(b"-DOCSTART- -X- O O\n\nM\xfcnchen NNP I-NP I-LOC\n")
    with pytest.raises(ValueError, match=r"bom.txt:3: not UTF-8 text \(byte 0xfc"):
        list(reader.read(str(path)))
    for content in ("", "\n\n", "-DOCSTART- -X- O O\n\n"):
        path.write_text(content)
        with pytest.raises(ValueError, match="bom.txt: no sentences in the file"):
            list(reader.read(str(path)))


# --- mLUKE: an XLM-R-style sentencepiece tokenizer, and the CoNLL layouts of other languages ----------------------

MULTILINGUAL = Path(__file__).resolve().parents[1] / "fixtures" / "data" / "multilingual"
# file: (file_encoding, documents, sentences, gold entities in order). Sentences written for these tests, in the
# layouts of German CoNLL-2003 (word lemma POS chunk NER, latin-1, IOB1), Dutch CoNLL-2002 (word POS NER, latin-1,
# "-DOCSTART- -DOCSTART- O" lines without a blank line after them), Spanish CoNLL-2002 (word NER, latin-1, no
# -DOCSTART-), and Japanese (pre-segmented words) and Russian in UTF-8.
OTHER_LANGUAGES = {
    "deu_conll2003.latin1.txt": ("latin-1", 2, 3, [
        ("PER", "Angela Merkel"), ("LOC", "Münster"), ("LOC", "Rhein"), ("LOC", "Köln"), ("ORG", "Europäische Union"),
        ("MISC", "deutschen"), ("LOC", "Berlin"), ("LOC", "Paris"), ("LOC", "Madrid"), ("LOC", "Österreich")]),
    "ned_conll2002.latin1.txt": ("latin-1", 2, 3, [
        ("ORG", "Europese Unie"), ("LOC", "Maastricht"), ("LOC", "Antwerpen"), ("LOC", "Den Haag"),
        ("PER", "Rembrandt van Rijn"), ("LOC", "Leiden")]),
    "esp_conll2002.latin1.txt": ("latin-1", 1, 4, [
        ("LOC", "Lisboa"), ("ORG", "EFE"), ("LOC", "Madrid"), ("LOC", "España"), ("PER", "Miguel de Cervantes"),
        ("MISC", "Don Quijote de la Mancha"), ("ORG", "La Organización de las Naciones Unidas"), ("LOC", "Nueva York")]),
    "jpn_ner.txt": ("utf-8", 1, 2, [("LOC", "東京 都"), ("LOC", "日本"), ("PER", "夏目 漱石"), ("MISC", "明治")]),
    "rus_ner.txt": ("utf-8", 1, 2, [
        ("PER", "Лев Толстой"), ("MISC", "Война и мир"), ("LOC", "Волга"), ("LOC", "Каспийское море")]),
}  # fmt: skip


def gold_subwords(reader, instance):
    """(type, words, subword tokens) of each gold entity of an instance, from its span's start and end positions."""
    meta = instance["metadata"]
    ids = instance["word_ids"].tensor.tolist()
    starts = instance["entity_start_positions"].tensor.flatten().tolist()
    ends = instance["entity_end_positions"].tensor.flatten().tolist()
    index = {tuple(span): k for k, span in enumerate(meta["spans"].tolist())}
    out = []
    for (start, end), kind in meta["gold_spans"].items():
        k = index[start, end]
        out.append((kind, " ".join(meta["words"][start:end]), ids[starts[k] : ends[k] + 1]))
    return out


@pytest.mark.parametrize("name", sorted(OTHER_LANGUAGES))
def test_conll_layouts_of_other_languages_with_mluke(tiny_mluke_dir, name):
    file_encoding, documents, sentences, expected = OTHER_LANGUAGES[name]
    reader = LukeConll2003Reader(str(tiny_mluke_dir), file_encoding=file_encoding)
    instances = list(reader.read(str(MULTILINGUAL / name)))
    assert (reader.stats["documents"], reader.stats["sentences"], len(instances)) == (documents, sentences, sentences)
    found = [entity for instance in instances for entity in gold_subwords(reader, instance)]
    assert [(kind, words) for kind, words, _ in found] == expected  # the tag is the last column, whatever the layout
    for _, words, ids in found:
        # The span's subwords are its words' (each word starting with sentencepiece's "▁"), nothing more or less.
        assert reader.tokenizer.decode(ids) == words
        assert reader.tokenizer.convert_ids_to_tokens(ids[0]).startswith("\u2581")
    for instance in instances:
        ids = instance["word_ids"].tensor.tolist()
        assert (
            ids[0] == reader.tokenizer.bos_token_id == 0 and ids[-1] == reader.tokenizer.eos_token_id == 2
        )  # <s> </s>


def test_undecodable_bytes_and_unknown_encodings_are_named(tiny_mluke_dir):
    path = MULTILINGUAL / "deu_conll2003.latin1.txt"  # line 10 holds "Münster" in latin-1: 0xfc is no UTF-8
    with pytest.raises(
        ValueError, match=r"deu_conll2003.latin1.txt:10: not UTF-8 text \(byte 0xfc.*set the reader's file_encoding"
    ):
        list(LukeConll2003Reader(str(tiny_mluke_dir)).read(str(path)))
    with pytest.raises(ValueError, match="file_encoding 'latin-9x' is not a known character encoding"):
        LukeConll2003Reader(str(tiny_mluke_dir), file_encoding="latin-9x")


def test_real_conll2003_slice_with_mluke(tiny_mluke_dir, conll_slice):
    reader = LukeConll2003Reader(str(tiny_mluke_dir))
    instances = list(reader.read(str(conll_slice)))
    assert len(instances) == reader.stats["sentences"] == 29 and reader.stats["truncated_sentences"] == 0
    found = [entity for instance in instances for entity in gold_subwords(reader, instance)]
    assert len(found) == 107  # the named entities of its 29 sentences
    for _, words, ids in found:
        assert decodes_to(reader.tokenizer, ids, words), (words, reader.tokenizer.convert_ids_to_tokens(ids))
        assert reader.tokenizer.convert_ids_to_tokens(ids[0]).startswith("\u2581")


def test_japanese_words_without_spaces(tiny_luke_japanese_dir, shared_data, tmp_path):
    """Real Japanese text (JSQuAD's Wikipedia paragraphs, JSTS/JNLI captions) as a pre-segmented CoNLL file (words
    cut where the script changes, hand-picked names tagged). `words_without_spaces` tokenises the running text, as
    LUKE-Japanese saw it in pretraining: the subwords are those of the joined sentence, each gold span's entity
    covers the name's characters, and the word boundaries inside a subword are counted."""
    from tests.data_readers.japanese import conll_lines, japanese_mentions

    tags = {"location": "LOC", "person": "PER", "organization": "ORG", "object": "MISC", "entity": "MISC"}
    lines, names = [], []
    for text, mentions in japanese_mentions(shared_data / "jglue"):
        # (no nested names: 日本 inside 日本共産党 is left out)
        kept = [
            m for i, m in enumerate(mentions) if not any(o[1][0] < m[1][1] and m[1][0] < o[1][1] for o in mentions[:i])
        ]
        lines += ["-DOCSTART- O", ""] + conll_lines(text, kept, tags) + [""]
        names.append([name for name, _, _ in kept])
    (tmp_path / "ja.txt").write_text("\n".join(lines), encoding="utf-8")
    joined = LukeConll2003Reader(str(tiny_luke_japanese_dir), encoding="iob2", words_without_spaces=True)
    spaced = LukeConll2003Reader(str(tiny_luke_japanese_dir), encoding="iob2")
    instances, spaced_instances = (
        list(joined.read(str(tmp_path / "ja.txt"))),
        list(spaced.read(str(tmp_path / "ja.txt"))),
    )
    assert len(instances) == len(spaced_instances) == 6 and joined.stats["documents"] == 6
    tokenizer = joined.tokenizer
    boundaries = 0
    for instance, spaced_instance, expected in zip(instances, spaced_instances, names):
        words = instance["metadata"]["words"]
        ids = instance["word_ids"].tensor.tolist()
        # One sentence a document: the input is the running text's own subwords ...
        assert ids == tokenizer("".join(words))["input_ids"]
        assert len(ids) < len(spaced_instance["word_ids"].tensor)  # ... not a "▁" before every word
        starts, ends = (
            instance["entity_start_positions"].tensor.flatten(),
            instance["entity_end_positions"].tensor.flatten(),
        )
        gold = instance["metadata"]["gold_spans"]
        found = []
        for first_word, end_word in sorted(gold):
            index = instance["metadata"]["spans"].tolist().index([first_word, end_word])
            name = "".join(words[first_word:end_word])
            covered = "".join(tokenizer.convert_ids_to_tokens(ids[starts[index] : ends[index] + 1])).replace("▁", "")
            assert name in covered, (name, covered)
            found.append(name)
        assert sorted(found) == sorted(expected)
        # Word boundaries inside a piece, counted by brute force over the joined text's offsets.
        offsets = tokenizer("".join(words), add_special_tokens=False, return_offsets_mapping=True)["offset_mapping"]
        cuts = itertools.accumulate(len(w) for w in words[:-1])
        boundaries += sum(any(s < c < e for s, e in offsets) for c in cuts)
    assert joined.stats["word_boundaries_inside_subwords"] == boundaries > 0
    assert spaced.stats["word_boundaries_inside_subwords"] == 0


def test_gold_entities_longer_than_the_span_limit_are_a_warning_with_their_count(tiny_luke_dir, tmp_path, caplog):
    reader = LukeConll2003Reader(str(tiny_luke_dir), max_span_words=2)
    data = tmp_path / "long.txt"
    tags = ["B-ORG", "I-ORG", "I-ORG", "O", "B-PER", "I-PER", "O", "B-LOC", "I-LOC", "I-LOC", "I-LOC"]
    data.write_text("-DOCSTART- -X- O O\n\n" + "".join(f"w{i} NN O {tag}\n" for i, tag in enumerate(tags)))
    with caplog.at_level(logging.WARNING):
        instances = list(reader.read(str(data)))
    assert reader.stats["gold_entities_too_long"] == 2
    assert "long.txt: 2 gold entities are longer than max_span_words (2 words)" in caplog.text
    assert [r.levelname for r in caplog.records if "max_span_words" in r.getMessage()] == ["WARNING"]
    assert len(instances[0]["metadata"]["gold_spans"]) == 3  # kept: evaluation counts the two as misses


def test_the_former_name_of_the_span_limit_is_read_as_words_with_a_warning(tiny_luke_dir, tmp_path, caplog):
    """Configs and archives written before the rename set `max_mention_length` (words, in this reader only): it is
    read as `max_span_words`, with a warning; both at once, or a limit below 1, is an error naming them."""
    data = tmp_path / "long.txt"
    tags = ["B-ORG", "I-ORG", "I-ORG", "O", "B-PER", "I-PER", "O"]
    data.write_text("-DOCSTART- -X- O O\n\n" + "".join(f"w{i} NN O {tag}\n" for i, tag in enumerate(tags)))
    with caplog.at_level(logging.WARNING):
        old = LukeConll2003Reader(str(tiny_luke_dir), max_mention_length=2)
    assert "max_mention_length (2) is read as max_span_words" in caplog.text
    new = LukeConll2003Reader(str(tiny_luke_dir), max_span_words=2)
    assert old.max_span_words == new.max_span_words == 2
    read_old, read_new = list(old.read(str(data))), list(new.read(str(data)))
    spans = [[tuple(span) for span in i["metadata"]["spans"].tolist()] for i in read_old]
    assert spans == [[tuple(span) for span in i["metadata"]["spans"].tolist()] for i in read_new]
    assert old.stats["gold_entities_too_long"] == 1  # the ORG of 3 words
    assert len(spans[0]) == 7 + 6  # every span of 1 and of 2 of the 7 words
    assert LukeConll2003Reader(str(tiny_luke_dir)).max_span_words == 16
    with pytest.raises(ValueError, match="max_span_words \\(3\\) and max_mention_length \\(2\\) are both given"):
        LukeConll2003Reader(str(tiny_luke_dir), max_span_words=3, max_mention_length=2)
    with pytest.raises(ValueError, match="max_span_words must be positive, not 0"):
        LukeConll2003Reader(str(tiny_luke_dir), max_mention_length=0)


def test_gold_entities_cut_by_the_entity_position_cap_are_a_warning_with_their_count(tiny_luke_dir, tmp_path, caplog):
    """Spans of more subwords than the checkpoint's max_mention_length (30): their entity positions are the first 30
    (the embedder's cap, as LukeTokenizer's); counted, and a warning where gold entities are among them."""
    reader = LukeConll2003Reader(str(tiny_luke_dir))
    long = ["Xqzvbnmkjhgfdswert", "Wzxqkvjpfgh-Qzxvkwjpfgh", "Xqzvbnmkjhgfdswert"]  # 12 + 16 + 12 subwords
    data = tmp_path / "long.txt"
    lines = [f"{w} NNP O I-ORG" for w in long] + ["met NN O O", "Pat NNP O I-PER", "Xqzvbnmkjhgfdswert NNP O I-PER"]
    data.write_text("-DOCSTART- -X- O O\n\n" + "\n".join(lines) + "\n")
    with caplog.at_level(logging.INFO):
        [instance] = reader.read(str(data))
    # 21 spans (6 words: 12, 16, 12, 1, 1, 12 subwords); over 30 subwords: those from the first word over 3 words or
    # more (40, 41, 42, 54) and the second word to the end (42)
    assert reader.stats["spans"] == 21 and reader.stats["spans_with_positions_capped"] == 4 + 1
    assert reader.stats["gold_entities_with_positions_capped"] == 1 and len(instance["metadata"]["gold_spans"]) == 2
    [record] = [r for r in caplog.records if "position ids" in r.getMessage()]
    assert record.levelname == "WARNING" and record.getMessage() == (
        f"{data}: 5 of 21 spans (1 gold entities) have more subwords than the checkpoint's max_mention_length (30): "
        "a LUKE model's entity position ids keep their first 30, as transformers' LukeTokenizer does"
    )
