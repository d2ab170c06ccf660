import json
import logging

import numpy as np
import pytest
from transformers import BertTokenizerFast

from data_readers.luke_squad import LukeSquadReader
from luke_allennlp.data.windows import TokenizedText
from luke_allennlp.training.metrics.squad_em_and_f1 import normalize_answer
from tests.data_readers.subwords import decodes_to


def write_squad(path, paragraphs, title="Test_page"):
    path.write_text(json.dumps({"version": "1.1", "data": [{"title": title, "paragraphs": paragraphs}]}))
    return str(path)


def qa(question_id, question, answers):
    return {"id": question_id, "question": question, "answers": [{"text": t, "answer_start": s} for s, t in answers]}


def window_text(instance, row, start, end):
    """The passage text between the subwords at input positions start..end of window `row`."""
    meta = instance["metadata"].metadata
    subwords = instance["passage_subwords"].tensor[row]
    first, last = int(subwords[start]), int(subwords[end])
    return meta["context"][meta["offsets"][first, 0] : meta["offsets"][last, 1]].strip()


def test_every_dev_answer_is_recoverable_from_its_subwords(tiny_roberta_dir, shared_data):
    """
    The whole SQuAD 1.1 dev set through the reader: every gold answer maps to a subword span whose text equals it
    (exactly or after the official normalisation) unless the answer starts or ends inside a subword; the labels
    of the first answer point at that span in every window that holds it.
    """
    reader = LukeSquadReader(str(tiny_roberta_dir))
    exact = normalized = cut = questions_without_recoverable_gold = 0
    for instance in reader.read(str(shared_data / "squad1.1" / "dev-v1.1.json")):
        meta = instance["metadata"].metadata
        context, offsets = meta["context"], meta["offsets"]
        passage = TokenizedText(context, [], offsets)
        recoverable = []
        for start, text in meta["answer_spans"]:
            first, last = LukeSquadReader.answer_subwords(passage, start, text)
            found = LukeSquadReader.subword_text(passage, first, last)
            if found == text.strip():
                exact += 1
            elif normalize_answer(found) == normalize_answer(text):
                normalized += 1
            else:
                # Lost only because a subword straddles the answer's boundary.
                stripped_start = start + len(text) - len(text.lstrip())
                assert offsets[first, 0] < stripped_start or offsets[last, 1] > start + len(text.rstrip()), (
                    meta["id"],
                    text,
                    found,
                )
                cut += 1
            recoverable.append(normalize_answer(found) == normalize_answer(text))
        questions_without_recoverable_gold += not any(recoverable)
        starts, ends = instance["start_positions"].tensor, instance["end_positions"].tensor
        first, last = LukeSquadReader.answer_subwords(passage, *meta["answer_spans"][0])
        labelled = [row for row in range(len(starts)) if instance["passage_subwords"].tensor[row, starts[row]] >= 0]
        assert labelled, meta["id"]
        for row in labelled:
            assert window_text(instance, row, starts[row], ends[row]) == LukeSquadReader.subword_text(
                passage, first, last
            )
    assert reader.stats["questions"] == 10570 and reader.stats["answers_outside_windows"] == 0
    assert (exact, normalized, cut) == (34412, 245, 69)  # of 34,726 gold answers (with repeats)
    assert questions_without_recoverable_gold == 1
    assert reader.stats["split_passages"] == 49 and reader.stats["answers_cutting_subwords"] == 107


def test_windows_labels_and_max_context(tiny_roberta_dir, tmp_path):
    context = " ".join(f"w{i}" for i in range(120)) + " The answer is Denver Broncos here."
    start = context.index("Denver Broncos")
    path = write_squad(
        tmp_path / "squad.json", [{"context": context, "qas": [qa("q1", "Who won?", [(start, "Denver Broncos")])]}]
    )
    reader = LukeSquadReader(str(tiny_roberta_dir), max_seq_length=64, doc_stride=32)
    (instance,) = reader.read(path)
    windows = instance["word_ids"].tensor.shape[0]
    assert windows > 2 and reader.stats["split_passages"] == 1
    starts, ends = instance["start_positions"].tensor, instance["end_positions"].tensor
    passage_subwords = instance["passage_subwords"].tensor
    holding = [row for row in range(windows) if passage_subwords[row, starts[row]] >= 0]
    assert holding and holding[-1] == windows - 1
    for row in range(windows):
        if row in holding:
            assert window_text(instance, row, starts[row], ends[row]) == "Denver Broncos"
        else:
            assert starts[row] == ends[row] == 0  # RoBERTa's <s>
    # Every passage subword has its most context in exactly one window.
    max_context = instance["max_context"].tensor
    owners = np.zeros(int(passage_subwords.max()) + 1, dtype=int)
    for row in range(windows):
        np.add.at(owners, passage_subwords[row][max_context[row]].numpy(), 1)
    assert (owners == 1).all()
    assert instance["metadata"].metadata["answers"] == ["Denver Broncos"]


def test_bert_and_xlnet_pair_formats(tiny_xlnet_dir, tmp_path):
    context = "The Broncos defeated the Panthers in Santa Clara."
    start = context.index("Panthers")
    path = write_squad(
        tmp_path / "squad.json", [{"context": context, "qas": [qa("q1", "Who lost?", [(start, "Panthers")])]}]
    )
    vocab = [
        "[PAD]",
        "[UNK]",
        "[CLS]",
        "[SEP]",
        "[MASK]",
        "the",
        "broncos",
        "defeated",
        "panthers",
        "in",
        "santa",
        "clara",
        ".",
        "who",
        "lost",
        "?",
    ]
    (tmp_path / "vocab.txt").write_text("\n".join(vocab) + "\n")
    BertTokenizerFast(str(tmp_path / "vocab.txt")).save_pretrained(str(tmp_path / "bert"))
    (bert,) = LukeSquadReader(str(tmp_path / "bert")).read(path)
    # [CLS] who lost ? [SEP] the broncos defeated the panthers in santa clara . [SEP], segments 0 then 1
    assert bert["word_ids"].tensor[0].tolist() == [2, 13, 14, 15, 3, 5, 6, 7, 5, 8, 9, 10, 11, 12, 3]
    assert bert["word_type_ids"].tensor[0].tolist() == [0] * 5 + [1] * 10
    assert window_text(bert, 0, bert["start_positions"].tensor[0], bert["end_positions"].tensor[0]) == "Panthers"
    xlnet_reader = LukeSquadReader(str(tiny_xlnet_dir), max_seq_length=24, doc_stride=4)
    (xlnet,) = xlnet_reader.read(path)
    tokenizer = xlnet_reader.tokenizer
    for row in range(xlnet["word_ids"].tensor.shape[0]):
        ids = xlnet["word_ids"].tensor[row][xlnet["word_attention_mask"].tensor[row]].tolist()
        types = xlnet["word_type_ids"].tensor[row][: len(ids)].tolist()
        assert ids[-2:] == [tokenizer.sep_token_id, tokenizer.cls_token_id] and types[0] == 0 and types[-1] == 2
        assert xlnet["passage_subwords"].tensor[row, 0] >= 0  # the passage comes first
        start, end = xlnet["start_positions"].tensor[row], xlnet["end_positions"].tensor[row]
        if xlnet["passage_subwords"].tensor[row, start] >= 0:
            assert window_text(xlnet, row, start, end) == "Panthers"
        else:
            assert start == end == len(ids) - 1  # XLNet's <cls> is last


def test_bad_input_names_file_and_question(tiny_roberta_dir, tmp_path):
    reader = LukeSquadReader(str(tiny_roberta_dir))
    context = "Denver won the game."
    good = qa("q1", "Who won?", [(0, "Denver")])

    def read(paragraphs):
        path = write_squad(tmp_path / "bad.json", paragraphs)
        return list(reader.read(path))

    missing = dict(good)
    del missing["question"]
    with pytest.raises(ValueError, match=r"bad\.json: question q1 .*missing field 'question'"):
        read([{"context": context, "qas": [missing]}])
    with pytest.raises(ValueError, match=r"bad\.json: article 0 \(Test_page\), paragraph 0: missing field 'context'"):
        read([{"qas": [good]}])
    with pytest.raises(ValueError, match=r"question q2 .*answer 0: the text 'won' is not at answer_start 0 .*'Den'"):
        read([{"context": context, "qas": [qa("q2", "What?", [(0, "won")])]}])
    with pytest.raises(
        ValueError,
        match=r"question q1 .*paragraph 1\): the question id is repeated \(first in Test_page, paragraph 0\)",
    ):
        read([{"context": context, "qas": [good]}, {"context": context, "qas": [good]}])
    with pytest.raises(ValueError, match=r"question q3 .*field 'answer_start' should be int"):
        read(
            [
                {
                    "context": context,
                    "qas": [{"id": "q3", "question": "?", "answers": [{"text": "Denver", "answer_start": "0"}]}],
                }
            ]
        )
    with pytest.raises(ValueError, match=r"question q6 .*answer 0: the text 'won' is not at answer_start -4"):
        read([{"context": context, "qas": [qa("q6", "What?", [(-4, "won")])]}])
    with pytest.raises(ValueError, match=r"question q7 .*answer 0: the answer text is empty"):
        read([{"context": context, "qas": [qa("q7", "What?", [(0, " ")])]}])
    with pytest.raises(ValueError, match=r"question q4 .*no answers"):
        read([{"context": context, "qas": [qa("q4", "Who?", [])]}])
    with pytest.raises(ValueError, match=r"question q5 .*the question is empty"):
        read([{"context": context, "qas": [qa("q5", " ", [(0, "Denver")])]}])
    (tmp_path / "not_squad.json").write_text('{"version": 1}')
    with pytest.raises(ValueError, match=r"not_squad\.json: not a SQuAD JSON file"):
        list(reader.read(str(tmp_path / "not_squad.json")))


def test_answer_longer_than_a_window_is_counted_and_labelled_cls(tiny_roberta_dir, tmp_path, caplog):
    """Answers in no window are labelled CLS, counted, and said in one warning line for the file (with the first
    questions), not one line per question."""
    answer = " ".join(f"w{i}" for i in range(60))
    context = "Start. " + answer + " end."
    questions = [qa(f"long{i}", f"What {i}?", [(7, answer)]) for i in range(5)] + [qa("fits", "Start?", [(0, "Start")])]
    path = write_squad(tmp_path / "squad.json", [{"context": context, "qas": questions}])
    reader = LukeSquadReader(str(tiny_roberta_dir), max_seq_length=48, doc_stride=16)
    with caplog.at_level(logging.WARNING):
        instances = list(reader.read(path))
    assert reader.stats["answers_outside_windows"] == 5
    said = [r.getMessage() for r in caplog.records if "no window" in r.getMessage()]
    assert said == [
        f"{path}: 5 answers that fit in no window (their questions are labelled CLS in every window) (of 6 "
        f"questions), e.g. long0 {answer!r}; long1 {answer!r}; long2 {answer!r}; ..."
    ]
    assert (instances[0]["start_positions"].tensor == 0).all() and (instances[0]["end_positions"].tensor == 0).all()


def entities(instance, row, reader, vocab):
    """(mention text, entity title) of each entity of window `row`."""
    mask = instance["entity_attention_mask"].tensor[row]
    ids = instance["entity_ids"].tensor[row][mask].tolist()
    starts, ends = (
        instance["entity_start_positions"].tensor[row][mask],
        instance["entity_end_positions"].tensor[row][mask],
    )
    words = instance["word_ids"].tensor[row]
    return [(reader.tokenizer.decode(words[s : e + 1]).strip(), vocab.title(i)) for s, e, i in zip(starts, ends, ids)]


def test_entity_inputs_from_the_mention_dictionary(tiny_luke_squad_dir, squad_mention_dictionary, squad_slice, caplog):
    from luke_allennlp.resources.entity_vocab import EntityVocab

    vocab = EntityVocab.from_file(tiny_luke_squad_dir / "entity_vocab.json")
    reader = LukeSquadReader(str(tiny_luke_squad_dir), mention_dictionary=str(squad_mention_dictionary))
    instances = list(reader.read(str(squad_slice)))
    # "Which NFL team represented the AFC at Super Bowl 50?": the question's entities first, then the passage's in
    # text order. The longest name wins ("Santa Clara, California", not "California"); "gold" (in "gold-themed";
    # link probability 0.002) is ignored; "Levi's Stadium" is matched but not in the entity vocabulary; "Super
    # Bowl" is found in "Super Bowl 50" and "Super Bowl L".
    assert entities(instances[0], 0, reader, vocab) == [
        ("NFL", "National Football League"),
        ("AFC", "American Football Conference"),
        ("Super Bowl", "Super Bowl"),
        ("Super Bowl", "Super Bowl"),
        ("American football", "American football"),
        ("National Football League", "National Football League"),
        ("NFL", "National Football League"),
        ("American Football Conference", "American Football Conference"),
        ("AFC", "American Football Conference"),
        ("Denver Broncos", "Denver Broncos"),
        ("National Football Conference", "National Football Conference"),
        ("NFC", "National Football Conference"),
        ("Carolina Panthers", "Carolina Panthers"),
        ("Super Bowl", "Super Bowl"),
        ("San Francisco Bay Area", "San Francisco Bay Area"),
        ("Santa Clara, California", "Santa Clara, California"),
        ("Super Bowl", "Super Bowl"),
        ("Super Bowl", "Super Bowl"),
        ("Super Bowl", "Super Bowl"),
    ]
    assert instances[0]["entity_type_ids"].tensor.max() == 0  # RoBERTa's pair format has one segment
    # "Levi's Stadium" once per question of the first paragraph (30 questions).
    assert reader.stats["mentions_not_in_entity_vocab"] == 30 and reader.stats["pages_not_in_dictionary"] == 0

    # With a lower threshold "gold" counts.
    low = LukeSquadReader(
        str(tiny_luke_squad_dir), mention_dictionary=str(squad_mention_dictionary), min_link_probability=0.001
    )
    assert ("gold", "Gold (color)") in entities(low.text_to_instance(*_question(squad_slice, 0)), 0, low, vocab)

    # Short windows: the question's entities are in every window, the passage's where they fit whole, at most
    # max_entities per window (the rest counted and logged).
    small = LukeSquadReader(
        str(tiny_luke_squad_dir), mention_dictionary=str(squad_mention_dictionary), max_seq_length=64, max_entities=6
    )
    with caplog.at_level(logging.WARNING):
        instance = small.text_to_instance(*_question(squad_slice, 0))
    windows = instance["word_ids"].tensor.shape[0]
    found = [entities(instance, row, small, vocab) for row in range(windows)]
    assert windows > 1 and all(
        row[:3]
        == [("NFL", "National Football League"), ("AFC", "American Football Conference"), ("Super Bowl", "Super Bowl")]
        for row in found
    )
    assert all(len(row) <= 6 for row in found) and small.stats["mentions_cut_by_max_entities"] > 0
    assert "entity mentions cut by max_entities=6" in caplog.text
    passage_mentions = [m for row in found for m in row[3:]]
    assert ("Santa Clara, California", "Santa Clara, California") in passage_mentions

    # The title as SQuAD writes it: underscores, URL quoting.
    quoted = small.text_to_instance(
        "Who won?", "The Broncos won.", [(4, "Broncos")], title="Super%20Bowl_50", question_id="q"
    )
    assert entities(quoted, 0, small, vocab) == [("Broncos", "Denver Broncos")]
    # A page the dictionary does not have: no entities, counted; a question without a page: no entities.
    other = small.text_to_instance("Who won?", "The Broncos won.", [(4, "Broncos")], title="Warsaw", question_id="w")
    assert not other["entity_attention_mask"].tensor.any() and small.stats["pages_not_in_dictionary"] == 1
    assert not small.text_to_instance("Who won?", "The Broncos won.")["entity_attention_mask"].tensor.any()


def _question(path, index):
    """(question, context, answers, title, id) of the index-th question of a SQuAD file."""
    question = list(LukeSquadReader.read_questions(str(path)))[index]
    return question.question, question.context, question.answers, question.title, question.question_id


def test_entity_vocabulary_must_fit_the_entity_table(tiny_luke_dir, squad_mention_dictionary, shared_data):
    vocab = shared_data / "entity_vocab" / "enwiki_20181220_entvocab_100.tsv"  # 103 ids; the tiny LUKE has 40 rows
    with pytest.raises(ValueError, match="103 ids but .* entity table 40 rows"):
        LukeSquadReader(str(tiny_luke_dir), mention_dictionary=str(squad_mention_dictionary), entity_vocab=str(vocab))
    with pytest.raises(ValueError, match="has no entity_vocab.json: pass entity_vocab"):
        LukeSquadReader(str(tiny_luke_dir), mention_dictionary=str(squad_mention_dictionary))


def test_text_is_utf8_with_an_optional_bom_and_json_errors_name_the_line(tiny_roberta_dir, squad_slice, tmp_path):
    reader = LukeSquadReader(str(tiny_roberta_dir))
    path = tmp_path / "bom.json"
    path.write_bytes(b"\xef\xbb\xbf" + squad_slice.read_bytes())
    assert len(list(reader.read_questions(str(path)))) == 55
    path.write_text('{"version": "1.1",\n "data": [\n  {"title": "T", "paragraphs": []},\n ]\n}')
    with pytest.raises(ValueError, match=r"bom.json:4: not valid JSON"):
        list(reader.read(str(path)))
    path.write_text('{"version": "1.1", "data": [{"title": "T", "paragraphs": []}]}')
    with pytest.raises(ValueError, match="bom.json: no examples in the file"):
        list(reader.read(str(path)))


# --- mLUKE: an XLM-R-style sentencepiece tokenizer, an entity vocabulary keyed by language:title --------------------


def test_squad_slice_with_mluke_in_xlmr_pair_format(tiny_mluke_dir, squad_slice):
    reader = LukeSquadReader(str(tiny_mluke_dir))
    instances = list(reader.read(str(squad_slice)))
    assert len(instances) == reader.stats["questions"] == 55 and reader.stats["answers_outside_windows"] == 0
    tokenizer = reader.tokenizer
    exact = 0
    for instance in instances:
        meta = instance["metadata"].metadata
        ids = instance["word_ids"].tensor[0].tolist()
        question = tokenizer(meta["question"], add_special_tokens=False)["input_ids"]
        # XLM-R's pair: <s> question </s></s> passage </s>, one segment (token type 0).
        assert (
            ids[0] == 0
            and ids[1 : 1 + len(question)] == question
            and ids[1 + len(question) : 3 + len(question)] == [2, 2]
        )
        assert ids[-1] == 2 and instance["word_type_ids"].tensor.max() == 0
        start, end = int(instance["start_positions"].tensor[0]), int(instance["end_positions"].tensor[0])
        answer = meta["answers"][0]
        # The labels point at the answer's subwords (the first may be a lone "▁" before the answer's first character):
        # their ids decode to the passage text their offsets give.
        found = window_text(instance, 0, start, end)
        assert decodes_to(tokenizer, ids[start : end + 1], found)
        if found == answer:
            exact += 1
        else:  # a subword straddles the answer's boundary: the labels take it whole
            assert answer in found, (answer, found)
    # Two answers start or end inside a subword of the small sentencepiece vocabulary; the others are exact.
    assert reader.stats["answers_cutting_subwords"] == 2 and exact == 55 - 2


@pytest.fixture(scope="module")
def tiny_mluke_squad_dir(tmp_path_factory, xlmr_tokenizer_dir):
    """A tiny mLUKE whose entity_vocab.json holds the targets of SUPER_BOWL_50_LINKS but "Levi's Stadium" as `en:`
    titles, some with a German title of the same id, as mLUKE's vocabulary has them."""
    from luke_allennlp.testing import write_tiny_checkpoint
    from tests.conftest import SUPER_BOWL_50_LINKS

    directory = tmp_path_factory.mktemp("tiny-mluke-squad")
    titles = sorted(set(SUPER_BOWL_50_LINKS.values()) - {"Levi's Stadium"})
    german = {"American football": "American Football", "California": "Kalifornien"}
    lines = [{"id": i, "entities": [[name, "en"]], "count": 0} for i, name in enumerate(["[PAD]", "[UNK]", "[MASK]"])]
    for i, title in enumerate(titles, start=3):
        lines.append(
            {"id": i, "entities": [[title, "en"]] + ([[german[title], "de"]] if title in german else []), "count": 1}
        )
    (directory / "entity_vocab.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    return write_tiny_checkpoint(
        directory / "model", "mluke", tokenizer=xlmr_tokenizer_dir, entity_vocab=directory / "entity_vocab.jsonl"
    )


def test_entity_inputs_with_an_mluke_entity_vocabulary(tiny_mluke_squad_dir, squad_mention_dictionary, squad_slice):
    written = json.loads((tiny_mluke_squad_dir / "entity_vocab.json").read_text())
    assert written["en:Denver Broncos"] > 3 and written["de:Kalifornien"] == written["en:California"]
    assert written["[MASK2]"] == max(written.values()) and "Denver Broncos" not in written
    reader = LukeSquadReader(str(tiny_mluke_squad_dir), mention_dictionary=str(squad_mention_dictionary))
    vocab = reader.entity_vocab  # the language prefixes read as languages: English titles find their entities
    assert (
        vocab.get("Denver Broncos") == written["en:Denver Broncos"]
        and vocab.get("Kalifornien", language="de") == written["en:California"]
    )
    instances = list(reader.read(str(squad_slice)))
    assert entities(instances[0], 0, reader, vocab)[:4] == [
        ("NFL", "National Football League"),
        ("AFC", "American Football Conference"),
        ("Super Bowl", "Super Bowl"),
        ("Super Bowl", "Super Bowl"),
    ]
    # As with LUKE's vocabulary (test_entity_inputs_from_the_mention_dictionary): "Levi's Stadium" once per question
    # of the first paragraph.
    assert reader.stats["mentions_not_in_entity_vocab"] == 30 and reader.stats["mentions"] > 0


def test_the_whole_jsquad_valid_file_with_the_japanese_tokenizer(tiny_luke_japanese_dir, shared_data):
    """
    JSQuAD v1.3's valid file as distributed, through the reader at configs/jglue/jsquad.jsonnet's settings (384
    subwords, stride 128) with the tiny LUKE-Japanese SentencePiece tokenizer: every question is read, every first
    answer lies in a window whose labels point at the subwords that cover it, and those subwords' text is the answer
    itself unless a piece straddles one of its ends (Japanese pieces cross word boundaries: "北海道を"), which is
    what `answers_cutting_subwords` counts.
    """
    reader = LukeSquadReader(str(tiny_luke_japanese_dir), max_seq_length=384, doc_stride=128, max_question_length=64)
    questions = cut = without_exact_gold = 0
    for instance in reader.read(str(shared_data / "jglue" / "jsquad-v1.3" / "valid-v1.3.json")):
        questions += 1
        meta = instance["metadata"].metadata
        passage = TokenizedText(meta["context"], [], meta["offsets"])
        found = [
            LukeSquadReader.subword_text(passage, *LukeSquadReader.answer_subwords(passage, start, text))
            for start, text in meta["answer_spans"]
        ]
        assert all(text.strip() in f for (_, text), f in zip(meta["answer_spans"], found)), meta["id"]
        cut += found[0] != meta["answer_spans"][0][1].strip()
        without_exact_gold += not any(f == text.strip() for (_, text), f in zip(meta["answer_spans"], found))
        starts, ends = instance["start_positions"].tensor, instance["end_positions"].tensor
        labelled = [row for row in range(len(starts)) if instance["passage_subwords"].tensor[row, starts[row]] >= 0]
        assert labelled, meta["id"]
        assert all(window_text(instance, row, starts[row], ends[row]) == found[0] for row in labelled)
    stats = reader.stats
    assert questions == stats["questions"] == 4442 and stats["answers_outside_windows"] == 0
    assert stats["windows"] > questions and stats["split_passages"] > 0  # contexts of more than 384 pieces
    assert stats["answers_cutting_subwords"] == cut and 0 < cut < 0.1 * questions
    assert 0 < without_exact_gold <= cut
