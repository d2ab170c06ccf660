"""One owner per output (luke_allennlp/resources/output.py): a lock held by a live process refuses a second writer in
one line naming its PID and host, and is released when its holder is killed; an output is replaced only whole."""

import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from luke_allennlp.resources.output import (
    OutputInUseError,
    is_global_primary,
    lock_output,
    replaced_output,
    writing_output,
)
from tests.conftest import REPO_ROOT

HOLDER = """
import sys, time
from luke_allennlp.resources.output import OutputLock
lock = OutputLock(sys.argv[1], sys.argv[2]).acquire()
print("holding", flush=True)
time.sleep(600)
"""

TRY = """
import sys
from luke_allennlp.resources.output import OutputInUseError, OutputLock
try:
    OutputLock(sys.argv[1], sys.argv[2]).acquire()
    print("acquired")
except OutputInUseError as error:
    print(error)
"""


@pytest.fixture
def holder():
    """Starts a process that holds the lock of a file (`holder(lock_file, output)`), killed at the end."""
    processes = []

    def start(lock_file: Path, output: Path) -> subprocess.Popen:
        process = subprocess.Popen(
            [sys.executable, "-c", HOLDER, str(lock_file), str(output)],
            cwd=REPO_ROOT,
            stdout=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
        )
        processes.append(process)
        assert process.stdout.readline().strip() == "holding"
        return process

    yield start
    for process in processes:
        process.kill()
        process.wait()


def test_a_second_writer_is_refused_naming_the_holder_and_a_killed_holder_releases(holder, tmp_path):
    output = tmp_path / "vocab.jsonl"
    process = holder(Path(f"{output}.lock"), output)
    with pytest.raises(OutputInUseError) as refused:
        lock_output(output).acquire()
    message = str(refused.value)
    assert message.startswith(
        f"{output} is in use by another process (PID {process.pid} on host {socket.gethostname()}, "
    )
    assert "\n" not in message and "-c" in message  # (its command)
    with pytest.raises(OutputInUseError, match=f"PID {process.pid} "):
        with writing_output(output) as temporary:
            Path(temporary).write_text("loser")
    assert not output.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["vocab.jsonl.lock"]

    process.send_signal(signal.SIGKILL)
    process.wait()
    with writing_output(output) as temporary:  # the stale lock file of the killed holder is taken over
        assert not output.exists()
        Path(temporary).write_text("winner")
        with pytest.raises(OutputInUseError, match=f"PID {os.getpid()} "):  # (a second lock in this process too)
            lock_output(output).acquire()
    assert output.read_text() == "winner" and sorted(p.name for p in tmp_path.iterdir()) == ["vocab.jsonl"]


def test_writing_output_replaces_only_on_success_and_removes_only_its_own_temporary(tmp_path):
    output = tmp_path / "corpus"
    (tmp_path / "other").mkdir()
    with pytest.raises(RuntimeError), writing_output(output, directory=True) as temporary:
        (Path(temporary) / "part").write_text("half")
        raise RuntimeError("interrupted")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["other"]
    output.mkdir()  # (an empty directory made beforehand is replaced)
    with writing_output(output, directory=True) as temporary:
        (Path(temporary) / "part").write_text("whole")
    assert (output / "part").read_text() == "whole"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corpus", "other"]
    (output / "kept").write_text("the user's")  # (export-luke into an existing directory: file by file)
    with replaced_output(output, directory=True, merge=True) as temporary:
        (Path(temporary) / "part").write_text("newer")
    assert (output / "part").read_text() == "newer" and (output / "kept").read_text() == "the user's"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corpus", "other"]


def test_only_the_global_primary_locks(monkeypatch):
    monkeypatch.delenv("RANK", raising=False)
    assert is_global_primary(0) and not is_global_primary(1)
    monkeypatch.setenv("RANK", "3")
    assert not is_global_primary(0)
    monkeypatch.setenv("RANK", "0")
    assert is_global_primary(0)


def test_a_directory_owner_lets_only_the_children_it_delegated_to_write_inside(tmp_path):
    """`allennlp seeds` owns DIR and trains each seed in DIR/seed-N by a child `allennlp train`: a child given the
    owner's `delegation` writes inside; without it, or with another owner's PID, it is refused as inside DIR."""
    from luke_allennlp.resources.output import DELEGATED_VARIABLE, DIRECTORY_LOCK, OutputLock, delegation

    owned = tmp_path / "seeds"
    output = owned / "seed-1" / "out"

    def child_tries(extra_env):
        env = {name: value for name, value in os.environ.items() if name != DELEGATED_VARIABLE}
        env.update(PYTHONPATH=str(REPO_ROOT), **extra_env)
        result = subprocess.run(
            [sys.executable, "-c", TRY, str(output) + ".lock", str(output)],
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
        )
        return result.stdout.strip()

    with OutputLock(owned / DIRECTORY_LOCK, owned):
        assert child_tries({}).startswith(f"{output} is inside {owned}, which another process owns (PID {os.getpid()} ")
        assert child_tries(delegation(owned)) == "acquired"
        assert child_tries(delegation(tmp_path / "elsewhere")).startswith(f"{output} is inside {owned}")
        other_owner = {DELEGATED_VARIABLE: f'[[{os.getpid() + 1}, "{os.path.realpath(owned)}"]]'}
        assert child_tries(other_owner).startswith(f"{output} is inside {owned}")
