"""luke_allennlp/cli/input_lengths.py: a reader's `max_seq_length` longer than the model's position embeddings cover
is refused when the model and readers are built (it was an `IndexError` in the forward pass of the first long input);
the encoder refuses such an input with the same advice."""

import sys

import pytest
import torch
import transformers

from luke_allennlp.cli.input_lengths import InputLengthError, check_input_lengths, longest_model_input
from luke_allennlp.modeling import LukeEncoder
from tests.conftest import REPO_ROOT


def test_readers_longer_than_the_models_positions_are_refused(tiny_luke_dir, tiny_bert_dir):
    from data_readers.luke_conll2003 import LukeConll2003Reader
    from data_readers.luke_relation_classification import LukeRelationClassificationReader

    encoder = LukeEncoder.from_pretrained(str(tiny_luke_dir), load_weights=False)
    assert longest_model_input(encoder) == (512, 514)  # RoBERTa's positions count from padding_idx + 1
    bert = transformers.BertModel.from_pretrained(str(tiny_bert_dir))  # (a `pretrained_transformer` embedder's)
    assert longest_model_input(bert) == (512, 512)  # BERT's count from 0
    check_input_lengths(encoder, {"dataset_reader": LukeConll2003Reader(str(tiny_luke_dir), max_seq_length=512)})
    readers = {
        "dataset_reader": LukeConll2003Reader(str(tiny_luke_dir), max_seq_length=512),
        "validation_dataset_reader": LukeRelationClassificationReader(str(tiny_luke_dir), max_seq_length=700),
    }
    with pytest.raises(InputLengthError) as refused:
        check_input_lengths(encoder, readers)
    assert str(refused.value) == (
        "validation_dataset_reader.max_seq_length is 700, but the model's position embeddings cover 512 words "
        "(max_position_embeddings 514): inputs longer than that would fail inside the model; set "
        "validation_dataset_reader.max_seq_length to at most 512"
    )
    words = torch.full((1, 513), 5)  # (one past what the embeddings cover)
    with pytest.raises(
        ValueError, match=r"an input of 513 words is longer than the model's position embeddings cover "
    ):
        encoder(words)  # (checked before padding to static shapes: the shape as given)
    assert encoder(words[:, :512]).last_hidden_state.shape == (1, 512, 32)


def test_allennlp_train_refuses_them_once_the_model_is_built(tiny_luke_dir, shared_data, tmp_path, monkeypatch, capsys):
    from allennlp.commands import main

    for name, path in [("MODEL_NAME", tiny_luke_dir)] + [
        (name, shared_data / "conll2003" / "eng.testa") for name in ("TRAIN_DATA_PATH", "VALIDATION_DATA_PATH")
    ]:
        monkeypatch.setenv(name, str(path))
    overrides = '{"dataset_reader.max_instances": 2, "dataset_reader.max_seq_length": 700}'
    config = str(REPO_ROOT / "configs" / "ner" / "conll2003.jsonnet")
    monkeypatch.setattr(sys, "argv", ["allennlp", "train", config, "-s", str(tmp_path / "out"), "-o", overrides])
    with pytest.raises(SystemExit) as exited:
        main(prog="allennlp")
    assert exited.value.code == 1 and capsys.readouterr().err.splitlines()[-1] == (
        "allennlp: error: dataset_reader.max_seq_length is 700, but the model's position embeddings cover 512 words "
        "(max_position_embeddings 514): inputs longer than that would fail inside the model; set "
        "dataset_reader.max_seq_length to at most 512"
    )
    assert not list((tmp_path / "out").glob("*.th"))
