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
        # -o is an object (a list was an AttributeError, `key=value` Jsonnet's "not a binary operator: =").
        (
            "[1,2]",
            "-o '[1,2]' is a list, not an object: -o takes a JSON (or Jsonnet) object of settings, e.g. "
            "-o '{\"trainer.num_epochs\": 1}'",
        ),
        (
            "trainer.num_epochs=1",
            "-o 'trainer.num_epochs=1' is not JSON or Jsonnet (1:19: not a binary operator: =): -o takes a JSON (or "
            "Jsonnet) object of settings, e.g. -o '{\"trainer.num_epochs\": 1}'",
        ),
        (
            "dataset_reader.model_name = roberta-base",
            "-o 'dataset_reader.model_name = roberta-base' is not JSON or Jsonnet (1:27: not a binary operator: =): "
            '-o takes a JSON (or Jsonnet) object of settings, e.g. -o \'{"dataset_reader.model_name": "roberta-base"}\'',
        ),
        # What torch's optimizer refuses (after the data were read, with a traceback), and a scheduler that needs
        # the batches per epoch of a loader that reads lazily ("float * NoneType").
        ('{"trainer.optimizer.lr": -1}', "trainer.optimizer.lr: Invalid learning rate: -1"),
        ('{"trainer.optimizer.eps": -1e-8}', "trainer.optimizer.eps: Invalid epsilon value: -1e-08"),
        (
            '{"trainer.optimizer.type": "huggingface_adamw", "trainer.optimizer.betas": [1.5, 0.999]}',
            "trainer.optimizer.betas: Invalid beta parameters: (1.5, 0.999) - should be in [0.0, 1.0)",
        ),
        (
            '{"data_loader.max_instances_in_memory": 64}',
            "trainer.learning_rate_scheduler: 'linear_with_warmup_ratio' needs the number of batches per epoch, "
            "which data_loader.max_instances_in_memory leaves unknown (the data are read lazily): set "
            "data_loader.batches_per_epoch, or leave max_instances_in_memory out",
        ),
        (
            '{"trainer.learning_rate_scheduler.warmup_ratio": 1.5}',
            "trainer.learning_rate_scheduler: warmup_ratio must be in [0, 1), not 1.5",
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
            "the override 'trainer.checkpointer.x': the config has no 'trainer.checkpointer' to override",
        ),
    ]
    for overrides, message in cases:
        if message is None:
            check_config(with_overrides(config, overrides))
            continue
        with pytest.raises(ConfigError) as raised:
            check_config(with_overrides(config, overrides))
        assert str(raised.value).startswith(message), json.dumps(overrides)


def test_a_config_that_would_abort_jsonnet_is_refused_before_jsonnet_runs(tmp_path, monkeypatch, capsys):
    """Jsonnet aborts the process (SIGABRT, no error) where std.parseYaml meets `nan` or `inf`, or std.parseJson a
    number beyond a double's range: said in one line before Jsonnet runs, for the config's variables and -o's."""
    from allennlp.commands import main

    config = tmp_path / "config.jsonnet"
    (tmp_path / "lib.libsonnet").write_text("{ lr(name):: std.parseYaml(std.extVar(name)) }\n")
    config.write_text('local lib = import "lib.libsonnet";\n{ trainer: { optimizer: { lr: lib.lr("LR") } } }\n')
    cases = [
        (
            {"LR": "nan"},
            None,
            f"{config} parses the environment variable LR='nan' with std.parseJson/parseYaml, and YAML's nan would "
            "abort the process inside the Jsonnet library, with no error to report: set LR to a finite number",
        ),
        (
            {"LR": "1e400"},
            None,
            f"{config} parses the environment variable LR='1e400' with std.parseJson/parseYaml, and the number "
            "1e400, beyond a double's range would abort the process inside the Jsonnet library, with no error to "
            "report: set LR to a finite number",
        ),
        (
            {"LR": "1e-3"},
            '{"trainer.num_epochs": std.parseJson("-1e999")}',
            "-o: std.parseJson/parseYaml of '-1e999' (the number -1e999, beyond a double's range) would abort the "
            "process inside the Jsonnet library, with no error to report: give a finite number",
        ),
    ]
    for environment, overrides, message in cases:
        for name, value in environment.items():
            monkeypatch.setenv(name, value)
        argv = ["allennlp", "train", str(config), "-s", str(tmp_path / "out")] + (
            ["-o", overrides] if overrides else []
        )
        monkeypatch.setattr(sys, "argv", argv)
        with pytest.raises(SystemExit) as exited:
            main(prog="allennlp")
        assert exited.value.code == 1 and capsys.readouterr().err.splitlines()[-1] == f"allennlp: error: {message}"


def test_evaluate_o_is_checked_and_overrides_not_from_o_are_not_called_o(
    tiny_classifier_archive, tmp_path, monkeypatch, capsys
):
    """`allennlp evaluate -o` with a misspelt key gets train's did-you-mean (allennlp: "extra parameters"); an override
    that the command line's -o did not give is not said to be -o's (an archive's own, loading it)."""
    from allennlp.commands import main
    from allennlp.common.params import with_overrides

    from luke_allennlp.cli.config_checks import ConfigError
    from luke_allennlp.resources.archive_config import loading_archive

    overrides = '{"dataset_reader.max_sequence_lenght": 8}'
    monkeypatch.setattr(
        sys,
        "argv",
        ["allennlp", "evaluate", str(tiny_classifier_archive), "data.jsonl", "--output-file", str(tmp_path / "m.json")]
        + ["-o", overrides],
    )
    with pytest.raises(SystemExit) as exited:
        main(prog="allennlp")
    assert exited.value.code == 1 and capsys.readouterr().err.splitlines()[-1] == (
        "allennlp: error: dataset_reader.max_sequence_lenght: not a parameter of the DatasetReader "
        "'text_classification_json' (did you mean 'max_sequence_length'?)"
    )
    monkeypatch.setattr(sys, "argv", ["allennlp", "predict", "model.tar.gz", "in.jsonl"])  # (no -o)
    with loading_archive("model.tar.gz"), pytest.raises(ConfigError) as raised:
        with_overrides({"model": {"type": "x"}}, {"dataset_reader.model_name": "bundled/0-luke"})
    assert str(raised.value) == (
        "model.tar.gz: the override 'dataset_reader.model_name' made loading it (not -o): the config has no "
        "'dataset_reader' to override"
    )
