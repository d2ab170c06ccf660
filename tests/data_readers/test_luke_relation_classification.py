import json
import logging

import pytest

from data_readers.luke_relation_classification import LukeRelationClassificationReader, parse_tagged
from tests.data_readers.subwords import decodes_to


@pytest.fixture(scope="module")
def reader(tiny_luke_dir):
    return LukeRelationClassificationReader(str(tiny_luke_dir))


def mentions(reader, instance):
    ids = instance["word_ids"].tensor
    starts, ends = instance["entity_start_positions"].tensor, instance["entity_end_positions"].tensor
    return [reader.tokenizer.decode(ids[s : e + 1]).strip() for s, e in zip(starts, ends)]


def test_parse_tagged():
    assert parse_tagged("The <e1>child</e1> was in the <e2>cradle</e2>.", "x") == (
        "The child was in the cradle.",
        (4, 9),
        (21, 27),
    )
    assert parse_tagged("<e2>A</e2> of <e1>B</e1>", "x") == ("A of B", (5, 6), (0, 1))
    with pytest.raises(ValueError, match="f:3: expected one <e1>"):
        parse_tagged("no tags", "f:3")


def test_reads_semeval(reader, shared_data):
    train = list(reader.read_examples(str(shared_data / "semeval2010_task8" / "TRAIN_FILE.TXT")))
    test = list(reader.read_examples(str(shared_data / "semeval2010_task8" / "TEST_FILE_FULL.TXT")))  # CRLF lines
    assert len(train) == 8000 and len(test) == 2717
    assert len({label for *_, label in train}) == 19  # 9 directed relations x 2 + Other
    example_id, text, head, tail, label = train[0]
    assert (text[head[0] : head[1]], text[tail[0] : tail[1]], label) == (
        "configuration",
        "elements",
        "Component-Whole(e2,e1)",
    )
    instance = reader.text_to_instance(text, head, tail, label, example_id)
    assert mentions(reader, instance) == ["configuration", "elements"]
    assert instance["entity_ids"].tensor.tolist() == [2, 3]  # [HEAD], [TAIL]


def test_reads_tacred(reader, shared_data):
    instances = list(reader.read(str(shared_data / "tacred_sample" / "train.json")))
    assert len(instances) == 20
    raw = json.loads((shared_data / "tacred_sample" / "train.json").read_text())
    for instance, example in zip(instances, raw):
        subject = " ".join(example["token"][example["subj_start"] : example["subj_end"] + 1])
        obj = " ".join(example["token"][example["obj_start"] : example["obj_end"] + 1])
        assert mentions(reader, instance) == [subject, obj]
        assert instance["label"].label == example["relation"]


def test_reads_kbp37_format(reader, tmp_path):
    path = tmp_path / "kbp37.txt"
    path.write_text(
        '1\t"<e1>Tom Hanks</e1> , known as <e2>Hanks</e2> ."\nper:alternate_names(e1,e2)\n\n2\t"<e1>A</e1> and <e2>B</e2>"\nno_relation\n\n'
    )
    examples = list(reader.read_examples(str(path)))
    assert [(t[h[0] : h[1]], t[s[0] : s[1]], label) for _, t, h, s, label in examples] == [
        ("Tom Hanks", "Hanks", "per:alternate_names(e1,e2)"),
        ("A", "B", "no_relation"),
    ]


def test_entity_markers(tiny_luke_dir):
    reader = LukeRelationClassificationReader(str(tiny_luke_dir), use_entity_markers=True)
    instance = reader.text_to_instance("Jobs founded Apple in 1976 .", (13, 18), (0, 4))
    assert instance["metadata"]["text"] == "# Jobs # founded @ Apple @ in 1976 ."
    assert mentions(reader, instance) == ["@ Apple @", "# Jobs #"]  # head, tail
    with pytest.raises(ValueError, match="do not overlap"):
        reader.text_to_instance("New York City", (0, 8), (4, 13))


def test_bad_input_is_named(reader, tmp_path):
    with pytest.raises(ValueError, match=r"ex1: tail span \[3, 40\] is out of range"):
        reader.text_to_instance("short text", (0, 5), (3, 40), example_id="ex1")
    path = tmp_path / "bad.json"
    path.write_text(
        json.dumps(
            [
                {
                    "id": "a1",
                    "relation": "x",
                    "token": ["a", "b"],
                    "subj_start": 0,
                    "subj_end": 5,
                    "obj_start": 1,
                    "obj_end": 1,
                }
            ]
        )
    )
    with pytest.raises(ValueError, match=r"bad.json:a1: token span \[0, 5\] is out of range for 2 tokens"):
        list(reader.read(str(path)))
    tagged = tmp_path / "bad.txt"
    tagged.write_text('7\t"<e1>A</e1> and <e2>B</e2>"\nComment: x\n')
    with pytest.raises(ValueError, match="bad.txt:2: expected the relation label after example 7"):
        list(reader.read(str(tagged)))
    far = LukeRelationClassificationReader(str(reader.tokenizer.name_or_path), max_seq_length=8)
    with pytest.raises(ValueError, match="subwords apart, more than max_seq_length allows"):
        far.text_to_instance("A " + "x " * 30 + "B", (0, 1), (62, 63), example_id="far")


def test_reads_kbp37_as_distributed(reader, kbp37_sample, caplog):
    """Spaces inside the tags are not part of a mention; an empty mention skips its example, counted and logged."""
    examples = list(reader.read_examples(str(kbp37_sample)))
    assert len(examples) == 12
    _, text, head, tail, label = examples[0]
    assert (text[head[0] : head[1]], text[tail[0] : tail[1]], label) == (
        "Maria Lindqvist",
        "Mia",
        "per:alternate_names(e1,e2)",
    )
    with caplog.at_level(logging.WARNING):
        instances = list(reader.read(str(kbp37_sample)))
    assert len(instances) == 11 and reader.stats["skipped_empty_mentions"] == 1 and reader.stats["inputs"] == 11
    assert "kbp37_sample.txt, example 7: the head mention is empty: skipped" in caplog.text
    assert mentions(reader, instances[0]) == ["Maria Lindqvist", "Mia"]
    assert {i["label"].label for i in instances} >= {"no_relation", "org:top_members/employees(e1,e2)"}


def test_mentions_too_far_apart_are_skipped_when_reading(tiny_luke_dir, tmp_path, caplog):
    reader = LukeRelationClassificationReader(str(tiny_luke_dir), max_seq_length=12)
    path = tmp_path / "semeval.txt"
    far = "<e1>A</e1> " + "x " * 30 + "<e2>B</e2>"
    path.write_text(f'1\t"{far}"\nOther\nComment:\n\n2\t"<e1>A</e1> met <e2>B</e2> ."\nOther\nComment:\n')
    with caplog.at_level(logging.WARNING):
        instances = list(reader.read(str(path)))
    assert len(instances) == 1 and instances[0]["metadata"]["id"].endswith("semeval.txt, example 2")
    assert reader.stats["skipped_mentions_too_far_apart"] == 1 and "subwords apart" in caplog.text


def test_text_is_utf8_with_an_optional_bom(reader, shared_data, tmp_path):
    tacred = tmp_path / "tacred.json"
    tacred.write_bytes(b"\xef\xbb\xbf" + (shared_data / "tacred_sample" / "train.json").read_bytes())
    assert len(list(reader.read(str(tacred)))) == 20  # read as TACRED JSON, not as SemEval
    semeval = tmp_path / "semeval.txt"
    semeval.write_bytes(b"\xef\xbb\xbf" + '1\t"The <e1>café</e1> in <e2>Paris</e2>"\nOther\n'.encode())
    ((example_id, text, *_),) = list(reader.read_examples(str(semeval)))
    assert example_id.endswith("semeval.txt, example 1") and text == "The café in Paris"
    semeval.write_bytes(
        '1\t"<e1>A</e1> <e2>B</e2>"\nOther\n\n2\t"<e1>C</e1> and \xe9 <e2>D</e2>"\nOther\n'.encode("latin-1")
    )
    with pytest.raises(ValueError, match=r"semeval.txt:4: not UTF-8 text \(byte 0xe9"):
        list(reader.read(str(semeval)))
    tacred.write_text('[\n  {"id": "a", "relation": "x"},\n  {"id": "b",}\n]')
    with pytest.raises(ValueError, match=r"tacred.json:3: not valid JSON"):
        list(reader.read(str(tacred)))


def test_bad_labels_and_ids_are_named(reader, tacred_train, tmp_path):
    path = tmp_path / "semeval.txt"
    path.write_text('1\t"<e1>A</e1> of <e2>B</e2>"\nComponent-Whole(e2,e1\nComment:\n')
    with pytest.raises(ValueError, match=r"semeval.txt:2: 'Component-Whole\(e2,e1' is not a relation label"):
        list(reader.read(str(path)))
    path.write_text('1\t"<e1>A</e1> of <e2>B</e2>"\n2\t"<e1>C</e1> of <e2>D</e2>"\nOther\n')
    with pytest.raises(ValueError, match="semeval.txt:2: '2\\\\t.*' is not a relation label"):
        list(reader.read(str(path)))
    path.write_text('1\t"<e1>A</e1> of <e2>B</e2>"\nOther\n\n1\t"<e1>C</e1> of <e2>D</e2>"\nOther\n')
    with pytest.raises(ValueError, match=r"semeval.txt:4: example 1: the example id is repeated \(first in line 1\)"):
        list(reader.read(str(path)))
    examples = json.loads(tacred_train.read_text())
    tacred = tmp_path / "tacred.json"
    tacred.write_text(json.dumps(examples[:3] + examples[1:2]))
    with pytest.raises(
        ValueError, match=rf"tacred.json:{examples[1]['id']}: the example id is repeated \(first in example 1\)"
    ):
        list(reader.read(str(tacred)))


def test_a_label_unseen_in_training_is_named(reader, tmp_path, caplog):
    from allennlp.data import Vocabulary

    path = tmp_path / "dev.txt"
    path.write_text('5\t"<e1>A</e1> of <e2>B</e2>"\nCause-Effect(e1,e2)\nComment:\n')
    (instance,) = list(reader.read(str(path)))
    vocab = Vocabulary({"labels": {"Other": 1}}, non_padded_namespaces=["labels"])
    with pytest.raises(
        ValueError,
        match=r"dev.txt, example 5: label\(s\) \['Cause-Effect\(e1,e2\)'\] not in the 'labels' vocabulary, which has \['Other'\]",
    ):
        instance.index_fields(vocab)
    from luke_allennlp.data.fields import SourcedMultiLabelField  # (entity typing's labels)

    with pytest.raises(ValueError, match=r"oe:7: label\(s\) \['person'\] not in the 'labels' vocabulary"):
        SourcedMultiLabelField(["Other", "person"], "labels", source="oe:7").index(vocab)
    assert not [r for r in caplog.records if r.levelname == "ERROR"]  # no stray "Token: ..." line before it


def test_an_empty_file_is_an_error(reader, tmp_path):
    for name, content in (("empty.txt", ""), ("blank.txt", "\n\n"), ("empty.json", "[]")):
        (tmp_path / name).write_text(content)
        with pytest.raises(ValueError, match=rf"{name}: no examples in the file"):
            list(reader.read(str(tmp_path / name)))


# --- mLUKE: an XLM-R-style sentencepiece tokenizer ----------------------------------------------------------------


def test_semeval_and_tacred_slices_with_mluke(tiny_mluke_dir, semeval_slice, tacred_train):
    reader = LukeRelationClassificationReader(str(tiny_mluke_dir))
    semeval = list(reader.read(str(semeval_slice)))
    assert len(semeval) == 40
    examples = {
        example_id: (text, head, tail) for example_id, text, head, tail, _ in reader.read_examples(str(semeval_slice))
    }
    for instance in semeval:
        text, head, tail = examples[instance["metadata"]["id"]]
        ids = instance["word_ids"].tensor.tolist()
        starts, ends = (
            instance["entity_start_positions"].tensor.tolist(),
            instance["entity_end_positions"].tensor.tolist(),
        )
        assert ids[0] == 0 and ids[-1] == 2  # <s> ... </s>
        for (start, end), first, last in zip((head, tail), starts, ends):
            assert decodes_to(reader.tokenizer, ids[first : last + 1], text[start:end]), (
                text[start:end],
                instance["metadata"]["id"],
            )
    assert mentions(reader, semeval[0]) == ["configuration", "elements"]
    raw = json.loads(tacred_train.read_text())
    for instance, example in zip(reader.read(str(tacred_train)), raw):
        subject = " ".join(example["token"][example["subj_start"] : example["subj_end"] + 1])
        obj = " ".join(example["token"][example["obj_start"] : example["obj_end"] + 1])
        ids = instance["word_ids"].tensor
        starts, ends = instance["entity_start_positions"].tensor, instance["entity_end_positions"].tensor
        assert [decodes_to(reader.tokenizer, ids[s : e + 1], m) for s, e, m in zip(starts, ends, (subject, obj))] == [
            True,
            True,
        ]


def test_mluke_entity_markers_and_non_latin_text(tiny_mluke_dir):
    # LukeTokenizer's task="entity_pair_classification" input with MLukeTokenizer's <ent> / <ent2>.
    reader = LukeRelationClassificationReader(str(tiny_mluke_dir), entity_marker_tokens=["<ent>", "<ent2>"])
    text = "Лев Толстой написал роман «Война и мир»."
    instance = reader.text_to_instance(text, (0, 11), (27, 38))
    tokens = reader.tokenizer.convert_ids_to_tokens(instance["word_ids"].tensor.tolist())
    starts, ends = instance["entity_start_positions"].tensor.tolist(), instance["entity_end_positions"].tensor.tolist()
    assert [(tokens[s], tokens[e]) for s, e in zip(starts, ends)] == [("<ent>", "<ent>"), ("<ent2>", "<ent2>")]
    ids = instance["word_ids"].tensor.tolist()
    # Between the markers, the mentions' subwords: "Лев" after a "▁" (a word start), "Война" right after "«" (none).
    assert [reader.tokenizer.decode(ids[s + 1 : e]) for s, e in zip(starts, ends)] == ["Лев Толстой", "Война и мир"]
    assert tokens[starts[0] + 1] == "▁" and tokens[starts[1] + 1] != "▁"
    assert tokens[0] == "<s>" and tokens[-1] == "</s>"


def test_japanese_pairs_in_kbp37_format(tiny_luke_japanese_dir, shared_data, tmp_path):
    """Head and tail tagged in real Japanese Wikipedia paragraphs (JSQuAD's contexts), KBP37's layout: the entities
    span the pieces covering each name, with the <ent>/<ent2> markers of LUKE-Japanese's MLukeTokenizer around them."""
    from tests.data_readers.japanese import japanese_mentions

    blocks, pairs = [], []
    texts = japanese_mentions(shared_data / "jglue")
    for number, ((text, mentions), (h, t)) in enumerate(zip(texts[:3] + texts[4:5], [(1, 2)] * 3 + [(1, 0)]), start=1):
        (_, head, _), (_, tail, _) = mentions[h], mentions[t]  # disjoint names, the head first
        tagged = (
            f"{text[: head[0]]}<e1>{text[head[0] : head[1]]}</e1>"
            f"{text[head[1] : tail[0]]}<e2>{text[tail[0] : tail[1]]}</e2>{text[tail[1] :]}"
        )
        blocks.append(f'{number}\t"{tagged}"\nno_relation\n')
        pairs.append((text[head[0] : head[1]], text[tail[0] : tail[1]]))
    (tmp_path / "ja.txt").write_text("\n".join(blocks), encoding="utf-8")
    for markers in (None, ["<ent>", "<ent2>"]):
        reader = LukeRelationClassificationReader(str(tiny_luke_japanese_dir), entity_marker_tokens=markers)
        instances = list(reader.read(str(tmp_path / "ja.txt")))
        # "男性" of "道の上をバナナを背負った男性が歩いています。" is inside the piece "男性が"
        assert len(instances) == 4 and reader.stats["mention_boundaries_inside_subwords"] == 1
        for instance, names in zip(instances, pairs):
            ids = instance["word_ids"].tensor.tolist()
            starts = instance["entity_start_positions"].tensor.tolist()
            ends = instance["entity_end_positions"].tensor.tolist()
            for name, first, last, marker in zip(names, starts, ends, markers or [None, None]):
                inner = ids[first + 1 : last] if marker else ids[first : last + 1]
                covered = "".join(reader.tokenizer.convert_ids_to_tokens(inner)).replace("▁", "")
                assert covered == (name if name != "男性" else "男性が")
                if marker:
                    assert ids[first] == ids[last] == reader.tokenizer.convert_tokens_to_ids(marker)
    assert pairs[1] == ("オーストリア", "ウィーン") and pairs[3] == ("バナナ", "男性")
