"""One training run per serialization directory, one writer per output of `predict` and `evaluate`
(luke_allennlp/cli/output_lock.py): a lock held by a live process guards allennlp's serialization directory against a
second `train`, `--recover` or `-f` while a run holds it, an output file against a second writer, a directory against
writers inside it; the next owner of a lock removes what a killed writer left."""

import json
import logging
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Tuple

import pytest

from luke_allennlp.resources.output import OutputInUseError, OutputLock, lock_output
from tests.conftest import ALLENNLP, FIXTURES, REPO_ROOT
from tests.resources.test_output import TRY, holder  # noqa: F401  (a fixture)


def test_a_serialization_directory_has_one_run_at_a_time(holder, tiny_luke_dir, tmp_path, monkeypatch, capsys):  # noqa: F811
    """While a run holds `-s DIR` (a holder process), `allennlp train`, `--recover` and `-f` are refused in one line
    naming it, and nothing in DIR is touched; a run holds the lock for its life (only on the global primary); once the
    holder is killed, `--recover` goes on."""
    from allennlp.commands import main
    from allennlp.commands import train as train_command

    run = tmp_path / "run"
    run.mkdir()
    (run / "config.json").write_text("{}")
    (run / "out.log").write_text("the live run's log")
    process = holder(run / ".lock", run)
    monkeypatch.setenv("MODEL_DIR", str(tiny_luke_dir))
    monkeypatch.setenv("DATA", str(FIXTURES / "data" / "sentiment.jsonl"))
    config = str(FIXTURES / "configs" / "luke_classifier.jsonnet")
    for flags in ([], ["--recover"], ["-f"]):
        monkeypatch.setattr(sys, "argv", ["allennlp", "train", config, "-s", str(run), *flags])
        capsys.readouterr()
        with pytest.raises(SystemExit) as exited:
            main(prog="allennlp")
        assert exited.value.code == 1
        err = capsys.readouterr().err
        assert err.startswith(f"allennlp: error: {run} is in use by another process (PID {process.pid} on host "), err
        assert err.count("\n") == 1 and "one training run per serialization directory" in err
    assert sorted(p.name for p in run.iterdir()) == [".lock", "config.json", "out.log"]

    # A run holds the lock while it trains (the worker is replaced: what matters is who holds the directory).
    seen = []

    def worker(*args, **kwargs):
        seen.append((run / ".lock").read_text())  # (reading the file in this process keeps the lock: flock)
        with pytest.raises(OutputInUseError):
            OutputLock(run / ".lock", run).acquire()
        other = subprocess.run(
            [sys.executable, "-c", TRY, str(run / ".lock"), str(run)],
            capture_output=True,
            text=True,
            cwd=REPO_ROOT,
            env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
        )
        seen.append(other.stdout)

    process.kill()
    process.wait()
    monkeypatch.setattr(train_command, "_train_worker", worker)
    monkeypatch.setattr(sys, "argv", ["allennlp", "train", config, "-s", str(run), "-f", "--dry-run"])
    main(prog="allennlp")
    assert len(seen) == 2 and seen[0].startswith(f"PID {os.getpid()} on host {socket.gethostname()}")
    assert seen[1].startswith(f"{run} is in use by another process (PID {os.getpid()} "), seen[1]
    assert sorted(p.name for p in run.iterdir()) == ["config.json", "meta.json"]  # (-f: the old run's files gone)
    # Another node's process (or a torchrun rank other than 0) never takes the lock: the primary holds it.
    process = holder(run / ".lock", run)
    monkeypatch.setenv("RANK", "1")
    seen.clear()
    monkeypatch.setattr(train_command, "_train_worker", lambda *args, **kwargs: seen.append(True))
    monkeypatch.setattr(sys, "argv", ["allennlp", "train", config, "-s", str(run), "--recover", "--dry-run"])
    main(prog="allennlp")
    assert seen == [True] and json.loads((run / "config.json").read_text())["model"]["type"] == "basic_classifier"


def in_process(monkeypatch, capsys, *args) -> Tuple[int, str]:
    """`allennlp ARGS` through allennlp's (repaired) main in this process: its exit status and standard error."""
    from allennlp.commands import main

    monkeypatch.setattr(sys, "argv", ["allennlp", *map(str, args)])
    capsys.readouterr()
    code = 0
    try:
        main(prog="allennlp")
    except SystemExit as exited:
        code = exited.code
    return code, capsys.readouterr().err


def test_two_predicts_into_one_output_file_one_is_refused(tiny_classifier_archive, tmp_path, monkeypatch, capsys):
    """The real `allennlp predict` holds its --output-file (reading its input from a pipe kept open); a second
    `predict` into that file is refused in one line naming the first, before it loads anything; the first's output
    comes out whole, and no lock file is left. (Both exited 0 with broken JSON lines mixed from the two runs.)"""
    output = tmp_path / "predictions.jsonl"
    first = subprocess.Popen(
        [str(ALLENNLP), "predict", str(tiny_classifier_archive), "-", "--output-file", str(output), "--silent"],
        stdin=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO_ROOT,
    )
    try:
        deadline = time.monotonic() + 120
        while not Path(f"{output}.lock").exists() and first.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        (tmp_path / "in.jsonl").write_text('{"sentence": "a dull film"}\n')
        code, err = in_process(
            monkeypatch, capsys, "predict", "missing.tar.gz", tmp_path / "in.jsonl", "--output-file", output
        )
        assert code == 1 and err.startswith(
            f"allennlp: error: {output} is in use by another process (PID {first.pid} on host {socket.gethostname()}, "
        ), err
        assert err.count("\n") == 1 and err.rstrip().endswith("wait for it to end, or choose another --output-file")
        _, stderr = first.communicate('{"sentence": "a wonderful film"}\n{"sentence": "a fine film"}\n', timeout=300)
    finally:
        first.kill()
    assert first.returncode == 0, stderr[-3000:]
    rows = [json.loads(line) for line in output.read_text().splitlines()]
    assert [r["tokens"][2] for r in rows] == ["\u0120wonderful", "\u0120fine"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.jsonl", "predictions.jsonl"]


def test_evaluate_and_train_never_write_one_directory_at_once(holder, tmp_path, monkeypatch, capsys, caplog):  # noqa: F811
    """`evaluate DIR/model.tar.gz` into DIR while a training owns DIR (a holder of DIR/.lock) is refused before it
    loads anything; `train -f` (or `--recover`) of DIR while an `evaluate` writes into it (a holder of its output's
    lock) is refused, and deletes nothing (it deleted the predictions; the old metrics ended beside the new archive)."""
    run = tmp_path / "run"
    run.mkdir()
    (run / "model.tar.gz").write_bytes(b"the archive")
    training = holder(run / ".lock", run)
    metrics, predictions = run / "test_metrics.json", run / "test_predictions.jsonl"
    args = ["evaluate", run / "model.tar.gz", "data.jsonl", "--output-file", metrics]
    code, err = in_process(monkeypatch, capsys, *args, "--predictions-output-file", predictions)
    assert code == 1 and err == (
        f"allennlp: error: {metrics} is inside {run}, which another process owns ("
        + (run / ".lock").read_text()
        + "): one writer per directory: write it elsewhere, or wait for that process to end\n"
    )
    assert sorted(p.name for p in run.iterdir()) == [".lock", "model.tar.gz"]
    training.kill()
    training.wait()

    evaluating = holder(Path(f"{predictions}.lock"), predictions)
    predictions.write_text('{"label": "pos"}\n')
    monkeypatch.setenv("MODEL_DIR", "none")
    monkeypatch.setenv("DATA", "none")
    for flag in ("-f", "--recover"):
        code, err = in_process(
            monkeypatch, capsys, "train", FIXTURES / "configs" / "luke_classifier.jsonnet", "-s", run, flag
        )
        assert code == 1 and err.startswith(
            f"allennlp: error: {run} is being written by another process (PID {evaluating.pid} on host "
        ), err
        assert err.rstrip().endswith(
            f"writing {predictions}): one writer per directory: wait for it to end, or train into another directory"
        )
    assert sorted(p.name for p in run.iterdir()) == [  # (the killed training's lock file: taken over, released)
        "model.tar.gz",
        predictions.name,
        f"{predictions.name}.lock",
    ]
    assert predictions.read_text() == '{"label": "pos"}\n'


KILLED_WRITER = """
import os, sys, time
from luke_allennlp.resources.output import OutputLock
lock = OutputLock(sys.argv[1], sys.argv[2]).acquire()
for name in sys.argv[3:]:
    path = os.path.join(os.path.dirname(sys.argv[1]), name.replace("PID", str(os.getpid())))
    if name.endswith("/"):
        os.makedirs(path)
        path = os.path.join(path, "part")
    with open(path, "wb") as f:
        f.write(b"x" * 4096)
print("written", flush=True)
time.sleep(600)
"""


def killed_writer(lock_file: Path, output: Path, *temporaries: str) -> int:
    """A process that took `lock_file` and wrote `temporaries` ("PID" in a name: its PID; "/" at the end: a folder
    holding a file), killed with SIGKILL: its PID."""
    process = subprocess.Popen(
        [sys.executable, "-c", KILLED_WRITER, str(lock_file), str(output), *temporaries],
        stdout=subprocess.PIPE,
        text=True,
        cwd=REPO_ROOT,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
    )
    assert process.stdout.readline().strip() == "written"
    process.kill()
    process.wait()
    return process.pid


def test_the_next_owner_removes_what_a_killed_writer_left_and_says_so(holder, tmp_path, monkeypatch, caplog):  # noqa: F811
    """After SIGKILL a builder's `.corpus.tmp-PID` and a training's `.model.tar.gz.tmp-PID` (and a checkpoint's
    temporary) stayed for ever: the next owner of the output's lock removes them, in one warning each naming the
    file, its size and the killed holder; another output's temporaries, and a live writer's, stay."""
    from allennlp.commands import main
    from allennlp.commands import train as train_command

    corpus = tmp_path / "out" / "corpus"
    (tmp_path / "out").mkdir()
    pid = killed_writer(Path(f"{corpus}.lock"), corpus, ".corpus.tmp-PID/", ".other.tmp-PID.json")
    with caplog.at_level(logging.WARNING, logger="luke_allennlp.resources.output"), lock_output(corpus):
        assert sorted(p.name for p in corpus.parent.iterdir()) == [f".other.tmp-{pid}.json", "corpus.lock"]
    (warning,) = [r.getMessage() for r in caplog.records if r.name == "luke_allennlp.resources.output"]
    assert warning.startswith(
        f"removed {corpus.parent / f'.corpus.tmp-{pid}'} (4.1 KB), the temporary of a writer that ended without "
        f"cleaning up (killed?): PID {pid} on host {socket.gethostname()}, since "
    ), warning

    run = tmp_path / "run"
    run.mkdir()
    live = holder(tmp_path / "live.lock", tmp_path)  # a live process: its temporary is its own
    (run / f"model_state_e1_b0.th.tmp-{live.pid}").write_bytes(b"live")
    pid = killed_writer(run / ".lock", run, ".model.tar.gz.tmp-PID", "model_state_e2_b0.th.tmp-PID")
    caplog.clear()
    monkeypatch.setenv("MODEL_DIR", "none")
    monkeypatch.setenv("DATA", "none")
    monkeypatch.setattr(train_command, "_train_worker", lambda *args, **kwargs: None)
    config = FIXTURES / "configs" / "luke_classifier.jsonnet"
    monkeypatch.setattr(sys, "argv", ["allennlp", "train", str(config), "-s", str(run), "--recover", "--dry-run"])
    with caplog.at_level(logging.WARNING, logger="luke_allennlp.resources.output"), pytest.raises(SystemExit):
        main(prog="allennlp")  # (--recover: nothing to recover from; the lock's new owner has cleaned up first)
    removed = sorted(
        r.getMessage().split(" (")[0] for r in caplog.records if r.name == "luke_allennlp.resources.output"
    )
    assert removed == [
        f"removed {run / f'.model.tar.gz.tmp-{pid}'}",
        f"removed {run / f'model_state_e2_b0.th.tmp-{pid}'}",
    ]
    assert sorted(p.name for p in run.iterdir()) == [f"model_state_e1_b0.th.tmp-{live.pid}"]


def test_outputs_that_cannot_be_written_are_refused_before_any_work(tmp_path, monkeypatch, capsys):
    """`evaluate --output-file DIR` ran the whole evaluation, then lost the metrics: an output that is a directory,
    or under a file, is refused before the archive (here missing) is even opened; `predict` too."""
    (tmp_path / "file").write_text("a file")
    (tmp_path / "folder").mkdir()
    cases = [
        (("evaluate", "--output-file", tmp_path / "folder"), f"--output-file {tmp_path / 'folder'} is a directory"),
        (
            ("evaluate", "--predictions-output-file", tmp_path / "file" / "p.jsonl"),
            f"--predictions-output-file {tmp_path / 'file' / 'p.jsonl'} cannot be written: {tmp_path / 'file'} is a "
            "file, not a folder",
        ),
        (("predict", "--output-file", tmp_path / "folder"), f"--output-file {tmp_path / 'folder'} is a directory"),
    ]
    for (command, option, path), message in cases:
        code, err = in_process(monkeypatch, capsys, command, tmp_path / "missing.tar.gz", "in.jsonl", option, path)
        assert code == 1 and err.startswith(f"allennlp: error: {message}") and err.count("\n") == 1, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file", "folder"]
