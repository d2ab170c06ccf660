import json

import pytest

from luke_allennlp.resources.entity_vocab import EntityVocab


def test_ids_are_positions_and_special_entities_come_first():
    vocab = EntityVocab(["[PAD]", "[UNK]", "[MASK]", "Tokyo", "Osaka"], [0, 0, 0, 30, 20])
    assert (vocab.pad_id, vocab.unk_id, vocab.mask_id) == (0, 1, 2)
    assert len(vocab) == 5
    assert vocab["Osaka"] == 4 and vocab.title(3) == "Tokyo" and vocab.count(3) == 30
    assert "Tokyo" in vocab and "Kyoto" not in vocab
    assert vocab.get("Kyoto") is None and vocab.get("Kyoto", 1) == 1
    assert list(vocab) == ["[PAD]", "[UNK]", "[MASK]", "Tokyo", "Osaka"]
    with pytest.raises(KeyError, match="Kyoto"):
        vocab["Kyoto"]
    with pytest.raises(KeyError, match="id 5"):
        vocab.title(5)
    with pytest.raises(ValueError, match="2 titles but 1 counts"):
        EntityVocab(["a", "b"], [1])


def test_jsonl_round_trip_is_luke_format(tmp_path):
    vocab = EntityVocab(["[PAD]", "[UNK]", "[MASK]", "Tokyo"], [0, 0, 0, 7], language="ja")
    path = tmp_path / "vocab.jsonl"
    vocab.save_jsonl(path)
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert lines[3] == {"id": 3, "entities": [["Tokyo", "ja"]], "count": 7}
    loaded = EntityVocab.from_file(path)
    assert list(loaded) == list(vocab) and loaded.count(3) == 7 and loaded.language == "ja"


def test_reads_the_released_luke_tsv(shared_data):
    vocab = EntityVocab.from_file(shared_data / "entity_vocab" / "enwiki_20181220_entvocab_100.tsv")
    assert len(vocab) == 103
    assert (vocab.pad_id, vocab.unk_id, vocab.mask_id) == (0, 1, 2)
    assert vocab["United States"] == 4 and vocab.count(4) == 261500
    assert vocab.title(3) == "Race and ethnicity in the United States Census"


def test_tsv_round_trip_and_save_by_extension(tmp_path):
    vocab = EntityVocab(["[PAD]", "[UNK]", "[MASK]", "Star Wars: Episode IV", "AT&T"], [0, 0, 0, 3, 2])
    vocab.save(tmp_path / "v.tsv")
    assert (tmp_path / "v.tsv").read_text().splitlines()[3] == "Star Wars: Episode IV\t3"
    vocab.save(tmp_path / "v.jsonl")
    for name in ("v.tsv", "v.jsonl"):
        loaded = EntityVocab.from_file(tmp_path / name)
        assert list(loaded) == list(vocab) and [loaded.count(i) for i in range(5)] == [0, 0, 0, 3, 2]


def test_transformers_entity_vocab_json(tmp_path):
    vocab = EntityVocab(["[PAD]", "[UNK]", "[MASK]", "Tokyo"])
    assert vocab.to_transformers_json() == {"[PAD]": 0, "[UNK]": 1, "[MASK]": 2, "Tokyo": 3}
    path = tmp_path / "entity_vocab.json"
    path.write_text(json.dumps(vocab.to_transformers_json()))
    loaded = EntityVocab.from_file(path)
    assert loaded["Tokyo"] == 3 and loaded.mask_id == 2 and len(loaded) == 4


def test_multilingual_jsonl_maps_every_title_to_its_id(tmp_path):
    lines = [
        {"id": 0, "entities": [["[PAD]", "ja"], ["[PAD]", "en"]], "count": 0},
        {"id": 1, "entities": [["[UNK]", "ja"], ["[UNK]", "en"]], "count": 0},
        {"id": 2, "entities": [["[MASK]", "ja"], ["[MASK]", "en"]], "count": 0},
        {"id": 3, "entities": [["東京", "ja"], ["Tokyo", "en"]], "count": 9},
        {"id": 5, "entities": [["Apple", "fr"]], "count": 4},  # id 4 unused, as after mLUKE's cut
        {"id": 6, "entities": [["Apple", "en"]], "count": 2},
    ]
    path = tmp_path / "mluke.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    vocab = EntityVocab.from_file(path)
    assert len(vocab) == 7 and vocab.language is None
    assert vocab["東京"] == vocab["Tokyo"] == 3 and vocab.count(3) == 9
    assert vocab.title(3, language="en") == "Tokyo"
    assert vocab["Apple"] == 5 and vocab.get("Apple", language="en") == 6
    with pytest.raises(KeyError):
        vocab.title(4)
    assert vocab.to_transformers_json() == {
        "[PAD]": 0,
        "[UNK]": 1,
        "[MASK]": 2,
        "ja:東京": 3,
        "en:Tokyo": 3,
        "fr:Apple": 5,
        "en:Apple": 6,
    }
    vocab.save_jsonl(tmp_path / "again.jsonl")
    assert [json.loads(line) for line in (tmp_path / "again.jsonl").read_text().splitlines()] == lines


def test_mluke_entity_vocab_json_reads_language_prefixes(tmp_path, caplog):
    # MLukeTokenizer's entity_vocab.json: "language:title" keys, several per id; special entities without a language.
    mapping = {
        "[PAD]": 0,
        "[UNK]": 1,
        "[MASK]": 2,
        "en:Tokyo": 3,
        "ja:東京都": 3,
        "zh-yue:東京": 3,
        "en:Star Wars: Episode IV – A New Hope": 4,
        "de:Krieg der Sterne": 4,
        "simple:Apple": 5,
        "Ratio: A Film": 6,
        "[MASK2]": 7,
    }
    path = tmp_path / "entity_vocab.json"
    path.write_text(json.dumps(mapping, ensure_ascii=False))
    with caplog.at_level("WARNING"):
        vocab = EntityVocab.from_language_prefixed_json(path)
    assert len(vocab) == 8 and vocab.language is None
    assert vocab["Tokyo"] == vocab["東京都"] == vocab.get("東京", language="zh-yue") == 3
    # Only the text before the first colon is a language, and only a language code is one.
    assert (
        vocab.get("Star Wars: Episode IV – A New Hope", language="en") == 4
        and vocab.title(4, language="de") == "Krieg der Sterne"
    )
    assert vocab.get("Apple", language="simple") == 5
    assert vocab["Ratio: A Film"] == 6 and "1 titles have no language prefix, e.g. 'Ratio: A Film'" in caplog.text
    assert (vocab.pad_id, vocab.unk_id, vocab.mask_id, vocab["[MASK2]"]) == (0, 1, 2, 7)
    assert vocab.to_transformers_json() == mapping  # written back as read
    # Read as a plain transformers vocabulary, the prefix would stay part of the title.
    assert EntityVocab.from_file(path).get("Tokyo") is None


@pytest.mark.parametrize(
    "name, content, message",
    [
        ("bad.tsv", "[PAD]\t0\nno tab here\n", r"bad\.tsv, line 2: expected 'title<TAB>count'"),
        ("bad.tsv", "[PAD]\t0\nTokyo\tmany\n", r"bad\.tsv, line 2: the count 'many' is not an integer"),
        ("bad.jsonl", '{"id": 0, "entities": [["[PAD]", "en"]], "count": 0}\n{"id": 1}\n', r"bad\.jsonl, line 2"),
        (
            "bad.jsonl",
            '{"id": 0, "entities": [["a", "en"]], "count": 0}\n{"id": 0, "entities": [["b", "en"]], "count": 0}\n',
            r"bad\.jsonl, line 2: id 0 appears twice",
        ),
        ("bad.json", '{"Tokyo": "three"}', r"bad\.json: expected a JSON object mapping titles"),
        ("bad.json", '{"Tokyo": 3,\n "Osaka" 4}', r"bad\.json, line 2"),
    ],
)
def test_malformed_files_are_named_with_the_line(tmp_path, name, content, message):
    path = tmp_path / name
    path.write_text(content)
    with pytest.raises(ValueError, match=message):
        EntityVocab.from_file(path)


def test_format_is_detected_by_content_without_a_known_extension(tmp_path):
    vocab = EntityVocab(["[PAD]", "[UNK]", "[MASK]", "Tokyo"], [0, 0, 0, 5])
    vocab.save_jsonl(tmp_path / "jsonl.txt")
    vocab.save_tsv(tmp_path / "tsv.txt")
    (tmp_path / "hf.txt").write_text(json.dumps(vocab.to_transformers_json()))
    for name in ("jsonl.txt", "tsv.txt", "hf.txt"):
        assert EntityVocab.from_file(tmp_path / name)["Tokyo"] == 3
    assert EntityVocab.from_file(tmp_path / "jsonl.txt").count(3) == 5


def test_a_byte_order_mark_is_not_part_of_the_first_title(shared_data, tmp_path):
    path = tmp_path / "vocab.tsv"
    path.write_bytes(b"\xef\xbb\xbf" + (shared_data / "entity_vocab" / "enwiki_20181220_entvocab_100.tsv").read_bytes())
    vocab = EntityVocab.from_file(path)
    assert len(vocab) == 103 and vocab.pad_id == 0 and vocab.mask_id == 2
