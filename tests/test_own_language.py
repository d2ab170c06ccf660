"""
docs/own-language.md's block, run as written on a Bulgarian dump in the real export format
(tests/wikipedia/bulgarian_dump.py) with Bulgarian NER sentences in CoNLL-2003's columns as the user's `bg-ner/`
files: `build-tokenizer` (unigram) -> a tiny RoBERTa -> entity vocabulary -> corpus -> stage 1 -> stage 2 ->
`export-luke` -> NER fine-tuning -> entity cloze with the archive (`allennlp predict`) and with the export (Python).

The block's commands run in this process through allennlp's own entry point (as tests/test_mluke_pipeline.py's: ten
`allennlp` processes would spend a minute importing); `echo` lines run in bash, `python -c` code here. Also the
byte-level BPE route, whose `LukeTokenizer` export keeps the language in `tokenizer_config.json` (its entity titles
have no prefix): an entity cloze on it answers in Bulgarian.
"""

import contextlib
import io
import json
import os
import re
import shlex
import subprocess
from pathlib import Path
from typing import Dict, List

import pytest

from luke_allennlp.resources.tokenization import load_fast_tokenizer
from luke_allennlp.wikipedia.text import article_texts
from tests.conftest import ALLENNLP, REPO_ROOT
from tests.test_docs import BLOCKS, commands
from tests.test_mluke_pipeline import allennlp
from tests.wikipedia.bulgarian_dump import ARTICLES, NER_SENTENCES, write_bulgarian_dump, write_bulgarian_ner

(BLOCK,) = [b for b in BLOCKS if b.name == "own-language"]
ASSIGNMENT = re.compile(r"^([A-Za-z_]\w*)=(.*)$", re.DOTALL)


def run_block(code: str, checkout: Path) -> str:
    """Runs a bash block's commands in `checkout`: `allennlp ...` (with `NAME=value` prefixes) through allennlp's entry
    point in this process, `python -c CODE` here, anything else in bash; `$NAME` is what an assignment line set.
    Returns what they printed."""
    variables: Dict[str, str] = {}
    printed: List[str] = []
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.chdir(checkout)
        for command in commands(code):
            words = [re.sub(r"\$(\w+)", lambda m: variables[m.group(1)], word) for word in shlex.split(command)]
            env = {}
            while words and ASSIGNMENT.match(words[0]):
                name, value = ASSIGNMENT.match(words.pop(0)).groups()
                env[name] = value
            if not words:  # DUMP=...
                variables.update(env)
            elif words[0] == "allennlp":
                printed.append(allennlp(*words[1:], **env))
            elif words[:2] == ["python", "-c"]:
                output = io.StringIO()
                with contextlib.redirect_stdout(output):
                    exec(compile(words[2], "<docs block>", "exec"), {})
                printed.append(output.getvalue())
            else:
                result = subprocess.run(
                    ["bash", "-euo", "pipefail", "-c", command],
                    env={**os.environ, **variables, **env},
                    capture_output=True,
                    text=True,
                    check=True,
                )
                printed.append(result.stdout)
    return "".join(printed)


@pytest.fixture(scope="module")
def own_language(tmp_path_factory):
    checkout = tmp_path_factory.mktemp("own-language")
    (checkout / "configs").symlink_to(REPO_ROOT / "configs")
    dump = write_bulgarian_dump(checkout / "bgwiki-latest-pages-articles.xml.bz2")
    (checkout / "bg-ner").mkdir()
    write_bulgarian_ner(checkout / "bg-ner" / "train.txt")
    write_bulgarian_ner(checkout / "bg-ner" / "dev.txt", NER_SENTENCES[:4])
    printed = run_block(BLOCK.code, checkout)
    return {"checkout": checkout, "output": checkout / "output" / "bg", "dump": dump, "printed": printed}


def test_the_block_runs_from_dump_to_cloze(own_language):
    output = own_language["output"]
    corpus = json.loads((output / "corpus" / "metadata.json").read_text(encoding="utf-8"))
    assert corpus["language"] == "bg" and corpus["pages"] == len(ARTICLES) and corpus["entities"] == 33
    exported = json.loads((output / "luke" / "config.json").read_text())
    assert exported["architectures"] == ["LukeForMaskedLM"]
    entities = json.loads((output / "luke" / "entity_vocab.json").read_text(encoding="utf-8"))
    assert {"bg:Сопот", "bg:Иван Вазов", "bg:Стара планина"} <= set(entities)  # the redirects' targets
    metrics = json.loads((output / "ner" / "dev_metrics.json").read_text())
    assert 0.0 <= metrics["f1"] <= 1.0
    # evaluate's predictions: one line a sentence of dev.txt, the words as UTF-8 text
    text = (output / "ner" / "dev_predictions.jsonl").read_text(encoding="utf-8")
    assert "\\u" not in text
    assert [json.loads(line)["words"] for line in text.splitlines()] == [w.split() for w, _ in NER_SENTENCES[:4]]
    # allennlp predict: UTF-8 text, the entities Bulgarian titles, labelled bg
    text = (output / "cloze_predictions.jsonl").read_text(encoding="utf-8")
    assert "\\u" not in text and "Иван Вазов е роден в [MASK]." in text
    (prediction,) = [json.loads(line) for line in text.splitlines()]
    assert prediction["language"] == "bg" and len(prediction["entities"]) == 3
    titles = _entity_titles(own_language)
    for entity in prediction["entities"]:
        assert entity["language"] == "bg" and entity["title"] in titles and entity["entity"] == entity["title"]
    # EntityCloze on the export: the same ranking's names, prefixed as mLUKE's vocabulary writes them
    assert "'language': 'bg'" in own_language["printed"] and "'entity': 'bg:" in own_language["printed"]


def test_the_tokenizer_has_no_unknown_pieces_on_the_dump(own_language):
    """Every piece of the dump's own running text (what the tokenizer and the corpus read) is in the vocabulary."""
    tokenizer = load_fast_tokenizer(str(own_language["output"] / "tokenizer"))
    assert type(tokenizer).__name__ == "XLMRobertaTokenizer" and tokenizer.unk_token_id == 3
    texts = list(article_texts(own_language["dump"]))
    assert len(texts) == len(ARTICLES) and "Сопот" in texts[0]
    pieces = [i for text in texts for i in tokenizer(text, add_special_tokens=False)["input_ids"]]
    assert len(pieces) > 900 and tokenizer.unk_token_id not in pieces
    # (the corpus holds the same pieces: none unknown)
    import datasets

    rows = datasets.load_from_disk(str(own_language["output"] / "corpus"))["word_ids"]
    assert sum(map(len, rows)) == 1016 and not any(tokenizer.unk_token_id in row for row in rows)


def _entity_titles(own_language) -> set:
    """The entities of the dump's vocabulary (Bulgarian titles), the special ones left out."""
    from luke_allennlp.resources.entity_vocab import EntityVocab

    vocab = EntityVocab.from_file(own_language["output"] / "entity_vocab.jsonl")
    assert vocab.language == "bg"
    return {vocab.title(i) for i in range(3, len(vocab))}


def test_a_bpe_export_answers_in_its_language(own_language, tmp_path):
    """The byte-level BPE route: `export-luke` writes LukeTokenizer files (bare titles) with the vocabulary's language
    in tokenizer_config.json; the entity cloze ranks and names Bulgarian titles (it refused `language='bg'`, "its
    languages: en", and labelled the answers `en`)."""
    from luke_allennlp.predictors import EntityCloze

    output, dump = own_language["output"], own_language["dump"]
    allennlp("build-tokenizer", dump, tmp_path / "bpe", "--model", "bpe", "--vocab-size", "600")
    allennlp("build-tiny-checkpoint", tmp_path / "roberta", "--kind", "roberta", "--tokenizer", tmp_path / "bpe")
    allennlp("build-pretraining-corpus", dump, tmp_path / "bpe", output / "entity_vocab.jsonl", tmp_path / "corpus")
    overrides = {"distributed": None, "trainer.num_gradient_accumulation_steps": 1, "data_loader.batch_size": 8,
                 "data_loader.batches_per_epoch": 1, "data_loader.num_workers": 0, "trainer.num_epochs": 1}  # fmt: skip
    config = REPO_ROOT / "configs" / "pretraining" / "luke_base_stage1.jsonnet"
    allennlp("train", config, "-s", tmp_path / "stage1", "-o", json.dumps(overrides),
             MODEL_NAME=str(tmp_path / "roberta"), CORPUS=str(tmp_path / "corpus"))  # fmt: skip
    allennlp("export-luke", tmp_path / "stage1" / "model.tar.gz", tmp_path / "luke")
    tokenizer_config = json.loads((tmp_path / "luke" / "tokenizer_config.json").read_text(encoding="utf-8"))
    assert tokenizer_config["tokenizer_class"] == "LukeTokenizer" and tokenizer_config["entity_vocab_language"] == "bg"
    entities = json.loads((tmp_path / "luke" / "entity_vocab.json").read_text(encoding="utf-8"))
    assert "Сопот" in entities and not any(key.startswith("bg:") for key in entities)  # LukeTokenizer's bare titles
    cloze = EntityCloze.from_pretrained(str(tmp_path / "luke"))
    answer = cloze.predict("Иван Вазов е роден в [MASK].", language="bg", top_k=20)
    assert answer["language"] == "bg"
    assert all(entity["language"] == "bg" and entity["entity"] == entity["title"] for entity in answer["entities"])
    assert {entity["title"] for entity in answer["entities"]} == _entity_titles(own_language)  # every one ranked
    unasked = cloze.predict("Иван Вазов е роден в [MASK].", top_k=3)
    assert {entity["language"] for entity in unasked["entities"]} == {"bg"}
    with pytest.raises(ValueError, match="no titles in 'en'.*its languages: bg"):
        cloze.predict("Иван Вазов е роден в [MASK].", language="en")


def test_allennlp_predict_writes_utf8_whatever_the_locale(own_language):
    """The real `allennlp predict` under the C locale (Python's `open` then defaults to ASCII, PEP 538's coercion
    off): the NER archive's predictions of a Bulgarian document are UTF-8 text, not `\\u` escapes."""
    output = own_language["output"]
    document = {"id": "bg", "document": "Иван Вазов е роден в Сопот . Той учи в Пловдив ."}
    (output / "documents.jsonl").write_text(json.dumps(document, ensure_ascii=False) + "\n", encoding="utf-8")
    locale = {"LC_ALL": "C", "LANG": "C", "PYTHONCOERCECLOCALE": "0", "PYTHONUTF8": "0"}
    result = subprocess.run(
        [str(ALLENNLP), "predict", str(output / "ner" / "model.tar.gz"), str(output / "documents.jsonl"),
         "--output-file", str(output / "document_predictions.jsonl")],
        env={**os.environ, **locale}, capture_output=True, text=True, timeout=600, cwd=REPO_ROOT,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    assert "prediction:" in result.stdout and "\\u0421\\u043e\\u043f" in result.stdout  # an ASCII console: escapes
    text = (output / "document_predictions.jsonl").read_bytes().decode("utf-8")
    assert "\\u" not in text and '"words": ["Иван", "Вазов", "е", "роден", "в", "Сопот", "."]' in text
    (prediction,) = [json.loads(line) for line in text.splitlines()]
    assert [s["words"][0] for s in prediction["sentences"]] == ["Иван", "Той"]  # split before the Cyrillic capital
