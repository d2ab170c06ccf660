"""luke_allennlp/cli/overwrite_guard.py: an output that is an input is refused."""

import os
import sys

import pytest


@pytest.mark.parametrize("command", ["predict", "evaluate"])
def test_an_output_that_is_an_input_is_refused_before_anything_is_written(tmp_path, monkeypatch, capsys, command):
    """Repair 12: `predict IN --output-file IN` emptied IN; `evaluate DATA --predictions-output-file DATA` replaced
    the data. The same path, a symbolic link, a hard link, or the archive: refused before any file is opened."""
    from allennlp.commands import main

    archive, data = tmp_path / "model.tar.gz", tmp_path / "data.jsonl"
    archive.write_bytes(b"the archive")
    data.write_text('{"sentence": "kept"}\n')
    (tmp_path / "symlink.jsonl").symlink_to(data)
    os.link(data, tmp_path / "hardlink.jsonl")
    options = ["--output-file"] if command == "predict" else ["--output-file", "--predictions-output-file"]
    cases = [
        (data, "the input file"),
        (tmp_path / "symlink.jsonl", f"the input file ({data}, through a link)"),
        (tmp_path / "hardlink.jsonl", f"the input file ({data}, through a link)"),
        (archive, "the archive"),
    ]
    for option in options:
        for output, what in cases:
            monkeypatch.setattr(sys, "argv", ["allennlp", command, str(archive), str(data), option, str(output)])
            with pytest.raises(SystemExit) as exited:
                main(prog="allennlp")
            assert exited.value.code == 1
            assert capsys.readouterr().err == (
                f"allennlp: error: {option} {output} is {what}: writing it would destroy it; choose another {option}\n"
            )
    if command == "evaluate":  # the metrics over the predictions
        (tmp_path / "out.json").write_text("{}")
        monkeypatch.setattr(
            sys,
            "argv",
            [
                "allennlp",
                "evaluate",
                str(archive),
                str(data),
                "--output-file",
                str(tmp_path / "out.json"),
                "--predictions-output-file",
                str(tmp_path / "out.json"),
            ],
        )
        with pytest.raises(SystemExit):
            main(prog="allennlp")
        assert "--predictions-output-file" in capsys.readouterr().err
    assert data.read_text() == '{"sentence": "kept"}\n' and archive.read_bytes() == b"the archive"


def test_an_existing_serialization_directory_names_f_and_recover_only_with_a_checkpoint(tmp_path, caplog):
    """A run that failed before its first checkpoint leaves nothing to recover: the error names `-f`, and
    `--recover` only once a checkpoint exists. `--recover` with another `-o` names the settings that differ (it was a
    `KeyError: 'dataset_reader.max_instances'` traceback)."""
    import json

    from allennlp.common.checks import ConfigurationError
    from allennlp.common.params import Params
    from allennlp.training.util import create_serialization_dir

    out = tmp_path / "out"
    out.mkdir()
    config = {"dataset_reader": {"type": "r"}, "trainer": {"num_epochs": 3}}
    (out / "config.json").write_text(json.dumps(config))
    (out / "out.log").write_text("failed\n")
    with pytest.raises(ConfigurationError) as error:
        create_serialization_dir(Params(config), out, recover=False, force=False)
    assert "pass -f (--force)" in str(error.value) and "--recover" not in str(error.value)
    (out / "training_state_e1_b0.th").write_bytes(b"")
    with pytest.raises(
        ConfigurationError,
        match=r"or --recover to continue its training from its last checkpoint "
        r"\(training_state_e1_b0.th\)",
    ):
        create_serialization_dir(Params(config), out, recover=False, force=False)
    other = {"dataset_reader": {"type": "r", "max_instances": 10}, "trainer": {"num_epochs": 5}}
    with caplog.at_level("ERROR"), pytest.raises(ConfigurationError) as error:
        create_serialization_dir(Params(other), out, recover=True, force=False)
    assert str(error.value) == (
        f"--recover: the settings differ from those {out} was trained with ({out / 'config.json'}): "
        "dataset_reader.max_instances: (unset) before, 10 now; trainer.num_epochs: 3 before, 5 now. Recover with the "
        "same configuration and -o, or pass -f instead of --recover to train afresh"
    )
    assert not caplog.records  # no ERROR line per setting before the error
    create_serialization_dir(Params(config), out, recover=True, force=False)  # the same settings: recovers
    create_serialization_dir(Params(config), out, recover=False, force=True)  # -f: deleted and made afresh
    assert os.listdir(out) == []
