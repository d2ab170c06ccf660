"""
mLUKE end to end through the `allennlp` commands a user types, as LUKE's: a tiny XLM-R-style sentencepiece
tokenizer -> a tiny XLM-R-like RoBERTa -> German and Japanese dumps -> (a hand-written multilingual entity
vocabulary) -> `build-pretraining-corpus` per language -> `train` stage 1 on both corpora -> `export-luke` (an
mLUKE checkpoint: MLukeTokenizer, `language:title` entity keys) -> that checkpoint as MODEL_NAME of the multilingual
NER config on German CoNLL sentences -> `train` and `evaluate --output-file`.

Each step runs allennlp's own entry point (`allennlp.commands.main`, the `allennlp` script's) with the command line
a user types, in this process: a new `allennlp` process spends 15 s of CPU importing before it starts (30 s on
a loaded machine), which eight steps would multiply. `test_the_commands_run_as_processes` (slow) runs one of them as
the real script.
"""

import contextlib
import io
import json
import os
import subprocess
import sys

import pytest
import torch
import transformers
from allennlp.models.archival import load_archive

from luke_allennlp.testing import save_xlmr_tokenizer, write_tiny_checkpoint
from tests.conftest import ALLENNLP, REPO_ROOT
from tests.models.test_luke_pretraining import TINY
from tests.wikipedia.crafted_mluke import write_german_dump, write_japanese_dump, write_multilingual_vocab

GERMAN_CONLL = REPO_ROOT / "tests" / "fixtures" / "data" / "conll2003_german_sample.txt"


def allennlp(*args, **env) -> str:
    """Runs `allennlp ARGS` with the environment variables `env` through allennlp's entry point; returns its stdout."""
    from allennlp.commands import main

    output = io.StringIO()
    with pytest.MonkeyPatch.context() as monkeypatch, contextlib.redirect_stdout(output):
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        monkeypatch.setattr(sys, "argv", ["allennlp", *map(str, args)])
        main(prog="allennlp")
    return output.getvalue()


@pytest.fixture(scope="module")
def pipeline(tmp_path_factory):
    root = tmp_path_factory.mktemp("mluke")
    save_xlmr_tokenizer(root / "xlmr")
    write_tiny_checkpoint(root / "xlmr-roberta", "roberta", tokenizer=root / "xlmr")  # pretraining starts from it
    vocab = write_multilingual_vocab(root / "vocab.jsonl")
    corpora = []
    for language, write in (("de", write_german_dump), ("ja", write_japanese_dump)):
        dump = write(root / f"{language}.xml")
        out = root / "corpus" / language
        allennlp("build-pretraining-corpus", dump, root / "xlmr", vocab, out, "--language", language)
        corpora.append(str(out))
    overrides = {**TINY, "trainer.optimizer.lr": 1e-2, "data_loader.batch_size": 4}
    allennlp(
        "train",
        REPO_ROOT / "configs" / "pretraining" / "luke_base_stage1.jsonnet",
        "-s",
        root / "stage1",
        "-o",
        json.dumps(overrides),
        MODEL_NAME=str(root / "xlmr-roberta"),
        CORPUS=",".join(corpora),
    )
    export = allennlp("export-luke", root / "stage1" / "model.tar.gz", root / "mluke")
    return {
        "root": root,
        "archive": root / "stage1" / "model.tar.gz",
        "mluke": root / "mluke",
        "stdout": export,
        "corpora": corpora,
        "vocab": vocab,
    }


# (text, entities, character spans): a German and a Japanese sentence.
INPUTS = [
    ("Berlin ist die Hauptstadt von Deutschland.", ["de:Berlin", "de:Deutschland"], [(0, 6), (30, 41)]),
    ("東京都は日本の首都である。", ["ja:東京都", "[MASK]"], [(0, 3), (4, 6)]),
]


def test_export_is_an_mluke_checkpoint(pipeline):
    out = pipeline["mluke"]
    assert "LukeForMaskedLM with 2004 words and 13 entities" in pipeline["stdout"]
    assert json.loads((out / "tokenizer_config.json").read_text())["tokenizer_class"] == "MLukeTokenizer"
    assert (out / "sentencepiece.bpe.model").is_file()  # what MLukeTokenizer of transformers 4 reads
    entities = json.loads((out / "entity_vocab.json").read_text(encoding="utf-8"))
    assert entities["de:Berlin"] == entities["en:Berlin"] == entities["ja:ベルリン"] == 3
    assert entities["de:Japan"] == entities["ja:日本"] == 5 and entities["de:Spree"] == 9 and entities["en:Spree"] == 7
    assert (entities["[PAD]"], entities["[UNK]"], entities["[MASK]"], entities["[MASK2]"]) == (0, 1, 2, 12)
    tokenizer = transformers.MLukeTokenizer.from_pretrained(str(out))
    assert (tokenizer.mask_token_id, tokenizer.pad_token_id) == (2001, 1)
    model, info = transformers.LukeForMaskedLM.from_pretrained(str(out), output_loading_info=True)
    assert not info["missing_keys"] and not info["unexpected_keys"] and not info["mismatched_keys"]


@pytest.mark.parametrize("text,entities,spans", INPUTS, ids=["de", "ja"])
def test_transformers_computes_what_the_archive_computes(pipeline, text, entities, spans):
    tokenizer = transformers.MLukeTokenizer.from_pretrained(str(pipeline["mluke"]))
    encoding = tokenizer(text, entities=entities, entity_spans=spans, return_tensors="pt")
    vocab = json.loads((pipeline["mluke"] / "entity_vocab.json").read_text(encoding="utf-8"))
    assert encoding["entity_ids"].tolist() == [[vocab[e] for e in entities]]
    released = transformers.LukeForMaskedLM.from_pretrained(str(pipeline["mluke"])).eval()
    ours = load_archive(str(pipeline["archive"])).model.pretraining.eval()
    with torch.no_grad():
        theirs = released(**encoding)
        mine = ours(**{k: v for k, v in encoding.items() if k != "token_type_ids" and k != "entity_token_type_ids"})
    # The release's word table has <ent> and <ent2> appended, its entity table [MASK2].
    assert (theirs.logits[..., :2002] - mine.logits).abs().max() < 1e-5
    assert (theirs.entity_logits[..., :12] - mine.entity_logits).abs().max() < 1e-5


def test_lite_export(pipeline, tmp_path):
    from luke_allennlp.archival.export_luke import export_luke

    export_luke(str(pipeline["archive"]), str(tmp_path / "lite"), lite=True)
    entities = json.loads((tmp_path / "lite" / "entity_vocab.json").read_text())
    assert entities == {"[PAD]": 0, "[UNK]": 1, "[MASK]": 2, "[MASK2]": 3}
    tokenizer = transformers.MLukeTokenizer.from_pretrained(str(tmp_path / "lite"))
    lite = transformers.LukeForMaskedLM.from_pretrained(str(tmp_path / "lite")).eval()
    full = transformers.LukeForMaskedLM.from_pretrained(str(pipeline["mluke"])).eval()
    encoding = tokenizer(INPUTS[1][0], entities=["[MASK]"], entity_spans=[(4, 6)], return_tensors="pt")
    with torch.no_grad():
        assert torch.allclose(lite(**encoding).logits, full(**encoding).logits, atol=1e-6)


def test_multilingual_ner_config_fine_tunes_the_export(pipeline):
    root = pipeline["root"]
    env = {
        "MODEL_NAME": str(pipeline["mluke"]),
        "TRAIN_DATA_PATH": str(GERMAN_CONLL),
        "VALIDATION_DATA_PATH": str(GERMAN_CONLL),
    }
    overrides = {
        "trainer.num_epochs": 2,
        "data_loader.batch_sampler.batch_size": 4,
        "dataset_reader.max_seq_length": 64,
        "trainer.optimizer.lr": 1e-3,
    }
    allennlp(
        "train",
        REPO_ROOT / "configs" / "ner" / "conll_multilingual.jsonnet",
        "-s",
        root / "ner",
        "-o",
        json.dumps(overrides),
        **env,
    )
    metrics = json.loads((root / "ner" / "metrics.json").read_text())
    assert {"validation_f1", "validation_precision", "validation_recall"} <= set(metrics)
    allennlp(
        "evaluate", root / "ner" / "model.tar.gz", GERMAN_CONLL, "--output-file", root / "ner" / "eval.json", **env
    )
    evaluation = json.loads((root / "ner" / "eval.json").read_text())
    assert 0.0 <= evaluation["f1"] <= 1.0 and evaluation["loss"] > 0


@pytest.mark.slow  # 30 s of a new process's imports on a loaded machine; the steps above run the same commands
def test_the_commands_run_as_processes(pipeline, tmp_path):
    """The corpus builder through the `allennlp` script itself, its table on the screen."""
    result = subprocess.run(
        [
            str(ALLENNLP),
            "build-pretraining-corpus",
            str(pipeline["root"] / "ja.xml"),
            str(pipeline["root"] / "xlmr"),
            str(pipeline["vocab"]),
            str(tmp_path / "ja"),
            "--language",
            "ja",
        ],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        env=dict(os.environ),
    )
    assert result.returncode == 0, result.stderr[-4000:]
    assert "wrote the corpus to" in result.stdout
    assert json.loads((tmp_path / "ja" / "metadata.json").read_text())["entities"] == 5
