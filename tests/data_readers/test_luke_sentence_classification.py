import json

import pytest

from data_readers import LukeSentenceClassificationReader
from luke_allennlp.data.sentence_inputs import longest_first
from luke_allennlp.resources.tokenization import load_fast_tokenizer
from tests.data_readers.sharding import read_in_shards
from tests.jglue import JAPANESE_CHECKPOINT, jglue_file, write_marc_ja

JNLI_LABELS = ["entailment", "contradiction", "neutral"]


@pytest.fixture
def model_dir(request):
    return request.getfixturevalue(JAPANESE_CHECKPOINT)


def ids_of(instance):
    return instance["word_ids"].tensor.tolist()


def test_jsts_and_jnli_as_distributed(model_dir):
    """Every line of the real files: JSTS's float labels, JNLI's three classes; the pair format is the tokenizer's
    own (`tokenizer(s1, s2)`)."""
    tokenizer = load_fast_tokenizer(str(model_dir))
    jsts = LukeSentenceClassificationReader(str(model_dir), regression=True, id_field="sentence_pair_id")
    instances = list(jsts.read(str(jglue_file("jsts_valid"))))
    assert len(instances) == 1457 and jsts.stats["inputs"] == 1457 and jsts.stats["truncated_inputs"] == 0
    first = json.loads(jglue_file("jsts_valid").read_text(encoding="utf-8").split("\n")[1])
    assert instances[1]["metadata"]["id"] == first["sentence_pair_id"] == "1"
    assert instances[1]["label"].tensor.item() == pytest.approx(first["label"]) == 2.4
    assert ids_of(instances[1]) == tokenizer(first["sentence1"], first["sentence2"])["input_ids"]
    labels = [i["label"].tensor.item() for i in instances]
    assert min(labels) == 0.0 and max(labels) == 5.0
    jnli = LukeSentenceClassificationReader(str(model_dir), labels=JNLI_LABELS, id_field="sentence_pair_id")
    instances = list(jnli.read(str(jglue_file("jnli_valid"))))
    assert len(instances) == 2434
    assert {i["label"].label for i in instances} == set(JNLI_LABELS)


def test_marc_ja_single_sentences_and_a_test_split(model_dir, tmp_path):
    reader = LukeSentenceClassificationReader(
        str(model_dir),
        max_seq_length=512,
        sentence_fields=["sentence"],
        labels=["positive", "negative"],
        id_field="review_id",
    )
    instances = list(reader.read(str(write_marc_ja(tmp_path))))
    assert [i["metadata"]["id"] for i in instances][:2] == ["R0000000000001", "R0000000000002"]
    assert [i["label"].label for i in instances][:2] == ["positive", "negative"]
    tokenizer = load_fast_tokenizer(str(model_dir))
    assert ids_of(instances[0]) == tokenizer("とても使いやすく、買ってよかったです。家族にも勧めました。")["input_ids"]
    unlabelled = list(reader.read(str(write_marc_ja(tmp_path, labelled=False))))
    assert len(unlabelled) == 8 and all("label" not in i.fields for i in unlabelled)


def test_glue_style_english_through_the_same_reader(tiny_luke_dir, tmp_path):
    """SST-2 (integer labels, field "sentence") and STS-B (float scores) exported as JSON lines, with a RoBERTa-BPE
    LUKE: other field names, same reader."""
    sst2 = tmp_path / "sst2.jsonl"
    sst2.write_text(
        '{"idx": 0, "sentence": "it \'s a charming and often affecting journey . ", "label": 1}\n'
        '{"idx": 1, "sentence": "unflinchingly bleak and desperate ", "label": 0}\n'
    )
    reader = LukeSentenceClassificationReader(str(tiny_luke_dir), sentence_fields=["sentence"], id_field="idx")
    instances = list(reader.read(str(sst2)))
    assert [i["label"].label for i in instances] == ["1", "0"] and instances[0]["metadata"]["id"] == "0"
    stsb = tmp_path / "stsb.jsonl"
    stsb.write_text(
        '{"sentence1": "A plane is taking off.", "sentence2": "An air plane is taking off.", "label": 5.0}\n'
    )
    reader = LukeSentenceClassificationReader(str(tiny_luke_dir), regression=True)
    (instance,) = reader.read(str(stsb))
    tokenizer = load_fast_tokenizer(str(tiny_luke_dir))
    assert ids_of(instance) == tokenizer("A plane is taking off.", "An air plane is taking off.")["input_ids"]
    assert instance["metadata"]["id"] == f"{stsb}:1"


def test_long_pairs_are_cut_longest_first_and_counted(model_dir, caplog):
    tokenizer = load_fast_tokenizer(str(model_dir))
    reader = LukeSentenceClassificationReader(str(model_dir), max_seq_length=20, regression=True)
    instances = list(reader.read(str(jglue_file("jsts_valid"))))
    lines = [json.loads(line) for line in jglue_file("jsts_valid").read_text(encoding="utf-8").splitlines()]
    expected = [tokenizer(x["sentence1"], x["sentence2"], truncation=True, max_length=20)["input_ids"] for x in lines]
    assert [ids_of(i) for i in instances] == expected
    cut = sum(len(tokenizer(x["sentence1"], x["sentence2"])["input_ids"]) > 20 for x in lines)
    assert reader.stats["truncated_inputs"] == cut > 500 and "cut to max_seq_length 20" in caplog.text
    assert longest_first(10, 3, 8) == (5, 3) and longest_first(6, 6, 7) == (3, 4) and longest_first(9, 8, 7) == (4, 3)


@pytest.mark.parametrize(
    "line, message",
    [
        ("{not json", r"bad\.json:2: not valid JSON"),
        ('["a list"]', r"bad\.json:2: expected a JSON object"),
        ('{"sentence_pair_id": "9", "sentence1": "犬", "label": 1.0}', r"bad\.json:2: missing field 'sentence2'"),
        (
            '{"sentence_pair_id": "9", "sentence1": "犬", "sentence2": " ", "label": 1.0}',
            r"bad\.json:2: field 'sentence2' is empty",
        ),
        (
            '{"sentence_pair_id": "9", "sentence1": "犬", "sentence2": "猫", "label": "high"}',
            r"bad\.json:2: the label should be a number",
        ),
        (
            '{"sentence_pair_id": "0", "sentence1": "犬", "sentence2": "猫", "label": 1.0}',
            r"bad\.json:2: example 0: the example id is repeated \(first in line 1\)",
        ),
        (
            '{"sentence_pair_id": "9", "sentence1": "犬", "sentence2": "猫"}',
            r"bad\.json:2: has no 'label' field, unlike the lines before it",
        ),
    ],
)
def test_bad_lines_name_the_file_and_line(model_dir, tmp_path, line, message):
    path = tmp_path / "bad.json"
    path.write_text(
        '{"sentence_pair_id": "0", "sentence1": "犬が走る。", "sentence2": "猫が寝る。", "label": 0.4}\n' + line + "\n",
        encoding="utf-8",
    )
    reader = LukeSentenceClassificationReader(str(model_dir), regression=True, id_field="sentence_pair_id")
    with pytest.raises(ValueError, match=message):
        list(reader.read(str(path)))


def test_unknown_class_and_empty_file(model_dir, tmp_path):
    path = tmp_path / "jnli.json"
    path.write_text('{"sentence1": "犬", "sentence2": "猫", "label": "entails"}\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"jnli\.json:1: unknown label 'entails'; expected one of"):
        list(LukeSentenceClassificationReader(str(model_dir), labels=JNLI_LABELS).read(str(path)))
    path.write_text("\n\n")
    with pytest.raises(ValueError, match="no examples"):
        list(LukeSentenceClassificationReader(str(model_dir)).read(str(path)))


def test_sharding_covers_every_line_once(model_dir, monkeypatch):
    def make_reader():
        return LukeSentenceClassificationReader(str(model_dir), labels=JNLI_LABELS, id_field="sentence_pair_id")

    shards = read_in_shards(monkeypatch, make_reader, str(jglue_file("jnli_valid")))
    ids = [[i["metadata"]["id"] for i in shard] for shard in shards]
    assert all(len(shard) in (608, 609) for shard in ids)
    assert sorted(int(i) for shard in ids for i in shard) == list(range(2434))
