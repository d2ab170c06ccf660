import json
import logging
import os
import subprocess
import sys
import types
import unicodedata
from pathlib import Path

import pytest
import torch
from allennlp.commands.predict import _PredictManager
from allennlp.data import Batch
from allennlp.models.archival import load_archive
from allennlp.predictors import Predictor

from luke_allennlp.data.inputs import tokenize_words
from luke_allennlp.predictors.luke_span_ner import fit_words, split_sentences, split_words
from luke_allennlp.wikipedia.sentences import RuleSentenceSplitter
from tests.conftest import REPO_ROOT
from tests.model_cases import train_archive


@pytest.fixture(scope="module")
def archive(tiny_luke_dir, conll_slice, tmp_path_factory):
    config, directory = REPO_ROOT / "configs/ner/conll2003.jsonnet", tmp_path_factory.mktemp("ner")
    return train_archive(config, tiny_luke_dir, conll_slice, directory, {"dataset_reader.max_seq_length": 64})


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


# Words whose combining marks `re`'s `\w` does not hold: decomposed (NFD) Latin, Devanagari vowel signs and virama,
# Thai vowel and tone marks, Arabic and Hebrew vowel points.
WORDS_WITH_MARKS = [
    unicodedata.normalize("NFD", "München Zoë Ærø"),
    "हिन्दी भाषा बोलते हैं",
    "เขา กิน ข้าว ที่ บ้าน",
    "العَرَبِيَّة لُغَة",
    "עִבְרִית שָׂפָה",
]


@pytest.mark.parametrize("text", WORDS_WITH_MARKS)
def test_words_keep_their_combining_marks(text):
    assert split_words(text) == text.split()
    assert split_words(text + ".") == [*text.split(), "."]
    assert split_words(text, without_spaces=True) == text.split()  # no kana or ideographs: the same words


def test_a_japanese_character_keeps_its_combining_voicing_mark():
    text = unicodedata.normalize("NFD", "ガイドが来た")  # ガ, ド and が as カ, ト and か + U+3099
    assert len(text) == 9 and split_words(text, without_spaces=True) == [
        text[0:2],
        "イ",
        text[3:5],
        text[5:7],
        "来",
        "た",
    ]


def test_split_sentences():
    text = 'Peter Blackburn visited Brussels. He met U.S. officials and Mr. Smith on Monday.\nThe EU said "yes." 3 more? Yes!'
    assert split_sentences(text) == [
        "Peter Blackburn visited Brussels.",
        "He met U.S. officials and Mr. Smith on Monday.",
        'The EU said "yes."',
        "3 more?",
        "Yes!",
    ]
    # ("no." is an abbreviation, as in "No. 5": 'said "no." 3 more?' stays one sentence)
    assert split_sentences("CRICKET - LEICESTERSHIRE WIN . Phil Simmons took four for 38 .\n\n") == [
        "CRICKET - LEICESTERSHIRE WIN .",
        "Phil Simmons took four for 38 .",
    ]
    # text without spaces: after 。！？ (not inside quotes the sentence goes on after), and at line breaks
    assert split_sentences("東京は晴れ。「大阪は雨！」と言った。\n次の文") == [
        "東京は晴れ。",
        "「大阪は雨！」と言った。",
        "次の文",
    ]


@pytest.mark.parametrize(
    "text,sentences",
    [
        # capitals of any script: Cyrillic (CoNLL-style tokens, the space before the full stop kept), Greek
        ("Иван Вазов е роден в Сопот . Той учи в Пловдив .", ["Иван Вазов е роден в Сопот .", "Той учи в Пловдив ."]),
        (
            "Роден е през 1850 г. в Сопот. Виж т.нар. „Под игото“.",
            ["Роден е през 1850 г. в Сопот.", "Виж т.нар. „Под игото“."],
        ),
        ("Η Αθήνα είναι πρωτεύουσα. Έχει πολλούς κατοίκους.", ["Η Αθήνα είναι πρωτεύουσα.", "Έχει πολλούς κατοίκους."]),
        # caseless scripts: Devanagari's danda, Arabic's question mark, Chinese full stops without spaces
        ("भारत एक देश है। इसकी राजधानी दिल्ली है।", ["भारत एक देश है।", "इसकी राजधानी दिल्ली है।"]),
        ("هل هذا صحيح؟ نعم، هذا صحيح.", ["هل هذا صحيح؟", "نعم، هذا صحيح."]),
        ("北京是首都。上海也很大！对吗？", ["北京是首都。", "上海也很大！", "对吗？"]),
    ],
    ids=["bg", "bg-abbreviations", "el", "hi", "ar", "zh"],
)
def test_split_sentences_in_every_script(text, sentences):
    assert split_sentences(text) == sentences


def test_a_german_document_keeps_its_ordinals():
    assert split_sentences("Am 3. Oktober 1990 kam er. Im 19. Jahrhundert wuchs sie.", "de") == [
        "Am 3. Oktober 1990 kam er.",
        "Im 19. Jahrhundert wuchs sie.",
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


def test_no_entity_runs_across_a_sentence_boundary_of_a_bulgarian_document(predictor):
    """A raw-text document in Cyrillic is split before its capitals (it was one sentence, and an entity ran across
    "Сопот . Той"): every entity lies in one sentence, each spans only its sentence's words."""
    document = "Иван Вазов е роден в Сопот . Той учи в Пловдив . Днес в София има музей ."
    result = predictor.predict_json({"document": document})
    assert [s["words"] for s in result["sentences"]] == [
        ["Иван", "Вазов", "е", "роден", "в", "Сопот", "."],
        ["Той", "учи", "в", "Пловдив", "."],
        ["Днес", "в", "София", "има", "музей", "."],
    ]
    for sentence in result["sentences"]:
        assert len(sentence["tags"]) == len(sentence["words"])
        for entity in sentence["entities"]:
            assert 0 <= entity["start"] < entity["end"] <= len(sentence["words"])
            assert entity["text"] == " ".join(sentence["words"][entity["start"] : entity["end"]])


def test_a_thai_document_is_split_as_the_corpus_builder_splits_it(shared_data):
    """Thai has no sentence punctuation: a raw-text Thai document (two XQuAD paragraphs, a line each) is split by
    PyThaiNLP's segmenter, as the corpus builder's rules split it (it was one sentence a line)."""
    data = json.loads((shared_data / "xquad" / "xquad.th.json").read_text(encoding="utf-8-sig"))["data"]
    paragraphs = [paragraph["context"] for paragraph in data[-1]["paragraphs"][-2:]]
    expected = [text[s:e] for text in paragraphs for s, e in RuleSentenceSplitter("th")(text)]
    assert split_sentences("\n".join(paragraphs)) == expected and len(expected) > 2


DOCUMENT = ["Peter Blackburn visited Brussels .", "The European Commission said on Thursday .", "Germany agreed ."]


def test_context_fills_the_window_and_entities_stay_in_the_sentence(predictor):
    """Raw text before and after a sentence is its document context: the input window holds its subwords around the
    sentence's, no span reaches into it, and the model's scores of the sentence's spans change with it."""
    tokenizer = predictor._dataset_reader.tokenizer

    def subwords(text):
        return tokenizer(split_words(text), is_split_into_words=True, add_special_tokens=False)["input_ids"]

    [alone] = predictor._json_to_instances({"sentence": DOCUMENT[1]})
    inputs = {"sentence": DOCUMENT[1], "left_context": DOCUMENT[0], "right_context": DOCUMENT[2:]}
    [in_context] = predictor._json_to_instances(inputs)
    assert alone["word_ids"].tensor[1:-1].tolist() == subwords(DOCUMENT[1])
    assert in_context["word_ids"].tensor[1:-1].tolist() == subwords(" ".join(DOCUMENT))  # (all fits in 64)
    words = split_words(DOCUMENT[1])
    for instance in (alone, in_context):
        assert instance["metadata"]["words"] == words and int(instance["metadata"]["spans"][:, 1].max()) == len(words)

    def span_logits(instance):
        batch = Batch([instance])
        batch.index_instances(predictor._model.vocab)
        with torch.no_grad():
            return predictor._model(**batch.as_tensor_dict())["span_logits"]

    assert not torch.allclose(span_logits(alone), span_logits(in_context), atol=1e-4)
    result = predictor.predict_json(inputs)
    assert result["words"] == words and len(result["tags"]) == len(words)
    assert all(0 <= entity["start"] < entity["end"] <= len(words) for entity in result["entities"])


def test_a_document_is_predicted_sentence_by_sentence_in_its_context(predictor):
    """`{"document": ...}` (raw text, split into sentences, or a list of sentences) gives each sentence what the
    sentence with the rest of the document as its context gives."""
    expected = [
        predictor.predict_json({"sentence": s, "left_context": DOCUMENT[:i], "right_context": DOCUMENT[i + 1 :]})
        for i, s in enumerate(DOCUMENT)
    ]
    as_text = predictor.predict_json({"document": " ".join(DOCUMENT)})
    [as_list, as_words] = predictor.predict_batch_json(
        [{"document": DOCUMENT}, {"document": [split_words(s) for s in DOCUMENT]}]
    )
    for result in (as_text, as_list, as_words):
        assert set(result) == {"sentences"} and len(result["sentences"]) == len(DOCUMENT)
        for got, want in zip(result["sentences"], expected):
            assert (got["words"], got["tags"], got["truncated"]) == (want["words"], want["tags"], want["truncated"])
            assert [(e["start"], e["end"], e["type"]) for e in got["entities"]] == [
                (e["start"], e["end"], e["type"]) for e in want["entities"]
            ]
            assert [e["score"] for e in got["entities"]] == pytest.approx([e["score"] for e in want["entities"]])
    ids = [instance["metadata"]["id"] for instance in predictor._json_to_instances({"id": "d", "document": DOCUMENT})]
    assert ids == ["d#1", "d#2", "d#3"]


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
    with pytest.raises(ValueError, match=r'x: "left_context" must be raw text or a list of sentences, not int'):
        predictor.predict_json({"id": "x", "sentence": "Hi .", "left_context": 3})  # (raw text is context now)
    with pytest.raises(ValueError, match=r'sentence 2 of "right_context" must be text or a list of words, not dict'):
        predictor.predict_json({"sentence": "Hi .", "right_context": ["Fine .", {"text": "no"}]})
    with pytest.raises(ValueError, match=r'd: "document" must be raw text or a list of sentences, not dict'):
        predictor.predict_json({"id": "d", "document": {"text": "Peter went home ."}})
    with pytest.raises(ValueError, match=r'sentence 1 of "document" must be a list of strings, not list'):
        predictor.predict_json({"document": [["Peter", ["went"]]]})
    with pytest.raises(ValueError, match="d: sentence 2 of the document has no words"):
        predictor.predict_json({"id": "d", "document": ["Peter went home .", " "]})
    with pytest.raises(ValueError, match="the document has no sentences"):
        predictor.predict_json({"document": " \n "})
    with pytest.raises(ValueError, match='"document" is the whole text: it takes no sentence, left_context'):
        predictor.predict_json({"document": "Peter went home .", "sentence": "Peter .", "left_context": "Hi ."})
    with pytest.raises(ValueError, match="not valid JSON"):
        predictor.load_line('{"sentence": "Hi"\n')
    with pytest.raises(ValueError, match="expected a JSON object"):
        predictor.load_line('["Hi"]\n')


def test_predict_names_the_line_of_a_bad_input(predictor, tmp_path):
    """allennlp's predict loop (luke_allennlp.cli.predict_errors): file and line, blank lines counted."""
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
    document = json.dumps({"document": "Peter visited Brussels. He went home."})
    with pytest.raises(ValueError, match=r'in\.jsonl, line 2: input: "document" must be raw text or a list of'):
        run([document, json.dumps({"document": 3}), good], 3)  # a good document before it is not blamed
    run([document, good], 2)
    rows = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert [[s["words"] for s in rows[0]["sentences"]], rows[1]["words"]] == [
        [["Peter", "visited", "Brussels", "."], ["He", "went", "home", "."]],
        ["Peter", "visited", "Brussels", "."],
    ]
    path.write_bytes(b"\xef\xbb\xbf" + f"{good}\n{good}\n".encode() + b'{"sentence": "M\xfcnchen"}\n')
    with pytest.raises(ValueError, match=r"in\.jsonl, line 3: not UTF-8 text"):  # a byte-order mark is no error
        _PredictManager(predictor, str(path), str(tmp_path / "out.jsonl"), 1, False, False).run()
    assert len((tmp_path / "out.jsonl").read_text().splitlines()) == 2


def test_the_allennlp_predict_command_names_the_line(archive, tmp_path):
    path = tmp_path / "in.jsonl"
    path.write_text(json.dumps({"sentence": "Peter visited Brussels ."}) + "\n\n" + json.dumps({"span": [0]}) + "\n")
    command = [
        str(Path(sys.executable).with_name("allennlp")),
        "predict",
        str(archive),
        str(path),
        "--silent",
        "--output-file",
        str(tmp_path / "out.jsonl"),
    ]
    result = subprocess.run(command, capture_output=True, text=True, cwd=REPO_ROOT, env=dict(os.environ), timeout=300)
    assert result.returncode == 1 and "Traceback" not in result.stderr  # one line (luke_allennlp.cli.user_errors)
    # The good line's prediction is kept (the file was left empty, its buffer never written); the blank line counted.
    assert [json.loads(line)["words"] for line in (tmp_path / "out.jsonl").read_text().splitlines()] == [
        ["Peter", "visited", "Brussels", "."]
    ]
    assert f"{path}: 1 blank lines skipped" in result.stderr
    last = result.stderr.strip().splitlines()[-1]
    assert last == (
        f'allennlp: error: {path}, line 3: input: the input needs "sentence" (text), "words" (a list of strings) or '
        '"document" (text or a list of sentences)'
    )


def test_predict_reads_compressed_inputs_and_names_compressed_data_under_another_name(
    archive, predictor, tmp_path, monkeypatch, capsys
):
    """`.gz`, `.bz2` and `.xz` inputs are decompressed as they are read, standard input too; compressed data under
    another name, or not what its name says, is one line naming the file (it was "not UTF-8 text", or a traceback)."""
    import bz2
    import gzip
    import io
    import lzma

    from allennlp.commands import main

    text = (
        json.dumps({"sentence": "Peter visited Brussels ."}) + "\n\n" + json.dumps({"words": ["Hi", "."]}) + "\n"
    ).encode()
    plain, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    plain.write_bytes(text)

    def predict(path, via_main=False):
        out.unlink(missing_ok=True)
        if not via_main:
            _PredictManager(predictor, str(path), str(out), 2, False, False).run()
            return [json.loads(line)["words"] for line in out.read_text().splitlines()]
        monkeypatch.setattr(sys, "argv", ["allennlp", "predict", str(archive), str(path), "--silent", "--output-file", str(out)])  # fmt: skip
        with pytest.raises(SystemExit) as exited:
            main(prog="allennlp")
        return exited.value.code, capsys.readouterr().err.strip().splitlines()[-1]

    expected = [["Peter", "visited", "Brussels", "."], ["Hi", "."]]
    for suffix, compress in ((".gz", gzip.compress), (".bz2", bz2.compress), (".xz", lzma.compress)):
        (tmp_path / f"in.jsonl{suffix}").write_bytes(compress(text))
        assert predict(tmp_path / f"in.jsonl{suffix}") == expected
    monkeypatch.setattr(sys, "stdin", types.SimpleNamespace(buffer=io.BufferedReader(io.BytesIO(gzip.compress(text)))))
    assert predict("-") == expected
    misnamed = tmp_path / "misnamed.jsonl"
    misnamed.write_bytes(gzip.compress(text))
    assert predict(misnamed, via_main=True) == (1, (
        f"allennlp: error: {misnamed}: gzip-compressed data, not text: name it with .gz to read it compressed, or "
        "decompress it"
    ))  # fmt: skip
    (tmp_path / "cut.jsonl.gz").write_bytes(gzip.compress(text)[:30])
    with pytest.raises(ValueError, match=r"cut\.jsonl\.gz: not gzip data, or truncated, as its name says \(Compressed"):
        predict(tmp_path / "cut.jsonl.gz")
    (tmp_path / "plain.jsonl.xz").write_bytes(text)
    with pytest.raises(ValueError, match=r"plain\.jsonl\.xz: not xz data, or truncated, as its name says"):
        predict(tmp_path / "plain.jsonl.xz")


def test_the_allennlp_predict_command_stopped_by_sigterm_keeps_what_it_wrote(archive, tmp_path):
    """The real command, sent SIGTERM once it has printed its first prediction: one line saying what was written, the
    predictions written before the signal kept whole in `OUT.partial` (nothing left under the output's name)."""
    import signal

    path, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    path.write_text("".join(json.dumps({"sentence": f"Peter visited Brussels {i} ."}) + "\n" for i in range(5000)))
    command = [str(Path(sys.executable).with_name("allennlp")), "predict", str(archive), str(path), "--output-file", str(out)]  # fmt: skip
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}  # (each prediction is printed as it is made)
    # stdout read to its end through one buffer (`communicate` would skip the lines it had read ahead), stderr to a
    # file (a pipe left unread would fill with the logs)
    with open(tmp_path / "stderr.txt", "w") as stderr:
        run = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=stderr, text=True, cwd=REPO_ROOT, env=env)
        printed = 0
        for line in run.stdout:
            if line.startswith("prediction:"):
                printed += 1
                if printed == 1:
                    run.send_signal(signal.SIGTERM)
        run.wait(timeout=300)
    err = (tmp_path / "stderr.txt").read_text()
    assert run.returncode == 128 + signal.SIGTERM and "Traceback" not in err, err[-3000:]
    assert err.strip().splitlines()[-1] == (
        f"allennlp: error: predict interrupted by SIGTERM while predicting; what was written so far is in "
        f"{out}.partial (incomplete): run the command again"
    )
    kept = [json.loads(line)["words"] for line in Path(f"{out}.partial").read_text().splitlines()]
    assert not out.exists() and 1 <= printed <= 5000 and len(kept) in (printed - 1, printed)  # (printed, then written)
    assert kept == [["Peter", "visited", "Brussels", str(i), "."] for i in range(len(kept))]


def test_evaluate_interrupted_by_ctrl_c_keeps_the_predictions_written(archive, conll_slice, tmp_path, monkeypatch,
                                                                      capsys):  # fmt: skip
    """Ctrl-C (SIGINT, sent from inside the third batch's forward) during `allennlp evaluate`: one line, status 130,
    and the first two batches' predictions in `FILE.partial` (allennlp left them in the file's buffer: it was empty)."""
    import signal

    from allennlp.commands import main

    from luke_allennlp.models.luke_span_ner import LukeSpanNer

    forward, calls = LukeSpanNer.forward, []

    def interrupted_forward(self, *args, **kwargs):
        calls.append(1)
        if len(calls) == 3:
            os.kill(os.getpid(), signal.SIGINT)
        return forward(self, *args, **kwargs)

    monkeypatch.setattr(LukeSpanNer, "forward", interrupted_forward)
    predictions = tmp_path / "predictions.jsonl"
    monkeypatch.setattr(sys, "argv", ["allennlp", "evaluate", str(archive), str(conll_slice), "--batch-size", "2",
                                      "--predictions-output-file", str(predictions)])  # fmt: skip
    with pytest.raises(SystemExit) as exited:
        main(prog="allennlp")
    assert exited.value.code == 128 + signal.SIGINT
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"allennlp: error: evaluate interrupted by SIGINT while evaluating; what was written so far is in "
        f"{predictions}.partial (incomplete): run the command again"
    )
    kept = [json.loads(line) for line in Path(f"{predictions}.partial").read_text().splitlines()]
    assert not predictions.exists() and len(kept) == 4 and all("tags" in row or "entities" in row for row in kept)


def test_evaluate_on_an_empty_file_fails_and_says_why(archive, tmp_path, monkeypatch, capsys):
    """It used to exit 0 without metrics. One line (luke_allennlp.cli.user_errors)."""
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
    torch.manual_seed(0)
    model = LukeSpanNer(vocab, LukeEmbedder(str(tiny_luke_japanese_dir))).eval()
    with torch.no_grad():
        model.classifier.bias[model.labels.index("LOC")] = 100.0  # every span LOC: entities are sure to be found
    reader = LukeConll2003Reader(str(tiny_luke_japanese_dir), words_without_spaces=True, encoding="iob2")
    predictor = LukeSpanNerPredictor(model, reader)
    result = predictor.predict_json({"sentence": sentence, "left_context": ["男性がテニスをしています。"]})
    assert result["words"] == words and len(result["tags"]) == len(words) and result["truncated"] == 0
    # The model joins the texts (so do `allennlp evaluate --predictions-output-file` and `predict`).
    batch = Batch([reader.text_to_instance(words)])
    batch.index_instances(vocab)
    readable = model.make_output_human_readable(model(**batch.as_tensor_dict()))
    for entities in (result["entities"], readable["entities"][0]):
        assert any(entity["end"] - entity["start"] > 1 for entity in entities)
        for entity in entities:
            assert entity["text"] == sentence[entity["start"] : entity["end"]]


def test_entities_of_text_with_combining_marks_are_whole_words(predictor):
    """An entity's span is in whole words: "München" (decomposed) is one word, not "Mu", "̈", "nchen"."""
    model = predictor._model
    bias = model.classifier.bias.detach().clone()
    try:
        with torch.no_grad():
            model.classifier.bias[model.labels.index("LOC")] = 100.0  # every span LOC: entities are sure to be found
        sentence = unicodedata.normalize("NFD", "Zoë flog nach München .")
        result = predictor.predict_json({"sentence": sentence})
    finally:
        with torch.no_grad():
            model.classifier.bias.copy_(bias)
    words = sentence.split()
    assert result["words"] == words and len(result["tags"]) == len(words)
    assert result["entities"] and all(e["text"] == " ".join(words[e["start"] : e["end"]]) for e in result["entities"])


SENTENCES = [
    "Peter Blackburn visited Brussels on Monday to meet officials of the European Commission .",
    "Hi .",
    "EU rejects German call to boycott British lamb .",
    "Japan began the defence of their Asian Cup title with a lucky 2-1 win against Syria in a Group C match .",
    "Nadim Ladki",
    "AL-AIN , United Arab Emirates 1996-12-06",
    "But China saw their luck desert them in the second match of the group .",
]


def test_predict_batches_inputs_of_similar_length_and_writes_them_in_input_order(predictor, tmp_path, monkeypatch):
    path, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    path.write_text("".join(json.dumps({"sentence": s}) + "\n" for s in SENTENCES))
    alone = [predictor.predict_json({"sentence": s}) for s in SENTENCES]
    batches = []
    predict_batch = predictor.predict_batch_json
    monkeypatch.setattr(predictor, "predict_batch_json", lambda b: batches.append(b) or predict_batch(b))
    _PredictManager(predictor, str(path), str(out), 3, False, False).run()
    written = [json.loads(line) for line in out.read_text().splitlines()]
    for got, expected in zip(written, json.loads(json.dumps(alone)), strict=True):  # (scores: to float rounding)
        scores = [entity.pop("score") for entity in expected["entities"]]
        assert [entity.pop("score") for entity in got["entities"]] == pytest.approx(scores, abs=1e-6)
        assert got == expected
    lengths = [[len(inputs["sentence"]) for inputs in batch] for batch in batches]
    assert lengths == [sorted(len(s) for s in SENTENCES)[i : i + 3] for i in (0, 3, 6)]


def test_the_allennlp_predict_command_reuses_the_archive_s_extraction(archive, predictor, tmp_path):
    """The real command on an archive this process loaded already (the `predictor` fixture): it finds the archive's
    extraction in the cache (no decompression), and writes the predictions in input order (batched by length)."""
    path, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    path.write_text("".join(json.dumps({"sentence": s}) + "\n" for s in SENTENCES))
    command = [str(Path(sys.executable).with_name("allennlp")), "predict", str(archive), str(path), "--silent"]
    command += ["--batch-size", "3", "--output-file", str(out)]
    result = subprocess.run(command, capture_output=True, text=True, cwd=REPO_ROOT, env=dict(os.environ), timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "extracted into" not in result.stderr and "its extraction in the archive cache is used" in result.stderr
    written = [json.loads(line)["words"] for line in out.read_text().splitlines()]
    assert written == [predictor.predict_json({"sentence": s})["words"] for s in SENTENCES]


def _xquad_paragraphs(shared_data, language):
    data = json.loads((shared_data / "xquad" / f"xquad.{language}.json").read_text(encoding="utf-8-sig"))["data"]
    return [paragraph["context"] for article in data for paragraph in article["paragraphs"]]


def _seen_words(predictor, words):
    """How many of a sentence's words fit the model's window: those whose subwords end within `max_words`."""
    reader = predictor._dataset_reader
    return int((tokenize_words(reader.tokenizer, words).ends <= reader.max_words).sum())


def test_thai_documents_are_split_into_dictionary_words_and_every_word_is_tagged_or_counted(predictor, shared_data):
    """XQuAD's Thai paragraphs as raw-text documents: their words are split by PyThaiNLP's dictionary (Thai spaces
    end phrases, and runs of up to 112 characters had more subwords than a 64-subword sequence holds: the first
    word alone did not fit, and the document failed). Every word now has a tag or is counted in `truncated` (many:
    a Thai character is 3 subwords to this tiny byte-level tokenizer), and no character is lost."""
    paragraphs = _xquad_paragraphs(shared_data, "th")[::6]  # 5 of the 30
    results = predictor.predict_batch_json([{"id": f"th{i}", "document": text} for i, text in enumerate(paragraphs)])
    for text, result in zip(paragraphs, results):
        sentences = result["sentences"]
        assert "".join(w for s in sentences for w in s["words"]) == "".join(text.split())
        for sentence in sentences:
            seen = _seen_words(predictor, sentence["words"])
            assert seen > 0 and (len(sentence["tags"]), sentence["truncated"]) == (seen, len(sentence["words"]) - seen)
    words = [w for result in results for s in result["sentences"] for w in s["words"]]
    assert len(words) > 500 and max(len(w) for w in words) <= 20  # words, not space-separated runs
    assert split_words("กรุงเทพมหานครเป็นเมืองหลวง") == ["กรุงเทพมหานคร", "เป็น", "เมืองหลวง"]


def test_a_word_longer_than_a_sequence_is_cut_into_pieces_with_a_count(predictor, shared_data, caplog):
    """A run of Chinese without spaces is one word to a model that splits at spaces: one of more subwords than
    max_seq_length allows made the document fail. It is cut into pieces that fit (at graphemes, nothing lost), and
    a warning counts them; the sentence's words past the window are counted in `truncated` as any other."""
    reader = predictor._dataset_reader
    text = _xquad_paragraphs(shared_data, "zh")[10]  # a sentence opens with 26 characters before a comma
    run = max(split_words(text), key=len)
    assert len(tokenize_words(reader.tokenizer, [run]).ids) > reader.max_words  # (the case)
    with caplog.at_level(logging.WARNING, logger="luke_allennlp.predictors.luke_span_ner"):
        result = predictor.predict_json({"id": "zh", "document": text})
    for sentence in result["sentences"]:
        seen = _seen_words(predictor, sentence["words"])
        assert seen > 0 and (len(sentence["tags"]), sentence["truncated"]) == (seen, len(sentence["words"]) - seen)
    assert "".join(w for s in result["sentences"] for w in s["words"]) == "".join(text.split())
    pieces = fit_words([run], reader.tokenizer, reader.max_words, "x")
    assert len(pieces) > 1 and "".join(pieces) == run
    assert all(len(tokenize_words(reader.tokenizer, [p]).ids) <= reader.max_words for p in pieces)
    assert "zh: " in caplog.text and "cut into" in caplog.text
