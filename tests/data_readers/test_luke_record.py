import json
import logging

import pytest

from data_readers.luke_record import LukeRecordReader
from luke_allennlp.data.inputs import COUNTS
from luke_allennlp.resources.task_entities import TASK_ENTITY_VOCAB
from tests.data_readers.subwords import decodes_to

MASK = TASK_ENTITY_VOCAB["[MASK]"]


@pytest.fixture(scope="module")
def reader(tiny_luke_dir):
    return LukeRecordReader(str(tiny_luke_dir))


def window_entities(reader, instance):
    """Per window: the decoded text of each entity and its candidate index (-1 for the placeholder)."""
    ids = instance["word_ids"].tensor
    starts, ends = instance["entity_start_positions"].tensor, instance["entity_end_positions"].tensor
    candidates, entity_ids = instance["entity_candidates"].tensor, instance["entity_ids"].tensor
    return [
        [
            (reader.tokenizer.decode(ids[w, s : e + 1]).strip(), int(c))
            for s, e, c, i in zip(starts[w], ends[w], candidates[w], entity_ids[w])
            if i
        ]
        for w in range(ids.size(0))
    ]


def write(tmp_path, data, name="record.json"):
    path = tmp_path / name
    path.write_text(json.dumps({"version": "1.0", "data": data}))
    return path


def passage(text, entities, qas, passage_id="p1"):
    return {
        "id": passage_id,
        "passage": {"text": text, "entities": [{"start": s, "end": e} for s, e in entities]},
        "qas": qas,
    }


def test_reads_the_real_sample(reader, record_sample):
    first, second = list(reader.read(str(record_sample)))
    meta = first["metadata"].metadata
    assert meta["id"] == "483577c837cdd4df5bbbbd5cfa3a77f6fea3519e-18db09b9e470ab13e21de901d213aff3db85d1e5-132"
    # The 21 entity mentions of the passage, as 14 distinct candidates in order of first appearance.
    assert meta["candidates"] == [
        "Tracy Morgan",
        "New Jersey",
        "Night Live",
        "NBC",
        "Twitter",
        "Morgan",
        "SNL",
        "Season 41",
        "New Jersey Turnpike",
        "James",
        "Jimmy Mack",
        "McNair",
        "Miley Cyrus",
        "Amy Schumer",
    ]
    assert meta["candidate_spans"][5] == [[234, 239], [374, 379], [586, 591], [851, 856]]  # "Morgan", inclusive ends
    # Gold: "Tracy Morgan" and "Morgan" (the answers list the five mentions of Tracy Morgan).
    assert first["labels"].tensor.tolist() == [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0]
    assert meta["answers"] == ["Tracy Morgan", "Morgan", "Morgan", "Morgan", "Morgan"]
    (window,) = window_entities(reader, first)  # the passage fits in one window of 512
    assert window[0] == ("@placeholder", -1)
    assert len(window) == 1 + 21 and all(text == meta["candidates"][c] for text, c in window[1:])
    assert [c for _, c in window[1:]].count(5) == 4
    assert first["entity_ids"].tensor.tolist() == [[MASK] * 22]
    ids = first["word_ids"].tensor[0].tolist()
    assert (
        ids[:2] == [0, reader.tokenizer.convert_tokens_to_ids("ĠOn")] and ids[-1] == 2
    )  # <s> query </s></s> passage </s>
    assert second["labels"].tensor.tolist() == [
        0,
        0,
        0,
        0,
        0,
        1,
    ]  # Tian Tian, UK, Edinburgh Zoo, Sweetie, Yang Guang, China
    assert reader.stats["queries"] == 2 and reader.stats["candidates"] == 20 and reader.stats["windows"] == 2


def test_windows_over_a_long_passage(tiny_luke_dir):
    reader = LukeRecordReader(str(tiny_luke_dir), max_seq_length=40, doc_stride=8, max_query_length=12)
    words = [f"Name{i % 7}" if i % 3 == 0 else "and" for i in range(60)]
    text = " ".join(words)
    spans, at = [], 0
    for word in words:
        if word.startswith("Name"):
            spans.append((at, at + len(word) - 1))
        at += len(word) + 1
    query = "A long query that says that " * 3 + "@placeholder was there, and then it says " + "more words " * 8
    instance = reader.text_to_instance(text, query, spans, answers=["Name3"], query_id="long")
    windows = window_entities(reader, instance)
    meta = instance["metadata"].metadata
    assert len(windows) > 3 and reader.stats["split_passages"] == 1 and reader.stats["truncated_queries"] == 1
    assert meta["candidates"] == [f"Name{i}" for i in (0, 3, 6, 2, 5, 1, 4)]  # order of first appearance
    assert instance["labels"].tensor.tolist() == [0, 1, 0, 0, 0, 0, 0]
    assert "@placeholder" in meta["query"] and len(reader.tokenizer.tokenize(meta["query"])) <= 12
    seen = []
    for window in windows:
        assert window[0] == ("@placeholder", -1)  # the placeholder in every window, decoded from its subwords
        assert all(text == meta["candidates"][c] for text, c in window[1:])
        seen += [c for _, c in window[1:]]
    assert set(seen) == set(range(7))
    # Each window holds exactly the mentions wholly inside its passage subwords.
    encoded = reader.encoder.encode(meta["query"], text)
    for window, entities in zip(encoded.windows, windows):
        inside = [s for s in spans if window.contains(*encoded.passage.char_span_to_subwords(s[0], s[1] + 1))]
        assert len(entities) - 1 == len(inside)
    assert (
        len(seen) > len(spans) and reader.stats["candidates_without_window"] == 0
    )  # overlapping windows repeat mentions
    # What the model needs without reading the device: the windows with a mention, the longest entity (the
    # placeholder's query span included) in subwords.
    mask, starts, ends = (
        instance[k].tensor for k in ("entity_attention_mask", "entity_start_positions", "entity_end_positions")
    )
    counts = meta[COUNTS]
    assert counts.passes == int(mask[:, 1:].any(-1).sum()) == sum(len(w) > 1 for w in windows)
    assert counts.longest_mention == int((ends - starts + 1)[mask].max()) > 1


def test_max_entities_cuts_and_counts(tiny_luke_dir, caplog):
    reader = LukeRecordReader(str(tiny_luke_dir), max_entities=3)
    text = "Ann, Bob, Cid and Dan met."
    with caplog.at_level(logging.WARNING):
        instance = reader.text_to_instance(
            text, "@placeholder met.", [(0, 2), (5, 7), (10, 12), (18, 20)], answers=["Dan"]
        )
    assert window_entities(reader, instance) == [[("@placeholder", -1), ("Ann", 0), ("Bob", 1)]]
    assert reader.stats["mentions_cut_by_max_entities"] == 2 and reader.stats["candidates_without_window"] == 2
    assert reader.stats["queries_with_gold_outside_windows"] == 1 and "cut by max_entities=3" in caplog.text


def test_unlabelled_and_gold_not_a_candidate(reader, tmp_path):
    text = "Ann met Bob."
    path = write(
        tmp_path,
        [
            passage(
                text,
                [(0, 2), (8, 10)],
                [
                    {"id": "q1", "query": "@placeholder met Bob.", "answers": [{"start": 0, "end": 2, "text": "Ann"}]},
                    {"id": "q2", "query": "Ann met @placeholder.", "answers": [{"start": 8, "end": 9, "text": "Bo"}]},
                ],
            )
        ],
    )
    first, second = list(reader.read(str(path)))
    assert first["labels"].tensor.tolist() == [1, 0] and second["labels"].tensor.tolist() == [0, 0]
    assert reader.stats["queries_without_gold_candidate"] == 1
    unlabelled = reader.text_to_instance(text, "@placeholder met Bob.", [(0, 2)])
    assert "labels" not in unlabelled.fields and unlabelled["metadata"]["answers"] is None


def test_bad_input_is_named(reader, tmp_path, caplog):
    text = "Ann met Bob."
    good = {"id": "q1", "query": "@placeholder met Bob.", "answers": [{"start": 0, "end": 2, "text": "Ann"}]}
    cases = [
        ([passage(text, [(0, 2)], [{"id": "q1", "answers": []}])], "bad.json: query q1: missing field 'query'"),
        ([{"id": "p9", "qas": []}], "bad.json: passage p9: missing field 'passage'"),
        (
            [passage(text, [(0, 2), (8, 12)], [good])],
            r"bad.json: passage p1: entity 1 \[8, 12\] \(inclusive\) is out of range for a passage of 12 characters",
        ),
        (
            [passage(text, [(0, 2)], [good]), passage(text, [(0, 2)], [good], "p2")],
            "bad.json: query q1: the query id is repeated \\(first in passage p1\\)",
        ),
        (
            [passage(text, [(0, 2)], [{**good, "query": "Who met Bob?"}])],
            "bad.json: query q1: the query must contain @placeholder exactly once",
        ),
        (
            [passage(text, [(0, 2)], [good, {"id": "q2", "query": "@placeholder met."}])],
            "bad.json: query q2: has no answers, unlike the queries before it",
        ),
    ]
    for data, message in cases:
        with pytest.raises(ValueError, match=message):
            list(reader.read(str(write(tmp_path, data, "bad.json"))))
    # Errors found while building an instance name the file too.
    tiny = LukeRecordReader(str(reader.tokenizer.name_or_path), max_query_length=2)
    with pytest.raises(
        ValueError, match="bad.json: query q1: @placeholder does not fit in max_query_length=2 subwords"
    ):
        list(
            tiny.read(
                str(
                    write(
                        tmp_path, [passage(text, [(0, 2)], [{**good, "query": "So @placeholder met Bob."}])], "bad.json"
                    )
                )
            )
        )
    # An answer whose text differs from its offsets is counted and logged; its text is kept (the evaluation uses it).
    wrong = {"id": "q1", "query": "@placeholder met Bob.", "answers": [{"start": 0, "end": 1, "text": "Ann"}]}
    with caplog.at_level(logging.WARNING):
        (instance,) = list(reader.read(str(write(tmp_path, [passage(text, [(0, 2)], [wrong])], "bad.json"))))
    assert reader.stats["answers_not_matching_offsets"] == 1 and (
        "bad.json: 1 answers whose text differs from the passage at their offsets (the text is used) (of 1 queries), "
        "e.g. query q1 answer 0: text 'Ann' differs from 'An' at [0, 1]" in caplog.text
    )
    assert instance["metadata"]["answers"] == ["Ann"] and instance["labels"].tensor.tolist() == [1]


def test_text_is_utf8_with_an_optional_bom_and_empty_files_are_named(reader, record_sample, tmp_path):
    path = tmp_path / "bom.json"
    path.write_bytes(b"\xef\xbb\xbf" + record_sample.read_bytes())
    assert len(list(reader.read(str(path)))) == 2
    path.write_bytes(b'{"data": [{"id": "p1", "passage": {"text": "Caf\xe9", "entities": []}, "qas": []}]}')
    with pytest.raises(ValueError, match=r"bom.json:1: not UTF-8 text"):
        list(reader.read(str(path)))
    write(tmp_path, [passage("Ann met Bob.", [(0, 2)], [])], "bom.json")
    with pytest.raises(ValueError, match="bom.json: no examples in the file"):
        list(reader.read(str(path)))


def test_reads_the_real_sample_with_mluke(tiny_mluke_dir, record_sample):
    """XLM-R's pair format and sentencepiece subwords: the same candidates and entities as with RoBERTa's BPE."""
    reader = LukeRecordReader(str(tiny_mluke_dir))
    first, second = list(reader.read(str(record_sample)))
    for instance in (first, second):
        meta = instance["metadata"].metadata
        ids = instance["word_ids"].tensor[0]
        starts, ends = instance["entity_start_positions"].tensor[0], instance["entity_end_positions"].tensor[0]
        candidates, mask = instance["entity_candidates"].tensor[0], instance["entity_attention_mask"].tensor[0]
        # The placeholder first (the tiny vocabulary has no "@": an <unk>), then each mention of a candidate.
        texts = ["@placeholder"] + [meta["candidates"][c] for c in candidates[1 : int(mask.sum())]]
        for start, end, text in zip(starts, ends, texts):
            assert decodes_to(reader.tokenizer, ids[start : end + 1], text), text
        ids = ids.tolist()
        query_end = ids.index(2)
        assert (
            ids[0] == 0 and ids[query_end : query_end + 2] == [2, 2] and ids[-1] == 2
        )  # <s> query </s></s> passage </s>
    assert [int(i["entity_attention_mask"].tensor.sum()) for i in (first, second)] == [1 + 21, 1 + 10]
    assert first["labels"].tensor.tolist() == [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0]
    assert (
        reader.stats["mentions"] == 31
        and reader.stats["candidates"] == 20
        and reader.stats["mentions_without_subwords"] == 0
    )
