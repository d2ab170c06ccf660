import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from allennlp.commands.predict import _PredictManager
from allennlp.commands.train import train_model_from_file
from allennlp.models.archival import load_archive
from allennlp.predictors import Predictor

from luke_allennlp.predictors.luke_span_ner import split_words
from tests.conftest import REPO_ROOT


@pytest.fixture(scope="module")
def archive(tiny_luke_dir, conll_slice, tmp_path_factory):
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("MODEL_NAME", str(tiny_luke_dir))
        mp.setenv("TRAIN_DATA_PATH", str(conll_slice))
        mp.setenv("VALIDATION_DATA_PATH", str(conll_slice))
        out = tmp_path_factory.mktemp("ner")
        overrides = {"trainer.num_epochs": 1, "dataset_reader.max_seq_length": 64}
        train_model_from_file(
            str(REPO_ROOT / "configs/ner/conll2003.jsonnet"), str(out), overrides=json.dumps(overrides)
        )
        return out / "model.tar.gz"


@pytest.fixture(scope="module")
def predictor(archive):
    return Predictor.from_archive(load_archive(str(archive)))


def test_split_words():
    assert split_words('U.S.-based Acme Corp. said: "no".') == [
        "U.S.-based",
        "Acme",
        "Corp",
        ".",
        "said",
        ":",
        '"',
        "no",
        '"',
        ".",
    ]


def test_predicts_raw_sentences_and_words(predictor):
    assert type(predictor).__name__ == "LukeSpanNerPredictor"  # the model's default predictor
    result = predictor.predict_json({"sentence": "Peter Blackburn visited Brussels ."})
    assert set(result) == {"words", "tags", "truncated", "entities"} and result["truncated"] == 0
    assert result["words"] == ["Peter", "Blackburn", "visited", "Brussels", "."]
    assert len(result["tags"]) == 5 and all(t == "O" or t[:2] in ("B-", "I-") for t in result["tags"])
    for entity in result["entities"]:
        assert set(entity) == {"start", "end", "text", "type", "score"} and 0 < entity["score"] <= 1
        assert entity["text"] == " ".join(result["words"][entity["start"] : entity["end"]])
        assert result["tags"][entity["start"]] == "B-" + entity["type"]
    with_context = predictor.predict_json(
        {"words": ["Brussels", "again"], "left_context": ["Peter went home ."], "right_context": [["Bye"]]}
    )
    assert with_context["words"] == ["Brussels", "again"] and len(with_context["tags"]) == 2
    with pytest.raises(ValueError, match="sentence"):
        predictor.predict_json({"text": "no"})


def test_words_past_the_window_have_no_tag_and_are_counted(predictor, caplog):
    """A sentence longer than max_seq_length (64 subwords here): the words the model never saw were tagged "O", and
    only the log said so; they have no tag now (`tags` is shorter than `words`), and `truncated` counts them."""
    words = ["Peter", "Blackburn", "visited", "Brussels"] + ["and", "then", "Paris"] * 30
    for result in [predictor.predict_json({"words": words}), predictor.predict_batch_json([{"words": words}])[0]]:
        seen = len(words) - result["truncated"]
        assert 0 < seen < len(words) and len(result["tags"]) == seen and result["words"] == words
        assert all(entity["end"] <= seen for entity in result["entities"])
    assert f"truncated to {seen} words of {len(words)}" in caplog.text


def test_bad_inputs_get_clear_errors(predictor):
    with pytest.raises(ValueError, match='x: "words" must be a list of strings, not a string'):
        predictor.predict_json({"id": "x", "words": "Peter went home"})  # not split into characters
    with pytest.raises(ValueError, match=r'"left_context" must be a list of sentences'):
        predictor.predict_json({"sentence": "Hi .", "left_context": "Earlier text ."})
    with pytest.raises(ValueError, match="not valid JSON"):
        predictor.load_line('{"sentence": "Hi"\n')
    with pytest.raises(ValueError, match="expected a JSON object"):
        predictor.load_line('["Hi"]\n')


def test_predict_names_the_line_of_a_bad_input(predictor, tmp_path):
    """allennlp's predict loop (repaired in luke_allennlp_compat): file and line, blank lines counted."""
    path = tmp_path / "in.jsonl"
    good = json.dumps({"sentence": "Peter visited Brussels ."})

    def run(lines, batch_size):
        path.write_text("\n".join(lines) + "\n")
        _PredictManager(predictor, str(path), str(tmp_path / "out.jsonl"), batch_size, False, False).run()

    with pytest.raises(ValueError, match=r"in\.jsonl, line 4: not valid JSON"):
        run([good, "", good, '{"sentence": "Hi" "x"}'], 1)
    with pytest.raises(ValueError, match=r'in\.jsonl, line 3: input: "words" must be a list of strings'):
        run([good, good, json.dumps({"words": "abc"}), good], 4)  # the refused line of a batch is named
    run([good, "", good], 2)
    assert [len(json.loads(line)["words"]) for line in (tmp_path / "out.jsonl").read_text().splitlines()] == [4, 4]
    path.write_bytes(b"\xef\xbb\xbf" + f"{good}\n{good}\n".encode() + b'{"sentence": "M\xfcnchen"}\n')
    with pytest.raises(ValueError, match=r"in\.jsonl, line 3: not UTF-8 text"):  # a byte-order mark is no error
        _PredictManager(predictor, str(path), str(tmp_path / "out.jsonl"), 1, False, False).run()
    assert len((tmp_path / "out.jsonl").read_text().splitlines()) == 2


def test_the_allennlp_predict_command_names_the_line(archive, tmp_path):
    path = tmp_path / "in.jsonl"
    path.write_text(json.dumps({"sentence": "Peter visited Brussels ."}) + "\n\n" + json.dumps({"span": [0]}) + "\n")
    command = [str(Path(sys.executable).with_name("allennlp")), "predict", str(archive), str(path), "--silent",
               "--output-file", str(tmp_path / "out.jsonl")]  # fmt: skip
    result = subprocess.run(command, capture_output=True, text=True, cwd=REPO_ROOT, env=dict(os.environ), timeout=300)
    assert result.returncode == 1 and "Traceback" not in result.stderr  # one line (luke_allennlp_compat, repair 8)
    last = result.stderr.strip().splitlines()[-1]
    assert last == (
        f'allennlp: error: {path}, line 3: input: the input needs "sentence" (text) or "words" (a list of strings)'
    )


def test_evaluate_on_an_empty_file_fails_and_says_why(archive, tmp_path, monkeypatch, capsys):
    """It used to exit 0 without metrics. One line (luke_allennlp_compat, repair 8)."""
    from allennlp.commands import main

    (tmp_path / "empty.txt").write_text("-DOCSTART- -X- O O\n\n")
    monkeypatch.setattr(sys, "argv", ["allennlp", "evaluate", str(archive), str(tmp_path / "empty.txt")])
    with pytest.raises(SystemExit) as exited:
        main(prog="allennlp")
    assert exited.value.code == 1
    last = capsys.readouterr().err.splitlines()[-1]  # (after the reader's progress bar)
    assert last.startswith(f"allennlp: error: {tmp_path / 'empty.txt'}: no sentences in the file")


def test_japanese_raw_text_is_split_into_characters(tiny_luke_japanese_dir, shared_data):
    """With a reader of `words_without_spaces` (LUKE-Japanese), a raw sentence (a real JSTS caption) is split into
    characters, not kept as one "word" (no spaces to split at), so every span of it is scored; entity texts join
    their characters without spaces."""
    from allennlp.data import Vocabulary

    from data_readers.luke_conll2003 import LukeConll2003Reader
    from luke_allennlp.models.luke_span_ner import LukeSpanNer
    from luke_allennlp.modules.token_embedders.luke_embedder import LukeEmbedder
    from luke_allennlp.predictors.luke_span_ner import LukeSpanNerPredictor

    sentence = json.loads((shared_data / "jglue" / "jsts-v1.3" / "valid-v1.3.json").open(encoding="utf-8").readline())[
        "sentence1"
    ]
    assert split_words(sentence) == sentence.replace("、", " 、 ").replace("。", " 。").split()  # clauses, not words
    words = split_words(sentence, without_spaces=True)
    assert "".join(words) == sentence and len(words) == len(sentence)
    assert split_words("F1の2026年シーズン、Tokyo.", without_spaces=True) == [
        "F1", "の", "2026", "年", "シ", "ー", "ズ", "ン", "、", "Tokyo", "."]  # fmt: skip
    vocab = Vocabulary()
    vocab.add_tokens_to_namespace(["O", "LOC", "PER"], "labels")
    model = LukeSpanNer(vocab, LukeEmbedder(str(tiny_luke_japanese_dir)))
    reader = LukeConll2003Reader(str(tiny_luke_japanese_dir), words_without_spaces=True, encoding="iob2")
    predictor = LukeSpanNerPredictor(model, reader)
    result = predictor.predict_json({"sentence": sentence, "left_context": ["男性がテニスをしています。"]})
    assert result["words"] == words and len(result["tags"]) == len(words) and result["truncated"] == 0
    for entity in result["entities"]:
        assert entity["text"] == sentence[entity["start"] : entity["end"]]
    output = {"words": ["東", "京", "へ"], "tags": ["B-LOC", "I-LOC", "O"], "truncated": 0,
              "entities": [{"start": 0, "end": 2, "text": "東 京", "type": "LOC", "score": 0.9}]}  # fmt: skip
    assert predictor._outputs(output)["entities"][0]["text"] == "東京"
