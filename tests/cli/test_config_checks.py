"""luke_allennlp/cli/config_checks.py: a config's mistakes refused before any work, `-o` checked.
(Every config of configs/ passes the checks: tests/configs/ trains each through `train_model_from_file`.)"""

import json
import logging
import os
import sys

import pytest

from tests.conftest import REPO_ROOT

CONLL = str(REPO_ROOT / "configs" / "ner" / "conll2003.jsonnet")


def test_config_mistakes_stop_allennlp_train_before_any_work(tmp_path, monkeypatch, capsys, caplog):
    """`allennlp train` stops with one line before the serialization directory is made or anything is read (the
    checkpoint and the data the config names do not even exist); a section given whole is said in one warning."""
    from allennlp.commands import main

    for name in ("MODEL_NAME", "TRAIN_DATA_PATH", "VALIDATION_DATA_PATH"):
        monkeypatch.setenv(name, str(tmp_path / "missing"))
    out = str(tmp_path / "out")
    cases = [
        ('{"trainer.num_epochs": "2"}', 'trainer.num_epochs: expected an integer, not the string "2"'),
        (
            '{"trainer": {"num_epoch": 1}}',
            "trainer.num_epoch: not a parameter of the Trainer 'gradient_descent' (did you mean 'num_epochs'?)",
        ),
        (
            '{"nosuchsection.x": 1}',
            "-o 'nosuchsection.x': the config has no 'nosuchsection' to override (give the "
            "whole section instead: -o '{\"nosuchsection\": {...}}')",
        ),
    ]
    for overrides, message in cases:
        monkeypatch.setattr(sys, "argv", ["allennlp", "train", CONLL, "-s", out, "-o", overrides])
        with caplog.at_level(logging.WARNING, logger="luke_allennlp.cli"), pytest.raises(SystemExit) as exited:
            main(prog="allennlp")
        assert exited.value.code == 1 and capsys.readouterr().err.splitlines()[-1] == f"allennlp: error: {message}"
        assert not os.path.exists(out)
    assert [r.getMessage() for r in caplog.records if r.name == "luke_allennlp.cli"] == [
        "-o replaces the whole 'trainer' section, so its type 'luke_gradient_descent' becomes the default and its "
        "other keys are dropped; to change single keys write them dotted, e.g. -o '{\"trainer.num_epoch\": ...}'"
    ]


def test_types_sizes_keys_and_overrides_of_every_section_are_checked(monkeypatch):
    from allennlp.common.params import Params, with_overrides

    from luke_allennlp.cli.config_checks import ConfigError, check_config

    for name in ("MODEL_NAME", "TRAIN_DATA_PATH", "VALIDATION_DATA_PATH"):
        monkeypatch.setenv(name, "x")
    config = Params.from_file(CONLL).as_dict(quiet=True)
    check_config(config)
    cases = [
        ({"trainer.optimizer.lr": "1e-5"}, 'trainer.optimizer.lr: expected a number, not the string "1e-5"'),
        ({"trainer.grad_norm": "1"}, 'trainer.grad_norm: expected a number or true or false, not the string "1"'),
        ({"model.dropout": [0.1]}, "model.dropout: expected a number, not a list"),
        (
            {"dataset_reader.max_seq_length": "512"},
            'dataset_reader.max_seq_length: expected an integer, not the string "512"',
        ),
        (
            {"data_loader.batch_sampler.batch_size": -1},
            "data_loader.batch_sampler.batch_size: must be at least 1, not -1",
        ),
        ({"validation_data_loader.batch_size": 0}, "validation_data_loader.batch_size: must be at least 1, not 0"),
        ({"trainer.num_epochs": 0}, "trainer.num_epochs: must be at least 1, not 0"),
        (
            {"trainer.num_gradient_accumulation_steps": -2},
            "trainer.num_gradient_accumulation_steps: must be at least 1, not -2",
        ),
        ({"dataset_reader.max_entities": -3}, "dataset_reader.max_entities: must not be negative, not -3"),
        (
            {"trainer.num_epoch": 1},
            "trainer.num_epoch: not a parameter of the Trainer 'luke_gradient_descent' (did you mean 'num_epochs'?)",
        ),
        ({"trainer.optimizer.betas": [0.9, "x"]}, None),  # (a Tuple: left to allennlp)
        ({"model.type": "no_such_model"}, "model.type: 'no_such_model' is not a registered Model (known: "),
        (
            {"trainer.checkpointer.x": 1},
            "-o 'trainer.checkpointer.x': the config has no 'trainer.checkpointer' to override",
        ),
    ]
    for overrides, message in cases:
        if message is None:
            check_config(with_overrides(config, overrides))
            continue
        with pytest.raises(ConfigError) as raised:
            check_config(with_overrides(config, overrides))
        assert str(raised.value).startswith(message), json.dumps(overrides)
