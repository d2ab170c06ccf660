"""Repair 14 (luke_allennlp_compat/config_checks.py): a config's mistakes refused before any work, `-o` checked."""

import glob
import logging
import os
import sys

import pytest

from tests.conftest import FIXTURES, REPO_ROOT


def test_config_mistakes_stop_allennlp_train_before_any_work(tmp_path, monkeypatch, capsys, caplog):
    """Each case stops `allennlp train` with one line before the serialization directory is made or anything is read
    (the checkpoint and the data named by the config do not even exist)."""
    from allennlp.commands import main

    for name, value in [("MODEL_NAME", "no-such-checkpoint"), ("TRAIN_DATA_PATH", "no-such-file"),
                        ("VALIDATION_DATA_PATH", "no-such-file")]:  # fmt: skip
        monkeypatch.setenv(name, value)
    config, out = str(REPO_ROOT / "configs" / "ner" / "conll2003.jsonnet"), str(tmp_path / "out")
    cases = [
        ('{"trainer.num_epochs": "2"}', 'trainer.num_epochs: expected an integer, not the string "2"'),
        ('{"trainer.optimizer.lr": "1e-5"}', 'trainer.optimizer.lr: expected a number, not the string "1e-5"'),
        ('{"data_loader.batch_sampler.batch_size": -1}', "data_loader.batch_sampler.batch_size: must be at least 1, "
         "not -1"),
        ('{"dataset_reader.max_seq_length": -3}', "dataset_reader.max_seq_length: must not be negative, not -3"),
        ('{"trainer.num_epochs": 0}', "trainer.num_epochs: must be at least 1, not 0"),
        ('{"trainer.num_epoch": 1}', "trainer.num_epoch: not a parameter of the Trainer "
         "'luke_gradient_descent' (did you mean 'num_epochs'?)"),
        ('{"trainer": {"num_epoch": 1}}', "trainer.num_epoch: not a parameter of the Trainer 'gradient_descent' "
         "(did you mean 'num_epochs'?)"),
        ('{"nosuchsection.x": 1}', "-o 'nosuchsection.x': the config has no 'nosuchsection' to override (give the "
         "whole section instead: -o '{\"nosuchsection\": {...}}')"),
        ('{"trainer.checkpointer.x": 1}', "-o 'trainer.checkpointer.x': the config has no 'trainer.checkpointer' to "
         "override"),
        ('{"model.type": "no_such_model"}', "model.type: 'no_such_model' is not a registered Model (known: "),
    ]  # fmt: skip
    for overrides, message in cases:
        monkeypatch.setattr(sys, "argv", ["allennlp", "train", config, "-s", out, "-o", overrides])
        with caplog.at_level(logging.WARNING, logger="luke_allennlp_compat"), pytest.raises(SystemExit) as exited:
            main(prog="allennlp")
        assert exited.value.code == 1
        assert capsys.readouterr().err.startswith(f"allennlp: error: {message}"), overrides
        assert not os.path.exists(out)
    # The section given whole: said in one warning line.
    assert [r.getMessage() for r in caplog.records if r.name == "luke_allennlp_compat"] == [
        "-o replaces the whole 'trainer' section, so its type 'luke_gradient_descent' becomes the default and its "
        "other keys are dropped; to change single keys write them dotted, e.g. -o '{\"trainer.num_epoch\": ...}'"
    ]


def test_every_config_of_the_project_passes_the_checks(monkeypatch):
    from allennlp.common.params import Params

    from luke_allennlp_compat import check_config

    for name in ("MODEL_NAME", "TRAIN_DATA_PATH", "VALIDATION_DATA_PATH", "MODEL_DIR", "DATA", "CORPUS",
                 "STAGE1_ARCHIVE", "ENTITY_VOCAB", "MENTION_DICTIONARY", "DATA_DIR"):  # fmt: skip
        monkeypatch.setenv(name, "x")
    configs = sorted(glob.glob(str(REPO_ROOT / "configs" / "*" / "*.jsonnet"))) + glob.glob(
        str(FIXTURES / "configs" / "*")
    )
    assert len(configs) > 30
    for config in configs:
        check_config(Params.from_file(config).as_dict(quiet=True))
