"""Repair 12 (luke_allennlp_compat/overwrite_guard.py): an output that is an input is refused."""

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
    cases = [(data, "the input file"), (tmp_path / "symlink.jsonl", f"the input file ({data}, through a link)"),
             (tmp_path / "hardlink.jsonl", f"the input file ({data}, through a link)"), (archive, "the archive")]  # fmt: skip
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
        monkeypatch.setattr(sys, "argv", ["allennlp", "evaluate", str(archive), str(data), "--output-file",
                                          str(tmp_path / "out.json"), "--predictions-output-file",
                                          str(tmp_path / "out.json")])  # fmt: skip
        with pytest.raises(SystemExit):
            main(prog="allennlp")
        assert "--predictions-output-file" in capsys.readouterr().err
    assert data.read_text() == '{"sentence": "kept"}\n' and archive.read_bytes() == b"the archive"
