"""luke_allennlp/cli/user_errors.py: known input errors as one `allennlp: error:` line."""

import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

from luke_allennlp.cli import user_errors
from tests.conftest import ALLENNLP, FIXTURES, REPO_ROOT


def test_hub_name_offline_fails_fast_with_one_line(tmp_path):
    """Repair 7: a hub name with HF_HUB_OFFLINE=1 stops `allennlp train` at once, with one line and no traceback."""
    import time

    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "MODEL_NAME": "studio-ousia/luke-base",
        "TRAIN_DATA_PATH": str(tmp_path / "train.txt"),
        "VALIDATION_DATA_PATH": str(tmp_path / "dev.txt"),
    }
    started = time.monotonic()
    result = subprocess.run(
        [str(ALLENNLP), "train", "configs/relation_classification/semeval.jsonnet", "-s", str(tmp_path / "out")],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
        env=env,
        timeout=600,
    )
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
    from luke_allennlp.modeling.checkpoint_files import HubUnavailableError

    try:
        try:
            raise HubUnavailableError("the message")
        except OSError as inner:
            raise RuntimeError("wrapped") from inner
    except RuntimeError as outer:
        assert str(user_errors.user_error(outer)) == "the message"
    assert user_errors.user_error(ValueError("not for the user")) is None


def test_errors_raised_on_purpose_by_the_project_are_user_errors():
    """Repair 8: a `raise` statement of this project's code (a reader's "FILE:LINE: ..." error) is shown as one line;
    an error inside a call it makes (a bug) keeps its traceback."""
    import luke_allennlp

    project_file = str(Path(luke_allennlp.__file__).with_name("not_a_module.py"))
    namespace = {}
    exec(
        compile(
            "def on_purpose():\n    raise ValueError('f.txt:3: bad')\n\ndef bug():\n    return int('x')\n",
            project_file,
            "exec",
        ),
        namespace,
    )
    for function, expected in [(namespace["on_purpose"], "f.txt:3: bad"), (namespace["bug"], None)]:
        try:
            function()
        except ValueError as error:
            shown = user_errors.user_error(error)
            assert (str(shown) if shown else None) == expected
    try:  # the same statement elsewhere is not the project's
        exec(compile("raise ValueError('x')", __file__, "exec"))
    except ValueError as error:
        assert user_errors.user_error(error) is None
    assert str(user_errors.user_error(FileNotFoundError("file x not found"))) == "file x not found"


def test_known_input_errors_are_one_line_and_allennlp_debug_shows_the_traceback(tmp_path, monkeypatch, capsys):
    from allennlp.commands import main

    config, new = str(FIXTURES / "configs" / "luke_classifier.jsonnet"), str(tmp_path / "new")
    (tmp_path / "bad.jsonnet").write_text('{ "a": 1,, }')
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "config.json").write_text("{}")
    cases = [
        (["evaluate", str(tmp_path / "missing.tar.gz"), "data.txt"], f"file {tmp_path / 'missing.tar.gz'} not found"),
        (["train", str(tmp_path / "missing.jsonnet"), "-s", new], f"file {tmp_path / 'missing.jsonnet'} not found"),
        (
            ["train", config, "-s", new],
            f"{config}:3:19-42: undefined external variable: MODEL_DIR "
            "(the config reads it with std.extVar: set it in the environment, e.g. MODEL_DIR=...)",
        ),
        (
            ["train", str(tmp_path / "bad.jsonnet"), "-s", new],
            f'{tmp_path / "bad.jsonnet"}:1:10: unexpected: "," while parsing field definition',
        ),
        (
            ["train", config, "-s", str(tmp_path / "out")],
            f"serialization directory {tmp_path / 'out'} already "
            "exists and is not empty: pass -f (--force) to delete it and train afresh, or choose another -s",
        ),
    ]
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
    env = {
        **os.environ,
        "MODEL_NAME": str(tiny_luke_dir),
        "TRAIN_DATA_PATH": str(tmp_path / "eng.testa"),
        "VALIDATION_DATA_PATH": str(tmp_path / "eng.testa"),
    }
    result = subprocess.run(
        [str(ALLENNLP), "train", "configs/ner/conll2003.jsonnet", "-s", str(tmp_path / "out")],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
        env=env,
        timeout=600,
    )
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr[-3000:]
    assert result.stderr.splitlines()[-1] == (
        f"allennlp: error: {tmp_path / 'eng.testa'}:8: expected 'word ... NER' columns (e.g. 'word POS chunk NER') "
        "with an O/B-X/I-X tag last, got 'LEICESTERSHIRE'"
    )


def test_disk_full_is_one_line_naming_the_file(tmp_path, monkeypatch):
    """A full disk while saving a checkpoint (torch's "unexpected pos", the OSError chained) or writing the archive:
    one line naming the file, the previous file kept, no temporary left."""
    import errno
    import io

    import torch

    from luke_allennlp import archival
    from luke_allennlp.training.checkpointers import luke_checkpointer

    class FullDisk(io.RawIOBase):
        def writable(self):
            return True

        def write(self, data):
            raise OSError(errno.ENOSPC, "No space left on device")

    path = tmp_path / "model_state_e1_b0.th"
    path.write_bytes(b"previous")
    monkeypatch.setattr(luke_checkpointer, "open", lambda *args: FullDisk(), raising=False)
    with pytest.raises(OSError) as raised:
        luke_checkpointer.save_atomically({"w": torch.zeros(100_000)}, str(path))
    assert user_errors.one_line(user_errors.user_error(raised.value)) == (
        f"no space left on device writing {path}: free some space (or write elsewhere) and run the command again"
    )
    assert path.read_bytes() == b"previous" and os.listdir(tmp_path) == [path.name]

    def full(archive_file, *args):
        archive_file.write_bytes(b"partial")
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(archival, "_write_archive", full)
    (tmp_path / "best.th").write_bytes(b"")
    (tmp_path / "config.json").write_text("{}")
    with pytest.raises(OSError) as raised:
        archival.archive_model(tmp_path)
    assert str(user_errors.user_error(raised.value)).startswith(
        f"no space left on device writing {tmp_path / 'model.tar.gz'}: "
    )
    assert sorted(os.listdir(tmp_path)) == ["best.th", "config.json", path.name]


def _train_in_process(model_dir, out, epochs, monkeypatch, **overrides) -> int:
    """`allennlp train` of the fixture classifier into `out` through allennlp's (repaired) main: its exit status."""
    from allennlp.commands import main

    monkeypatch.setenv("MODEL_DIR", str(model_dir))
    monkeypatch.setenv("DATA", str(FIXTURES / "data" / "sentiment.jsonl"))
    overrides = json.dumps({"trainer.num_epochs": epochs, "trainer.learning_rate_scheduler": None, **overrides})
    monkeypatch.setattr(
        sys,
        "argv",
        ["allennlp", "train", str(FIXTURES / "configs" / "luke_classifier.jsonnet"), "-s", str(out), "-o", overrides],
    )
    handlers = logging.getLogger().handlers[:]
    try:
        with pytest.raises(SystemExit) as exited:
            main(prog="allennlp")
    finally:  # (allennlp's train logs to this test's stderr, closed after it)
        logging.getLogger().handlers[:] = handlers
    return exited.value.code


def test_interrupted_training_says_what_is_left_in_one_line(tiny_luke_dir, tmp_path, monkeypatch, capsys):
    """`allennlp train` stopped by a signal after its first checkpoint (here sent from inside the trainer, as a
    `kill` would): one line saying what was interrupted, that the checkpoint is intact and that --recover resumes."""
    import signal

    from allennlp.training.checkpointer import Checkpointer

    signum = "SIGHUP"  # (SIGTERM: the real command below; Ctrl-C: while writing the archive, next)
    save = Checkpointer.save_checkpoint

    def save_then_signal(self, trainer):
        save(self, trainer)
        os.kill(os.getpid(), getattr(signal, signum))

    monkeypatch.setattr(Checkpointer, "save_checkpoint", save_then_signal)
    out = tmp_path / "out"
    before = signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGHUP)
    assert _train_in_process(tiny_luke_dir, out, 3, monkeypatch) == 128 + getattr(signal, signum)
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"allennlp: error: train interrupted by {signum} while training; the last checkpoint in {out} (after 1 "
        f"epoch(s)) is intact: `allennlp train --recover -s {out}` resumes from it"
    )
    assert (signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGHUP)) == before  # restored


@pytest.mark.parametrize(
    "caught, trainer", [("swallowed", "luke_gradient_descent"), ("swallowed", "gradient_descent"), ("reworded", "")]
)
def test_a_signal_that_code_catches_still_stops_the_command(
    caught, trainer, tiny_luke_dir, tmp_path, monkeypatch, capsys
):
    """A SIGTERM raised inside code that catches any `Exception`: swallowed (a fallback that goes on), the trainer
    (allennlp's, or the project's, which calls it) raises it again before its next batch; reworded into another error (as
    torch's `load_state_dict` does), the command still reports the interruption, not that error. Either way: exit
    143 and the one line, and no epoch after the signal."""
    import signal

    from allennlp.training.checkpointer import Checkpointer

    from luke_allennlp.training.checkpointers.luke_checkpointer import LukeCheckpointer

    checkpointer = Checkpointer if trainer == "gradient_descent" else LukeCheckpointer
    save, signalled = checkpointer.save_checkpoint, []

    def save_then_signal(self, trainer):
        save(self, trainer)
        if signalled:  # (once)
            return
        signalled.append(True)
        try:
            os.kill(os.getpid(), signal.SIGTERM)
        except Exception as error:  # what a broad `except` in some library does with it
            if caught == "reworded":
                raise RuntimeError(f"While copying the parameter named 'w', an exception occurred: {error}") from None

    monkeypatch.setattr(checkpointer, "save_checkpoint", save_then_signal)
    out = tmp_path / "out"
    overrides = {"trainer.type": trainer or "luke_gradient_descent", "trainer.precision": "fp32"}
    if trainer == "gradient_descent":
        del overrides["trainer.precision"]
    assert _train_in_process(tiny_luke_dir, out, 3, monkeypatch, **overrides) == 128 + signal.SIGTERM
    err = capsys.readouterr().err.splitlines()[-1]
    assert err.startswith(f"allennlp: error: train interrupted by SIGTERM while training; the last checkpoint in {out}")
    # Not trained on: the epoch after the checkpoint would have written metrics_epoch_1.json.
    assert not (out / "metrics_epoch_1.json").exists()


def test_training_interrupted_while_writing_the_archive_says_the_checkpoint_is_intact(
    tiny_luke_dir, tmp_path, monkeypatch, capsys
):
    """Ctrl-C while `allennlp train` writes `model.tar.gz` (SIGINT sent from inside the writer): one line naming the
    phase, the intact last checkpoint and --recover; no archive left half written."""
    import signal

    from luke_allennlp import archival

    write = archival._write_archive

    def write_then_signal(archive_file, *args):
        write(archive_file, *args)
        os.kill(os.getpid(), signal.SIGINT)

    monkeypatch.setattr(archival, "_write_archive", write_then_signal)
    out = tmp_path / "out"
    assert _train_in_process(tiny_luke_dir, out, 1, monkeypatch) == 128 + signal.SIGINT
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"allennlp: error: train interrupted by SIGINT while writing the archive; the last checkpoint in {out} "
        f"(after 1 epoch(s)) is intact: `allennlp train --recover -s {out}` resumes from it"
    )
    assert not [name for name in os.listdir(out) if "tar.gz" in name]


def test_interrupted_predict_renames_its_partial_output(tmp_path):
    from luke_allennlp.cli.user_errors import interruption_state

    output = tmp_path / "out.jsonl"
    output.write_text('{"label": "pos"}\n')
    state = interruption_state("predict", ["predict", "a.tar.gz", "in.jsonl", f"--output-file={output}"], 0)
    assert state == f"what was written so far is in {output}.partial (incomplete): run the command again"
    assert os.listdir(tmp_path) == ["out.jsonl.partial"]
    assert interruption_state("train", ["train", "c.jsonnet", "-s", str(tmp_path / "none")], 0) == "nothing was written"


@pytest.mark.parametrize("signum", ["SIGTERM", "SIGINT"])
def test_an_interrupted_builder_leaves_no_partial_output(signum, shared_data, tmp_path, monkeypatch, capsys):
    """SIGTERM or Ctrl-C while `build-entity-vocab` writes its vocabulary: one line, status 128 + the signal's
    number, and no vocabulary file (it is renamed into place when complete)."""
    import signal

    from allennlp.commands import main

    from luke_allennlp.resources.entity_vocab import EntityVocab

    save_jsonl = EntityVocab.save_jsonl

    def save_half_then_signal(self, path):
        save_jsonl(self, path)
        os.kill(os.getpid(), getattr(signal, signum))

    monkeypatch.setattr(EntityVocab, "save_jsonl", save_half_then_signal)
    dump = shared_data / "wikipedia" / "enwiki-pages-articles-sample.xml.bz2"
    monkeypatch.setattr(
        sys, "argv", ["allennlp", "build-entity-vocab", str(dump), str(tmp_path / "vocab.jsonl"), "--num-workers", "1"]
    )
    with pytest.raises(SystemExit) as exited:
        main(prog="allennlp")
    assert exited.value.code == 128 + getattr(signal, signum)
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"allennlp: error: build-entity-vocab interrupted by {signum} while writing the output; no output is left as "
        "if complete (outputs are written whole, or removed): run the command again"
    )
    assert os.listdir(tmp_path) == []


def test_a_config_value_of_the_wrong_type_anywhere_is_one_line():
    """allennlp's own "Expected n to be a int." (a config value checked while an object is built, e.g. with
    `evaluate -o`): a user error, worded for the user; the same TypeError raised elsewhere is not."""
    from allennlp.common import FromParams, Params

    class Sized(FromParams):
        def __init__(self, n: int, rate: float = 0.5) -> None:
            self.n, self.rate = n, rate

    for params, message in [
        ({"n": "2"}, "the config's n must be an integer, not a value of another type"),
        ({"n": 2, "rate": "x"}, "the config's rate must be a number, not a value of another type"),
    ]:
        with pytest.raises(TypeError) as raised:
            Sized.from_params(Params(params))
        assert user_errors.one_line(user_errors.user_error(raised.value)) == message
    assert user_errors.user_error(TypeError("Expected n to be a int.")) is None


def test_the_allennlp_command_reports_a_kill_and_a_config_mistake_in_one_line(tiny_luke_dir, tmp_path):
    """The real command, two runs at once: `allennlp train` killed with SIGTERM once it has started (allennlp's own
    handler replaced by the layer's), and a string for a number stopping it before any work."""
    import re
    import signal
    import time

    config = str(FIXTURES / "configs" / "luke_classifier.jsonnet")
    env = {**os.environ, "MODEL_DIR": str(tiny_luke_dir), "DATA": str(FIXTURES / "data" / "sentiment.jsonl")}
    killed, refused = tmp_path / "killed", tmp_path / "refused"
    runs = [
        subprocess.Popen(
            [str(ALLENNLP), "train", config, "-s", str(out), "-o", overrides],
            stderr=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            text=True,
            cwd=REPO_ROOT,
            env=env,
        )
        for out, overrides in [(killed, '{"trainer.num_epochs": 500}'), (refused, '{"trainer.patience": "3"}')]
    ]
    deadline = time.monotonic() + 300
    while not (killed / "config.json").exists() and runs[0].poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)
    runs[0].send_signal(signal.SIGTERM)
    (_, killed_err), (_, refused_err) = (run.communicate(timeout=300) for run in runs)
    assert runs[0].returncode == 128 + signal.SIGTERM and "Traceback" not in killed_err, killed_err[-3000:]
    assert re.fullmatch(
        rf"allennlp: error: train interrupted by SIGTERM while [a-z ]+; no checkpoint was saved in {killed} yet: "
        "nothing to resume, start again",
        killed_err.splitlines()[-1],
    ), killed_err[-3000:]
    assert runs[1].returncode == 1 and refused_err.splitlines()[-1] == (
        'allennlp: error: trainer.patience: expected an integer, not the string "3"'
    )
    assert not refused.exists()


def test_a_full_disk_said_without_an_errno_is_found_too(tmp_path):
    """SQLite (the mention dictionary's builder) says "database or disk is full", with no errno."""
    import sqlite3

    error = sqlite3.OperationalError("database or disk is full")
    assert user_errors.one_line(user_errors.user_error(error)) == (
        "no space left on device: free some space (or write elsewhere) and run the command again"
    )


def test_data_loader_workers_leave_signals_to_the_main_process(tmp_path):
    """A Ctrl-C reaches every process of the group: allennlp's data loader workers ignore it (and SIGHUP) and leave
    the one line to the main process; each printed a KeyboardInterrupt traceback of its own."""
    import signal

    from allennlp.data import Instance
    from allennlp.data.data_loaders import MultiProcessDataLoader
    from allennlp.data.dataset_readers import DatasetReader
    from allennlp.data.fields import MetadataField

    class SignalsReader(DatasetReader):
        def _read(self, file_path):
            handlers = [signal.getsignal(s) for s in (signal.SIGINT, signal.SIGHUP, signal.SIGTERM)]
            yield Instance({"handlers": MetadataField((os.getpid(), handlers))})

    loader = MultiProcessDataLoader(SignalsReader(), "-", batch_size=1, num_workers=1)
    [instance] = list(loader.iter_instances())
    pid, handlers = instance["handlers"].metadata
    assert pid != os.getpid() and handlers == [signal.SIG_IGN, signal.SIG_IGN, signal.SIG_DFL]


def test_predict_names_a_line_nested_too_deeply(tiny_classifier_archive, tmp_path, monkeypatch, capsys):
    """A predict input line of 100,000 nested arrays was a `RecursionError` traceback: one line naming the line (any
    predictor's, here allennlp's own text classifier), the lines before it predicted and kept."""
    from allennlp.commands import main

    inputs, output = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    inputs.write_text('{"sentence": "a fine film"}\n{"sentence": ' + "[" * 100_000 + "]" * 100_000 + "}\n")
    argv = ["allennlp", "predict", str(tiny_classifier_archive), str(inputs), "--output-file", str(output), "--silent"]
    monkeypatch.setattr(sys, "argv", argv)
    with pytest.raises(SystemExit) as exited:
        main(prog="allennlp")
    assert exited.value.code == 1 and capsys.readouterr().err.splitlines()[-1] == (
        f"allennlp: error: {inputs}, line 2: JSON nested too deeply (Python's JSON reader stops at about 1,000 levels "
        "of arrays and objects)"
    )
    assert len(output.read_text().splitlines()) == 1
