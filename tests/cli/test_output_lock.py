"""One training run per serialization directory (luke_allennlp/cli/output_lock.py): a lock held by a live process
guards allennlp's serialization directory against a second `train`, `--recover` or `-f` while a run holds it."""

import json
import os
import socket
import subprocess
import sys

import pytest

from luke_allennlp.resources.output import OutputInUseError, OutputLock
from tests.conftest import FIXTURES, REPO_ROOT
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
