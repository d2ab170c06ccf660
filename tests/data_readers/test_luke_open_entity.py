import json

import pytest

from data_readers.luke_open_entity import GENERAL_TYPES, LukeOpenEntityReader


@pytest.fixture(scope="module")
def reader(tiny_luke_dir):
    return LukeOpenEntityReader(str(tiny_luke_dir))


def test_both_formats_give_the_same_examples(reader, shared_data):
    paper = list(reader.read_examples(str(shared_data / "open_entity" / "train.json")))
    crowd = list(reader.read_examples(str(shared_data / "open_entity" / "crowd" / "train.json")))
    assert len(paper) == len(crowd) == 1998
    for (_, s1, (a1, b1), l1), (_, s2, (a2, b2), l2) in zip(paper, crowd):
        assert s1[a1:b1] == s2[a2:b2] and sorted(l1) == sorted(l2)
    assert {label for *_, labels in crowd for label in labels} <= set(GENERAL_TYPES)  # ultra-fine types dropped


def test_instances_mark_the_mention(reader, shared_data):
    instances = list(reader.read(str(shared_data / "open_entity" / "dev.json")))
    assert len(instances) == 1998
    for instance in instances[:50]:
        meta = instance["metadata"]
        start, end = meta["span"]
        ids = instance["word_ids"].tensor
        first, last = instance["entity_start_positions"].tensor[0], instance["entity_end_positions"].tensor[0]
        assert reader.tokenizer.decode(ids[first : last + 1]).strip() == meta["sentence"][start:end].strip()
        assert instance["entity_ids"].tensor.tolist() == [1]  # [MASK]


def test_long_input_keeps_the_mention(tiny_luke_dir, caplog):
    reader = LukeOpenEntityReader(str(tiny_luke_dir), max_seq_length=16)
    sentence = " ".join(["filler"] * 40) + " Barack Obama " + " ".join(["words"] * 40)
    start = sentence.index("Barack")
    instance = reader.text_to_instance(sentence, (start, start + len("Barack Obama")), ["person"])
    ids = instance["word_ids"].tensor
    assert len(ids) == 16 and reader.truncated == 1
    first, last = instance["entity_start_positions"].tensor[0], instance["entity_end_positions"].tensor[0]
    assert reader.tokenizer.decode(ids[first : last + 1]).strip() == "Barack Obama"


def test_bad_input_is_named(reader, tmp_path):
    with pytest.raises(ValueError, match="ex7: mention span \\[5, 99\\] is out of range"):
        reader.text_to_instance("short text", (5, 99), example_id="ex7")
    path = tmp_path / "bad.json"
    path.write_text(json.dumps([{"sent": "A b", "start": 0, "end": 1, "labels": ["person", "animal"]}]))
    with pytest.raises(ValueError, match=r"bad.json:0: unknown types \['animal'\]"):
        list(reader.read(str(path)))
    path.write_text(json.dumps([{"sent": "A b", "start": 0, "labels": []}]))
    with pytest.raises(ValueError, match="bad.json:0: missing field 'end'"):
        list(reader.read(str(path)))
    crowd = tmp_path / "crowd.json"
    crowd.write_text('{"mention_span": "x", "left_context_token": []}\n')
    with pytest.raises(ValueError, match="crowd.json:1: not an Open Entity crowd example"):
        list(reader.read(str(crowd)))
