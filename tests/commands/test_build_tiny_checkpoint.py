import json
import sys

import pytest
import torch
from allennlp.commands import main

from luke_allennlp.modeling import LukeEncoder
from luke_allennlp.resources.tokenization import load_fast_tokenizer


def run_command(*args, monkeypatch):
    monkeypatch.setattr(sys, "argv", ["allennlp", *args])
    main(prog="allennlp")


def test_luke_checkpoint_from_the_roberta_tokenizer_and_an_entity_vocabulary(
    shared_data, tmp_path, monkeypatch, capsys
):
    out = tmp_path / "tiny"
    vocab = shared_data / "entity_vocab" / "enwiki_20181220_entvocab_100.tsv"
    run_command(
        "build-tiny-checkpoint",
        str(out),
        "--tokenizer",
        str(shared_data / "tokenizers" / "roberta-base"),
        "--entity-vocab",
        str(vocab),
        monkeypatch=monkeypatch,
    )
    assert f"MODEL_NAME={out}" in capsys.readouterr().out
    config = json.loads((out / "config.json").read_text())
    # RoBERTa's vocab.json has 50,262 entries with ids up to 50,264 (<mask>): the table must reach it.
    assert config["vocab_size"] == 50265 and config["pad_token_id"] == 1
    assert config["entity_vocab_size"] == 103 and config["hidden_size"] == 32 and config["num_hidden_layers"] == 2
    entity_vocab = json.loads((out / "entity_vocab.json").read_text())
    assert len(entity_vocab) == 103 and entity_vocab["[MASK]"] == 2

    tokenizer = load_fast_tokenizer(str(out))
    ids = tokenizer("Hello world")["input_ids"]
    assert ids == [0, 20920, 232, 2] and tokenizer.mask_token_id == 50264  # roberta-base's ids (with a prefix space)
    luke = LukeEncoder.from_pretrained(str(out)).eval()
    output = luke(torch.tensor([ids]), torch.ones(1, len(ids), dtype=torch.long))
    assert output.last_hidden_state.shape == (1, 4, 32)


def test_refuses_a_non_empty_directory_and_a_missing_tokenizer(tmp_path, monkeypatch):
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "x").write_text("")
    with pytest.raises(SystemExit, match="is not empty"):
        run_command(
            "build-tiny-checkpoint", str(tmp_path / "out"), "--tokenizer", str(tmp_path), monkeypatch=monkeypatch
        )
    with pytest.raises(SystemExit, match="not a tokenizer directory"):
        run_command(
            "build-tiny-checkpoint",
            str(tmp_path / "new"),
            "--tokenizer",
            str(tmp_path / "missing"),
            monkeypatch=monkeypatch,
        )


def test_mluke_checkpoint_from_an_xlmr_tokenizer_and_a_multilingual_vocabulary(
    xlmr_tokenizer_dir, tmp_path, monkeypatch, capsys
):
    from transformers import MLukeTokenizer

    lines = [
        {"id": 0, "entities": [["[PAD]", "en"]], "count": 0},
        {"id": 1, "entities": [["[UNK]", "en"]], "count": 0},
        {"id": 2, "entities": [["[MASK]", "en"]], "count": 0},
        {"id": 3, "entities": [["Tokyo", "en"], ["東京都", "ja"]], "count": 5},
        {"id": 4, "entities": [["Москва", "ru"]], "count": 2},
    ]
    (tmp_path / "entity_vocab.jsonl").write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines))
    out = tmp_path / "mluke"
    run_command(
        "build-tiny-checkpoint",
        str(out),
        "--kind",
        "mluke",
        "--tokenizer",
        str(xlmr_tokenizer_dir),
        "--entity-vocab",
        str(tmp_path / "entity_vocab.jsonl"),
        monkeypatch=monkeypatch,
    )
    assert f"MODEL_NAME={out}" in capsys.readouterr().out
    assert {
        "config.json",
        "model.safetensors",
        "tokenizer.json",
        "tokenizer_config.json",
        "sentencepiece.bpe.model",
        "entity_vocab.json",
    } <= {p.name for p in out.iterdir()}
    assert json.loads((out / "entity_vocab.json").read_text()) == {
        "[PAD]": 0,
        "[UNK]": 1,
        "[MASK]": 2,
        "en:Tokyo": 3,
        "ja:東京都": 3,
        "ru:Москва": 4,
        "[MASK2]": 5,
    }
    assert json.loads((out / "tokenizer_config.json").read_text())["tokenizer_class"] == "MLukeTokenizer"
    config = json.loads((out / "config.json").read_text())
    assert (config["vocab_size"], config["entity_vocab_size"], config["pad_token_id"]) == (2004, 6, 1)
    tokenizer = MLukeTokenizer.from_pretrained(str(out))
    assert tokenizer("Tokyo", entities=["ja:東京都"], entity_spans=[(0, 5)])["entity_ids"] == [3]
    luke = LukeEncoder.from_pretrained(str(out)).eval()
    ids = load_fast_tokenizer(str(out))("Москва")["input_ids"]
    assert luke(torch.tensor([ids]), torch.ones(1, len(ids), dtype=torch.long)).last_hidden_state.shape == (
        1,
        len(ids),
        32,
    )


def test_a_roberta_checkpoint_is_written_without_a_progress_bar(shared_data, tmp_path, monkeypatch, capsys):
    """transformers' save_pretrained drew a "Writing model shards" bar for the one small file."""
    from transformers.utils import logging as transformers_logging

    try:
        run_command(
            "build-tiny-checkpoint",
            str(tmp_path / "tiny"),
            "--kind",
            "roberta",
            "--tokenizer",
            str(shared_data / "tokenizers" / "roberta-base"),
            monkeypatch=monkeypatch,
        )
    finally:
        transformers_logging.enable_progress_bar()
    assert "Writing model shards" not in capsys.readouterr().err
    assert (tmp_path / "tiny" / "model.safetensors").stat().st_size > 0


def test_luke_japanese_checkpoints_from_a_sentencepiece_tokenizer(tiny_luke_japanese_dir, tmp_path, monkeypatch):
    """--kind luke-japanese(-lite): the layout of studio-ousia/luke-japanese-base(-lite) over a given tokenizer, with
    the titles of a Japanese entity vocabulary (the TSV of build-entity-vocab) written `ja:title`."""
    (tmp_path / "vocab.tsv").write_text("[PAD]\t0\n[UNK]\t0\n[MASK]\t0\n東京都\t9\n日本共産党\t4\n", encoding="utf-8")
    out = tmp_path / "ja"
    run_command(
        "build-tiny-checkpoint",
        str(out),
        "--kind",
        "luke-japanese",
        "--tokenizer",
        str(tiny_luke_japanese_dir),
        "--entity-vocab",
        str(tmp_path / "vocab.tsv"),
        "--seed",
        "3",
        monkeypatch=monkeypatch,
    )
    entities = json.loads((out / "entity_vocab.json").read_text())
    assert entities == {"[PAD]": 0, "[UNK]": 1, "[MASK]": 2, "ja:東京都": 3, "ja:日本共産党": 4, "[MASK2]": 5}
    assert json.loads((out / "config.json").read_text())["entity_vocab_size"] == 6
    ids = load_fast_tokenizer(str(out))("東京都に住む")["input_ids"]
    assert ids == load_fast_tokenizer(str(tiny_luke_japanese_dir))("東京都に住む")["input_ids"]
    run_command(
        "build-tiny-checkpoint",
        str(tmp_path / "lite"),
        "--kind",
        "luke-japanese-lite",
        "--tokenizer",
        str(tiny_luke_japanese_dir),
        monkeypatch=monkeypatch,
    )
    assert json.loads((tmp_path / "lite" / "entity_vocab.json").read_text()) == {
        "[MASK]": 0,
        "[UNK]": 1,
        "[PAD]": 2,
        "[MASK2]": 3,
    }
    with pytest.raises(SystemExit, match=r"--tokenizer is required \(or --jglue for luke-japanese\)"):
        run_command("build-tiny-checkpoint", str(tmp_path / "x"), "--kind", "luke-japanese", monkeypatch=monkeypatch)
    with pytest.raises(SystemExit, match="--jglue is for --kind luke-japanese"):
        run_command(
            "build-tiny-checkpoint",
            str(tmp_path / "x"),
            "--tokenizer",
            str(tiny_luke_japanese_dir),
            "--jglue",
            str(tmp_path),
            monkeypatch=monkeypatch,
        )
