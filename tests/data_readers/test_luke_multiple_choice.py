import json

import pytest

from data_readers import LukeMultipleChoiceReader
from luke_allennlp.data.inputs import COUNTS, InputCounts
from luke_allennlp.resources.tokenization import load_fast_tokenizer
from tests.jglue import JAPANESE_CHECKPOINT, jglue_file


@pytest.fixture
def model_dir(request):
    return request.getfixturevalue(JAPANESE_CHECKPOINT)


def test_jcommonsenseqa_as_distributed(model_dir):
    """Every question of the real valid file: five (question, choice) pairs in the tokenizer's pair format, stacked."""
    tokenizer = load_fast_tokenizer(str(model_dir))
    reader = LukeMultipleChoiceReader(str(model_dir), id_field="q_id")
    instances = list(reader.read(str(jglue_file("jcommonsenseqa_valid"))))
    assert len(instances) == 1119 and reader.stats["inputs"] == 5 * 1119
    lines = [json.loads(x) for x in jglue_file("jcommonsenseqa_valid").read_text(encoding="utf-8").splitlines()]
    long = sum(len(tokenizer(x["question"], x[f"choice{c}"])["input_ids"]) > 64 for x in lines for c in range(5))
    assert reader.stats["truncated_inputs"] == long  # counted (a few with a small vocabulary)
    line = lines[0]
    first = instances[0]
    assert first["metadata"]["id"] == str(line["q_id"]) == "8939" and first["label"].tensor.item() == line["label"] == 2
    assert first["metadata"][COUNTS] == InputCounts(passes=5, longest_mention=1)  # the model's passes: one a choice
    ids, mask = first["word_ids"].tensor, first["word_attention_mask"].tensor
    for row in range(5):
        expected = tokenizer(line["question"], line[f"choice{row}"])["input_ids"]
        assert ids[row, : len(expected)].tolist() == expected and int(mask[row].sum()) == len(expected)
    assert sorted({i["label"].tensor.item() for i in instances}) == [0, 1, 2, 3, 4]


def test_choices_in_one_field_and_cut_inputs(model_dir, tmp_path):
    path = tmp_path / "mc.jsonl"
    record = {"question": "日本の首都はどこ？" * 10, "choices": ["東京", "大阪", "京都"], "answer": 0}
    path.write_text(json.dumps(record, ensure_ascii=False) + "\n", encoding="utf-8")
    reader = LukeMultipleChoiceReader(str(model_dir), max_seq_length=16, choices_field="choices", label_field="answer")
    (instance,) = reader.read(str(path))
    assert tuple(instance["word_ids"].tensor.shape) == (3, 16) and reader.stats["truncated_inputs"] == 3
    tokenizer = load_fast_tokenizer(str(model_dir))
    expected = tokenizer("日本の首都はどこ？" * 10, "大阪", truncation=True, max_length=16)["input_ids"]
    assert instance["word_ids"].tensor[1].tolist() == expected and instance["label"].tensor.item() == 0


FIVE_CHOICES = {"choice0": "a", "choice1": "b", "choice2": "c", "choice3": "d", "choice4": "e"}


@pytest.mark.parametrize(
    "record, message",
    [
        (
            {"q_id": 1, "question": "何？", "choice0": "a", "choice1": "b", "choice2": "c", "choice3": "d", "label": 0},
            r"mc\.json:2: missing field 'choice4'",
        ),
        (
            {"q_id": 1, "question": "何？", **FIVE_CHOICES, "label": 5},
            r"mc\.json:2: label 5 is not the index of one of the 5 choices",
        ),
        (
            {"q_id": 1, "question": "何？", **FIVE_CHOICES, "label": "2"},
            r"mc\.json:2: field 'label' should be int",
        ),
        (
            {"q_id": 0, "question": "何？", **FIVE_CHOICES, "label": 1},
            r"mc\.json:2: example 0: the example id is repeated",
        ),
    ],
)
def test_bad_lines_name_the_file_and_line(model_dir, tmp_path, record, message):
    good = {
        "q_id": 0,
        "question": "猫は何を飲む？",
        "choice0": "牛乳",
        "choice1": "石",
        "choice2": "砂",
        "choice3": "鉄",
        "choice4": "紙",
        "label": 0,
    }
    path = tmp_path / "mc.json"
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in (good, record)) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match=message):
        list(LukeMultipleChoiceReader(str(model_dir), id_field="q_id").read(str(path)))
