"""luke_allennlp/resources/files.py: compressed task files, and JSON text with lone surrogates."""

import bz2
import gzip
import json

import pytest

from data_readers.luke_conll2003 import LukeConll2003Reader
from data_readers.luke_squad import LukeSquadReader
from luke_allennlp.resources.files import parse_json, read_lines


def test_gz_and_bz2_files_are_read_as_the_plain_file_and_misnamed_compressed_data_is_named(
    conll_slice, tmp_path, tiny_luke_dir
):
    raw = conll_slice.read_bytes()
    (tmp_path / "slice.txt.gz").write_bytes(gzip.compress(raw))
    (tmp_path / "slice.txt.bz2").write_bytes(bz2.compress(raw))
    (tmp_path / "slice.txt").write_bytes(gzip.compress(raw))  # gzip'd, the suffix dropped
    (tmp_path / "plain.gz").write_bytes(raw)
    reader = LukeConll2003Reader(str(tiny_luke_dir))
    expected = [i["word_ids"].tensor.tolist() for i in reader.read(str(conll_slice))]
    for name in ("slice.txt.gz", "slice.txt.bz2"):
        assert [i["word_ids"].tensor.tolist() for i in reader.read(str(tmp_path / name))] == expected
    with pytest.raises(ValueError) as raised:
        list(reader.read(str(tmp_path / "slice.txt")))
    assert str(raised.value) == (
        f"{tmp_path / 'slice.txt'}: gzip-compressed data, not text: name it with .gz to read it compressed, or "
        "decompress it"
    )
    with pytest.raises(ValueError, match=r"plain.gz: not gzip data, or truncated, as its name says \(Not a gzip"):
        read_lines(str(tmp_path / "plain.gz"))
    (tmp_path / "plain.xz").write_bytes(raw)  # (lzma's error is no OSError: it was a traceback)
    with pytest.raises(ValueError, match=r"plain.xz: not xz data, or truncated, as its name says \(Input format"):
        read_lines(str(tmp_path / "plain.xz"))


def test_a_lone_surrogate_in_json_is_refused_naming_the_line_and_field(shared_data, tmp_path, tiny_luke_dir):
    """A `\\ud800` escape decodes to half a UTF-16 pair: the fast tokenizer failed with a bare TypeError, and SQuAD
    blamed the answer offset. The real SQuAD file, one question damaged."""
    text = (shared_data / "squad1.1" / "dev-v1.1.json").read_text()
    data = json.loads(text)
    data["data"] = data["data"][:1]
    data["data"][0]["paragraphs"][1]["qas"][0]["question"] += " \ud800"
    path = tmp_path / "dev.json"
    path.write_text(json.dumps(data, indent=1))  # (ensure_ascii: the surrogate written as the escape \ud800)
    line = 1 + path.read_text().split("\\ud800")[0].count("\n")
    with pytest.raises(ValueError) as raised:
        list(LukeSquadReader(str(tiny_luke_dir)).read(str(path)))
    assert str(raised.value) == (
        f"{path}:{line}: field data[0].paragraphs[1].qas[0].question: \\ud800 is half of a UTF-16 surrogate pair, not "
        "a character (the text is damaged; replace it, e.g. with \\ufffd)"
    )
    assert parse_json('{"t": "\\ud83d\\ude00 \\\\ud800"}', "x") == {"t": "\U0001f600 \\ud800"}  # a pair; a backslash
    with pytest.raises(ValueError, match=r"^in.jsonl:3: field words\[1\]: \\udc00 is half"):
        parse_json('{"words": ["a", "\\udc00"]}', "in.jsonl:3")


def test_a_predictor_input_with_a_lone_surrogate_is_refused():
    from luke_allennlp.predictors.luke_predictor import LukePredictor

    with pytest.raises(ValueError, match=r"^field text: \\ud800 is half of a UTF-16 surrogate pair"):
        LukePredictor.load_line(None, '{"text": "a \\ud800 b"}')  # type: ignore[arg-type]
