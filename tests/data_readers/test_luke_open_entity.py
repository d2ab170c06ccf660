import json
import logging
from pathlib import Path

import pytest

from data_readers.luke_open_entity import GENERAL_TYPES, LukeOpenEntityReader
from tests.data_readers.subwords import decodes_to


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


def test_a_mention_longer_than_the_window_is_cut_and_counted(tiny_luke_dir, caplog):
    """The mention's end position stays inside the input (one past it is an IndexError in the model's forward pass)."""
    from allennlp.data import Batch, Vocabulary

    from luke_allennlp.models import LukeEntityTyping
    from luke_allennlp.modules.token_embedders import LukeEmbedder

    reader = LukeOpenEntityReader(str(tiny_luke_dir), max_seq_length=10)
    mention = " ".join(f"Name{i}" for i in range(20))
    sentence = f"Before {mention} after ."
    with caplog.at_level(logging.WARNING):
        instance = reader.text_to_instance(sentence, (7, 7 + len(mention)), ["person"], "long")
    ids = instance["word_ids"].tensor
    first, last = int(instance["entity_start_positions"].tensor[0]), int(instance["entity_end_positions"].tensor[0])
    assert len(ids) == 10 and (first, last) == (1, 8)  # the mention's first 8 subwords, between <s> and </s>
    assert reader.stats["truncated_mentions"] == 1 and reader.stats["truncated_inputs"] == 1
    assert "long: a mention of" in caplog.text
    vocab = Vocabulary({"labels": {"person": 1}}, non_padded_namespaces=["labels"])
    model = LukeEntityTyping(vocab, LukeEmbedder(str(tiny_luke_dir), entity_vocab="task"))
    batch = Batch([instance])
    batch.index_instances(vocab)
    assert model(**batch.as_tensor_dict())["logits"].shape == (1, 1)


def test_crowd_format_bad_input_is_named(reader, shared_data, tmp_path):
    lines = (shared_data / "open_entity" / "crowd" / "dev.json").read_text(encoding="utf-8").splitlines()[:3]
    crowd = tmp_path / "crowd.json"
    crowd.write_bytes(b"\xef\xbb\xbf" + "\n".join(lines).encode())
    assert len(list(reader.read(str(crowd)))) == 3  # a byte-order mark is not part of the first line
    example = json.loads(lines[1])
    del example["y_str"]
    crowd.write_text("\n".join([lines[0], json.dumps(example)]))
    with pytest.raises(ValueError, match="crowd.json:2: not an Open Entity crowd example: missing field 'y_str'"):
        list(reader.read(str(crowd)))
    crowd.write_text("\n".join([lines[0], lines[1], lines[0]]))
    annot_id = json.loads(lines[0])["annot_id"]
    with pytest.raises(
        ValueError, match=rf"crowd.json:3: example {annot_id}: the annot_id is repeated \(first in line 1\)"
    ):
        list(reader.read(str(crowd)))
    crowd.write_text(lines[0] + "\n" + lines[1][:-3] + "\n")
    with pytest.raises(ValueError, match="crowd.json:2: not valid JSON"):
        list(reader.read(str(crowd)))


def test_unseen_types_and_empty_files_are_named(reader, tmp_path):
    from allennlp.data import Vocabulary

    path = tmp_path / "dev.json"
    path.write_text(json.dumps([{"sent": "Paris is big", "start": 0, "end": 5, "labels": ["location", "place"]}]))
    (instance,) = list(reader.read(str(path)))
    vocab = Vocabulary({"labels": {"location": 1, "person": 1}}, non_padded_namespaces=["labels"])
    with pytest.raises(ValueError, match=r"dev.json:0: label\(s\) \['place'\] not in the 'labels' vocabulary"):
        instance.index_fields(vocab)
    path.write_text("[]")
    with pytest.raises(ValueError, match="dev.json: no examples in the file"):
        list(reader.read(str(path)))


# --- mLUKE: an XLM-R-style sentencepiece tokenizer ----------------------------------------------------------------

MULTILINGUAL = Path(__file__).resolve().parents[1] / "fixtures" / "data" / "multilingual"


def mention_subwords(instance):
    ids = instance["word_ids"].tensor.tolist()
    first, last = int(instance["entity_start_positions"].tensor[0]), int(instance["entity_end_positions"].tensor[0])
    return ids, ids[first : last + 1]


def test_non_latin_mentions_with_mluke(tiny_mluke_dir):
    reader = LukeOpenEntityReader(str(tiny_mluke_dir))
    instances = list(reader.read(str(MULTILINGUAL / "open_entity_multilingual.json")))
    mentions = [i["metadata"]["sentence"][slice(*i["metadata"]["span"])] for i in instances]
    assert mentions == ["東京都", "夏目漱石", "Лев Толстой", "Каспийское море", "مصر", "中华人民共和国"]
    for instance, mention in zip(instances, mentions):
        ids, subwords = mention_subwords(instance)
        assert ids[0] == 0 and ids[-1] == 2  # <s> ... </s>
        assert reader.tokenizer.decode(subwords) == mention  # exactly the mention's subwords
    # A mention after a space starts at sentencepiece's lone "▁" before its first character (the "▁" belongs to it).
    _, subwords = mention_subwords(instances[4])  # "مصر" in "القاهرة هي عاصمة مصر ..."
    assert reader.tokenizer.convert_ids_to_tokens(subwords) == ["\u2581", "م", "ص", "ر"]
    assert [sorted(i["labels"].labels) for i in instances[:2]] == [["location", "place"], ["person"]]


def test_real_slice_and_entity_markers_with_mluke(tiny_mluke_dir, open_entity_slice):
    reader = LukeOpenEntityReader(str(tiny_mluke_dir))
    instances = list(reader.read(str(open_entity_slice)))
    assert len(instances) == 40 and reader.stats["truncated_inputs"] == 0
    for instance in instances:
        meta = instance["metadata"]
        _, subwords = mention_subwords(instance)
        assert decodes_to(reader.tokenizer, subwords, meta["sentence"][slice(*meta["span"])])
    # `<ent>` is a token of an MLukeTokenizer checkpoint: before and after the mention, inside the entity's span.
    marked = LukeOpenEntityReader(str(tiny_mluke_dir), entity_marker_token="<ent>")
    instance = marked.text_to_instance("Лев Толстой написал роман.", (0, 11))
    ids, subwords = mention_subwords(instance)
    ent = marked.tokenizer.convert_tokens_to_ids("<ent>")
    assert ent == 2002 and subwords[0] == subwords[-1] == ent and ids.count(ent) == 2
    assert marked.tokenizer.decode(subwords[1:-1]) == "Лев Толстой"


def test_japanese_mentions_take_the_pieces_that_cover_them(tiny_luke_japanese_dir, shared_data, tmp_path):
    """Real Japanese text (JSQuAD's Wikipedia paragraphs, JSTS/JNLI captions), no spaces between words: a mention's
    entity spans the SentencePiece pieces covering its characters; a piece that straddles its boundary ("男性が" for
    "男性") is kept whole and counted."""
    from tests.data_readers.japanese import japanese_mentions

    examples = [
        {"sent": text, "start": start, "end": end, "labels": [kind]}
        for text, mentions in japanese_mentions(shared_data / "jglue")
        for _, (start, end), kind in mentions
    ]
    (tmp_path / "ja.json").write_text(json.dumps(examples, ensure_ascii=False), encoding="utf-8")
    reader = LukeOpenEntityReader(str(tiny_luke_japanese_dir))
    instances = list(reader.read(str(tmp_path / "ja.json")))
    assert len(instances) == len(examples) == 15
    straddling, pieces = 0, {}
    for instance, example in zip(instances, examples):
        name = example["sent"][example["start"] : example["end"]]
        ids = instance["word_ids"].tensor.tolist()
        first, last = instance["entity_start_positions"].tensor.item(), instance["entity_end_positions"].tensor.item()
        covered = "".join(reader.tokenizer.convert_ids_to_tokens(ids[first : last + 1])).replace("▁", "")
        assert name in covered, (name, covered)  # every character, in whole pieces ...
        # ... and no piece more than that takes, but a word start's bare "▁" (as the pretraining corpus has it)
        bare = reader.tokenizer.convert_ids_to_tokens(ids[first]) == "▁"
        for fewer in ([ids[first + 1 : last + 1]] if not bare else []) + [ids[first:last]]:
            assert name not in "".join(reader.tokenizer.convert_ids_to_tokens(fewer)).replace("▁", "")
        straddling += covered != name
        pieces[name] = reader.tokenizer.convert_ids_to_tokens(ids[first : last + 1])
    assert reader.stats["mention_boundaries_inside_subwords"] == straddling == 2
    assert pieces["男性"] == ["男性が"] and pieces["キリン"] == ["▁キリンが"]  # the caption pieces over the boundary
    assert (
        pieces["小笠原諸島"] == ["小", "笠", "原", "諸島"] and pieces["グスタフ・マーラー"][0] == "▁"
    )  # after "[SEP] "
