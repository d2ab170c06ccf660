"""Repair 8 (luke_allennlp_compat/user_errors.py): known input errors as one `allennlp: error:` line."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

import luke_allennlp_compat
from tests.conftest import ALLENNLP, FIXTURES, REPO_ROOT


def test_hub_name_offline_fails_fast_with_one_line(tmp_path):
    """Repair 7: a hub name with HF_HUB_OFFLINE=1 stops `allennlp train` at once, with one line and no traceback."""
    import time

    env = {**os.environ, "HF_HUB_OFFLINE": "1", "MODEL_NAME": "studio-ousia/luke-base",
           "TRAIN_DATA_PATH": str(tmp_path / "train.txt"), "VALIDATION_DATA_PATH": str(tmp_path / "dev.txt")}  # fmt: skip
    started = time.monotonic()
    result = subprocess.run(
        [str(ALLENNLP), "train", "configs/relation_classification/semeval.jsonnet", "-s", str(tmp_path / "out")],
        capture_output=True, text=True, cwd=REPO_ROOT, env=env, timeout=600,
    )  # fmt: skip
    elapsed = time.monotonic() - started
    assert result.returncode == 1
    errors = [line for line in result.stderr.splitlines() if " - INFO - " not in line]
    assert errors == [
        "allennlp: error: 'studio-ousia/luke-base' is not a local directory, is not in the Hugging Face cache, and "
        "the hub cannot be reached (HF_HUB_OFFLINE=1): pass the path of a downloaded checkpoint directory instead, "
        "or go online"
    ], result.stderr[-3000:]
    # No retries: the time is the command's start-up (~15 s on a loaded machine), not 30 s more of them.
    assert "Retrying" not in result.stderr and elapsed < 120


def test_user_error_is_found_in_the_exception_chain():
    from luke_allennlp.modeling.loading import HubUnavailableError

    try:
        try:
            raise HubUnavailableError("the message")
        except OSError as inner:
            raise RuntimeError("wrapped") from inner
    except RuntimeError as outer:
        assert str(luke_allennlp_compat.user_error(outer)) == "the message"
    assert luke_allennlp_compat.user_error(ValueError("not for the user")) is None


def test_errors_raised_on_purpose_by_the_project_are_user_errors():
    """Repair 8: a `raise` statement of this project's code (a reader's "FILE:LINE: ..." error) is shown as one line;
    an error inside a call it makes (a bug) keeps its traceback."""
    import luke_allennlp

    project_file = str(Path(luke_allennlp.__file__).with_name("not_a_module.py"))
    namespace = {}
    exec(compile("def on_purpose():\n    raise ValueError('f.txt:3: bad')\n\ndef bug():\n    return int('x')\n",
                 project_file, "exec"), namespace)  # fmt: skip
    for function, expected in [(namespace["on_purpose"], "f.txt:3: bad"), (namespace["bug"], None)]:
        try:
            function()
        except ValueError as error:
            shown = luke_allennlp_compat.user_error(error)
            assert (str(shown) if shown else None) == expected
    try:  # the same statement elsewhere is not the project's
        exec(compile("raise ValueError('x')", __file__, "exec"))
    except ValueError as error:
        assert luke_allennlp_compat.user_error(error) is None
    assert str(luke_allennlp_compat.user_error(FileNotFoundError("file x not found"))) == "file x not found"


def test_known_input_errors_are_one_line_and_allennlp_debug_shows_the_traceback(tmp_path, monkeypatch, capsys):
    from allennlp.commands import main

    config, new = str(FIXTURES / "configs" / "luke_classifier.jsonnet"), str(tmp_path / "new")
    (tmp_path / "bad.jsonnet").write_text('{ "a": 1,, }')
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "config.json").write_text("{}")
    cases = [
        (["evaluate", str(tmp_path / "missing.tar.gz"), "data.txt"], f"file {tmp_path / 'missing.tar.gz'} not found"),
        (["train", str(tmp_path / "missing.jsonnet"), "-s", new], f"file {tmp_path / 'missing.jsonnet'} not found"),
        (["train", config, "-s", new], f"{config}:3:19-42: undefined external variable: MODEL_DIR "
         "(the config reads it with std.extVar: set it in the environment, e.g. MODEL_DIR=...)"),
        (["train", str(tmp_path / "bad.jsonnet"), "-s", new],
         f"{tmp_path / 'bad.jsonnet'}:1:10: unexpected: \",\" while parsing field definition"),
        (["train", config, "-s", str(tmp_path / "out")], f"serialization directory {tmp_path / 'out'} already "
         "exists and is not empty: pass -f (--force) to delete it and train afresh, or choose another -s"),
    ]  # fmt: skip
    for argv, message in cases:
        if argv[-1] == str(tmp_path / "out"):  # the config's variables set: the directory is checked next
            monkeypatch.setenv("MODEL_DIR", "m")
            monkeypatch.setenv("DATA", "d")
        monkeypatch.setattr(sys, "argv", ["allennlp", *argv])
        with pytest.raises(SystemExit) as exited:
            main(prog="allennlp")
        assert exited.value.code == 1 and capsys.readouterr().err == f"allennlp: error: {message}\n"
    assert not os.path.exists(new)
    monkeypatch.setenv("ALLENNLP_DEBUG", "1")
    monkeypatch.setattr(sys, "argv", ["allennlp", *cases[0][0]])
    with pytest.raises(FileNotFoundError, match="missing.tar.gz not found"):
        main(prog="allennlp")


def test_a_bad_line_in_the_training_data_stops_allennlp_train_with_one_line(tiny_luke_dir, shared_data, tmp_path):
    """The real command: the reader's error naming the file and line, and no traceback."""
    lines = (shared_data / "conll2003" / "eng.testa").read_text().splitlines()[:40]
    lines[7] = "LEICESTERSHIRE"  # line 8: the tag column missing
    (tmp_path / "eng.testa").write_text("\n".join(lines) + "\n")
    env = {**os.environ, "MODEL_NAME": str(tiny_luke_dir), "TRAIN_DATA_PATH": str(tmp_path / "eng.testa"),
           "VALIDATION_DATA_PATH": str(tmp_path / "eng.testa")}  # fmt: skip
    result = subprocess.run([str(ALLENNLP), "train", "configs/ner/conll2003.jsonnet", "-s", str(tmp_path / "out")],
                            capture_output=True, text=True, cwd=REPO_ROOT, env=env, timeout=600)  # fmt: skip
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr[-3000:]
    assert result.stderr.splitlines()[-1] == (
        f"allennlp: error: {tmp_path / 'eng.testa'}:8: expected 'word ... NER' columns (e.g. 'word POS chunk NER') "
        "with an O/B-X/I-X tag last, got 'LEICESTERSHIRE'"
    )
