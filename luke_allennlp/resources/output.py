"""
Output safety: one owner per output, written whole or not at all, and a full disk said in one line.

Two builders into one output (`build-entity-vocab`, `build-pretraining-corpus`, ...) corrupted it, or the loser's
clean-up deleted the winner's work. An `OutputLock` is an exclusive `flock` on a lock file (released by the OS when its
process and the workers it forked end, even by SIGKILL; held whatever else the process opens and closes, which a POSIX
`lockf` lock is not; emulated with byte-range locks over NFS), which holds its holder's PID, host, start time and
command; a second writer is refused with an `OutputInUseError` naming them, in one line. The lock file is removed on
release (a stale one, left by a killed holder, is simply taken over). The builders take the lock beside their output
(`lock_output`: `OUT.lock`) before their work, and write it under a temporary name in its directory renamed into place
(`replaced_output`; both: `writing_output`), on failure removing only that temporary. `allennlp train` takes the lock
of its serialization directory (`DIRECTORY_LOCK` in it: `luke_allennlp.cli.output_lock`), `predict` and `evaluate` those
of their output files.

A lock is a directory's too: an output inside a directory whose `DIRECTORY_LOCK` a live process holds (a training run's
serialization directory) is refused (`acquire`) unless that process delegated the directory to the writer, its child
(`delegation`: `allennlp seeds`' runs), and the directory's owner refuses to start while another process writes inside
it (`held_locks_under`). Whoever takes a lock removes the temporaries that a killed writer left beside the output
(`.corpus.tmp-PID`, `.model.tar.gz.tmp-PID`; `remove_stale_temporaries`), and says so.

A full disk is a `DiskFullError` (`disk_full` finds one in an error's chain), and a worker process that writes leaves
Ctrl-C and SIGHUP to its main process (`worker_signals`).
"""

import contextlib
import errno
import json
import logging
import os
import re
import shutil
import signal
import socket
import sys
import time
from typing import Any, Dict, Iterator, List, Optional, Tuple

LOCK_SUFFIX = ".lock"  # beside a builder's output
DIRECTORY_LOCK = ".lock"  # in a directory that one process owns (a serialization directory)
# The directories whose owner lets this process write inside them: JSON [[owner PID, directory], ...] (`delegation`).
DELEGATED_VARIABLE = "LUKE_DELEGATED_DIRECTORIES"
# A temporary written beside its output: `.{stem}.tmp-PID{extension}` (`replaced_output`), `.{name}.tmp-PID` (archives),
# `{name}.tmp-PID` (checkpoints, vocabularies).
TEMPORARY = re.compile(r"(?P<dot>\.?)(?P<base>.+)\.tmp-(?P<pid>\d+)(?P<extension>(?:\.[A-Za-z0-9]+)?)")
PROBE_RETRIES = 10  # a lock found held is tried again this many times, 0.05 s apart (another process's probe)

logger = logging.getLogger(__name__)

_HELD: Dict[str, "OutputLock"] = {}  # lock file (real path) -> the lock this process holds on it


class OutputInUseError(OSError):
    """An output that another process (or this one) is writing (an `OSError`, as `FileExistsError` for an output
    that exists: the builders' commands report both in one line)."""

    user_error = True  # the `allennlp` command prints it as one line


def is_global_primary(node_rank: int = 0) -> bool:
    """Whether this process is the one that owns a (possibly shared) output: `RANK` 0 under torchrun, else the main
    process of node 0."""
    rank = os.environ.get("RANK", "").strip()
    return rank == "0" if rank else node_rank == 0


class OutputLock:
    """
    An exclusive lock on `lock_file` for writing `output`: `acquire` raises an `OutputInUseError` naming the
    holder (PID, host, since when, its command) if another process (or another lock of this one) holds it. Use as a
    context manager, or `acquire`/`release`.

    # Parameters

    lock_file : `str`
        The lock file (created; removed on release).
    output : `str`
        What is written, for the message.
    advice : `str`, optional
        What the refused user can do, appended to the message.
    """

    def __init__(self, lock_file: Any, output: Any, advice: str = "wait for it to finish, or choose another output"):
        self.lock_file = os.path.abspath(os.fspath(lock_file))
        self.output = os.fspath(output)
        self.advice = advice
        self.previous_holder: Optional[str] = None  # the line a holder killed before releasing left in the file
        self._fd: Optional[int] = None

    def acquire(self) -> "OutputLock":
        key = os.path.realpath(self.lock_file)
        if key in _HELD:
            raise OutputInUseError(self._refusal(_HELD[key]._holder))
        os.makedirs(os.path.dirname(self.lock_file), exist_ok=True)
        for attempt in range(PROBE_RETRIES + 1):
            fd = self._lock()
            if fd is not None:
                break
            if attempt < PROBE_RETRIES:  # (held a moment by another process's `lock_holder` probe: tried again)
                time.sleep(0.05)
        else:
            raise OutputInUseError(self._refusal(_read_holder(self.lock_file)))
        self.previous_holder = os.read(fd, 4096).decode("utf-8", "replace").strip() or None  # (a killed holder's)
        self._holder = _holder()
        os.ftruncate(fd, 0)
        os.pwrite(fd, self._holder.encode("utf-8"), 0)
        self._fd = fd
        _HELD[key] = self
        try:
            owner = live_directory_owner(os.path.dirname(os.path.abspath(self.output)))
            if owner is not None:
                directory, holder = owner
                raise OutputInUseError(
                    f"{self.output} is inside {directory}, which another process owns ({holder}): one writer per "
                    "directory: write it elsewhere, or wait for that process to end"
                )
        except BaseException:
            self.release()
            raise
        return self

    def _lock(self) -> Optional[int]:
        """The locked lock file's descriptor, or None where another process holds it."""
        import fcntl

        for _ in range(100):  # (a holder may remove the file between our open and our lock: then again)
            fd = os.open(self.lock_file, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as error:
                os.close(fd)
                if error.errno not in (errno.EACCES, errno.EAGAIN, errno.EWOULDBLOCK):
                    raise
                return None
            try:
                current = os.path.samestat(os.fstat(fd), os.stat(self.lock_file))
            except FileNotFoundError:
                current = False
            if current:
                return fd
            os.close(fd)
        raise OutputInUseError(f"{self.output}: could not lock {self.lock_file} (it keeps being replaced)")

    def release(self) -> None:
        if self._fd is None:
            return
        _HELD.pop(os.path.realpath(self.lock_file), None)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.lock_file)  # while still locked: a new holder locks a new file
        os.close(self._fd)
        self._fd = None

    def __enter__(self) -> "OutputLock":
        return self.acquire()

    def __exit__(self, *exc: Any) -> None:
        self.release()

    def _refusal(self, holder: str) -> str:
        return f"{self.output} is in use by another process ({holder}): {self.advice}"


def _holder() -> str:
    command = " ".join([os.path.basename(sys.argv[0] or "python"), *sys.argv[1:]]) if sys.argv else "python"
    command = command if len(command) <= 160 else command[:157] + "..."
    since = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime())
    return f"PID {os.getpid()} on host {socket.gethostname()}, since {since}: {command}"


def _read_holder(lock_file: str) -> str:
    """The holder's line of a lock file (waiting a moment for a holder that has just locked it to write it)."""
    for _ in range(20):
        try:
            with open(lock_file, encoding="utf-8", errors="replace") as f:
                text = " ".join(f.read().split())
        except FileNotFoundError:
            text = ""
        if text:
            return text
        time.sleep(0.025)
    return f"holder unknown: {lock_file} is locked but names no process"


def lock_holder(lock_file: Any) -> Optional[str]:
    """The holder's line of `lock_file` where a live process holds it (this one included), else None. The probe
    holds the lock a moment where no one does (`OutputLock.acquire` tries again)."""
    import fcntl

    lock_file = os.path.abspath(os.fspath(lock_file))
    held = _HELD.get(os.path.realpath(lock_file))
    if held is not None:
        return held._holder
    try:
        fd = os.open(lock_file, os.O_RDONLY)
    except OSError:  # (none, or not ours to read: not a lock of this project)
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError as error:
        if error.errno not in (errno.EACCES, errno.EAGAIN, errno.EWOULDBLOCK):
            return None
        return _read_holder(lock_file)
    finally:
        os.close(fd)  # (and the probe's shared lock with it)
    return None


def live_directory_owner(directory: Any) -> Optional[Tuple[str, str]]:
    """The nearest of `directory` and its parents that a live process other than this one owns (holds its
    `DIRECTORY_LOCK`: a training run's serialization directory), with the holder's line; None if there is none."""
    directory = os.path.abspath(os.fspath(directory))
    while True:
        lock_file = os.path.join(directory, DIRECTORY_LOCK)
        if os.path.realpath(lock_file) not in _HELD and os.path.isfile(lock_file):
            holder = lock_holder(lock_file)
            if holder is not None and holder.startswith("PID ") and " on host " in holder:  # (a lock of this project)
                if not _delegated(directory, holder):
                    return directory, holder
        parent = os.path.dirname(directory)
        if parent == directory:
            return None
        directory = parent


def delegation(directory: Any) -> Dict[str, str]:
    """The environment of a child process that may write inside `directory`, which this process owns (holds its
    `DIRECTORY_LOCK`): `allennlp seeds`' runs, each an `allennlp train` into a directory under its own. The owner is
    named by its PID, so a child does not write inside it once another process owns it."""
    entries = _delegations() + [[os.getpid(), os.path.realpath(os.fspath(directory))]]
    return {DELEGATED_VARIABLE: json.dumps(entries)}


def _delegations() -> List[List[Any]]:
    try:
        entries = json.loads(os.environ.get(DELEGATED_VARIABLE) or "[]")
    except ValueError:
        return []
    return [e for e in entries if isinstance(e, list) and len(e) == 2] if isinstance(entries, list) else []


def _delegated(directory: str, holder: str) -> bool:
    """Whether the owner `holder` of `directory` let this process write inside it (`delegation`)."""
    real = os.path.realpath(directory)
    return any(path == real and holder.startswith(f"PID {pid} ") for pid, path in _delegations())


def held_locks_under(directory: Any) -> List[Tuple[str, str]]:
    """The lock files inside `directory` (at any depth, its own `DIRECTORY_LOCK` aside) that a live process holds
    (another output's writer), each with its holder's line."""
    directory = os.path.abspath(os.fspath(directory))
    found = []
    for root, _, files in os.walk(directory):
        for name in files:
            path = os.path.join(root, name)
            if name.endswith(LOCK_SUFFIX) and path != os.path.join(directory, DIRECTORY_LOCK):
                holder = lock_holder(path)
                if holder is not None and os.path.realpath(path) not in _HELD:
                    found.append((path, holder))
    return sorted(found)


def lock_output(output: Any, advice: Optional[str] = None) -> "OutputLock":
    """The (not yet acquired) lock of a builder's output: the file `OUTPUT.lock` beside it. Acquired, it removes the
    temporaries of the output that a killed writer left (`remove_stale_temporaries`)."""
    output = os.path.abspath(os.fspath(output)).rstrip(os.sep)
    kwargs = {"advice": advice} if advice else {}
    return _CleaningLock(output + LOCK_SUFFIX, output, **kwargs)


class _CleaningLock(OutputLock):
    def acquire(self) -> "OutputLock":
        super().acquire()
        remove_stale_temporaries(os.path.dirname(self.output), self.previous_holder, os.path.basename(self.output))
        return self


def _temporary_outputs(name: str) -> Tuple[Optional[int], List[str]]:
    """The writer's PID of the temporary `name` and the names of the outputs it may be the temporary of (none:
    `name` is not a temporary)."""
    match = TEMPORARY.fullmatch(name)
    if match is None:
        return None, []
    base, extension = match.group("base"), match.group("extension")
    if match.group("dot"):  # `.{stem}.tmp-PID{extension}` or `.{name}.tmp-PID`
        return int(match.group("pid")), [base + extension] + ([base] if extension else [])
    return int(match.group("pid")), [base] if not extension else []


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_stale_temporaries(directory: Any, previous_holder: Optional[str], output: Optional[str] = None) -> List[str]:
    """
    Removes from `directory` the temporaries that a writer killed before it could clean up left behind, and logs
    each (path, size, whose). Called by a lock's new holder, for its output named `output`: that output's
    temporaries (no one else may write them), and those of its companions (`OUT.summary.json` beside `OUT.jsonl`)
    whose writer is dead; with `output` None, for a directory it owns: any temporary in it whose writer is dead. A
    temporary whose output's lock a live process holds is kept. Returns the paths removed.
    """
    directory = os.path.abspath(os.fspath(directory))
    try:
        names = sorted(os.listdir(directory))
    except OSError:
        return []
    stem = os.path.splitext(output)[0] + "." if output else None
    removed = []
    for name in names:
        pid, outputs = _temporary_outputs(name)
        if pid is None or pid == os.getpid():
            continue
        if output is None or output not in outputs:
            if stem is not None and not any(o.startswith(stem) for o in outputs):
                continue
            if _alive(pid) or any(lock_holder(os.path.join(directory, o + LOCK_SUFFIX)) for o in outputs):
                continue
        path = os.path.join(directory, name)
        size = _size(path)
        remove(path)
        removed.append(path)
        whose = previous_holder if previous_holder and previous_holder.startswith(f"PID {pid} ") else f"PID {pid}"
        logger.warning(
            "removed %s (%s), the temporary of a writer that ended without cleaning up (killed?): %s",
            path,
            _human(size),
            whose,
        )
    return removed


def _size(path: str) -> int:
    if not os.path.isdir(path) or os.path.islink(path):
        return os.lstat(path).st_size
    return sum(os.lstat(os.path.join(root, name)).st_size for root, _, files in os.walk(path) for name in files)


def _human(size: int) -> str:
    for unit in ("bytes", "KB", "MB", "GB"):
        if size < 1000 or unit == "GB":
            return f"{size} {unit}" if unit == "bytes" else f"{size:.1f} {unit}"
        size /= 1000
    return f"{size} bytes"


@contextlib.contextmanager
def replaced_output(output: Any, directory: bool = False, merge: bool = False) -> Iterator[str]:
    """
    Yields a temporary path beside `output` (an empty directory if `directory`) to write, and renames it into place
    when the block ends without error (over an existing file, or an empty directory; with `merge`, into an existing
    directory: each entry renamed over the one of its name, the others kept); on an error only the temporary is
    removed. The caller holds the output's lock (`lock_output`); `writing_output` takes it.
    """
    output = os.path.abspath(os.fspath(output)).rstrip(os.sep)
    parent, name = os.path.split(output)
    os.makedirs(parent, exist_ok=True)
    stem, extension = os.path.splitext(name)  # (the extension kept: some writers choose the format by it)
    temporary = os.path.join(parent, f".{stem}.tmp-{os.getpid()}{extension}")
    remove(temporary)  # (left by a killed run of this PID: the lock says no one else writes it)
    if directory:
        os.mkdir(temporary)
    try:
        yield temporary
        if directory and merge and os.path.isdir(output) and os.listdir(output):
            for entry in sorted(os.listdir(temporary)):
                target = os.path.join(output, entry)
                if os.path.isdir(target) and not os.path.islink(target):
                    remove(target)
                os.replace(os.path.join(temporary, entry), target)
            return
        if directory and os.path.isdir(output) and not os.listdir(output):
            os.rmdir(output)  # (an empty directory the user made: os.replace cannot replace it on every system)
        os.replace(temporary, output)
    finally:
        remove(temporary)


@contextlib.contextmanager
def writing_output(output: Any, directory: bool = False) -> Iterator[str]:
    """`replaced_output` holding the output's lock (`lock_output`): the output's one writer."""
    os.makedirs(os.path.dirname(os.path.abspath(os.fspath(output))), exist_ok=True)
    with lock_output(output), replaced_output(output, directory) as temporary:
        yield temporary


def remove(path: str) -> None:
    """Removes a file or directory tree if it exists."""
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)


DISK_FULL = (errno.ENOSPC, errno.EDQUOT)
DISK_FULL_MESSAGES = ("No space left on device", "Disk quota exceeded", "database or disk is full")  # (SQLite's)


class DiskFullError(OSError):
    """No space left on the device while writing `filename` (the original `OSError` is its cause)."""

    user_error = True

    def __str__(self) -> str:
        where = f" writing {self.filename}" if self.filename else ""
        return f"no space left on device{where}: free some space (or write elsewhere) and run the command again"


def disk_full(error: Optional[BaseException]) -> Optional[OSError]:
    """The `OSError` of a full disk in `error`'s chain, if there is one (or one made for an error that says so
    without an errno: SQLite's "database or disk is full", Arrow's IO errors)."""
    seen = set()
    while error is not None and id(error) not in seen:
        if isinstance(error, OSError) and error.errno in DISK_FULL:
            return error
        if any(message in str(error) for message in DISK_FULL_MESSAGES):
            return OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), getattr(error, "filename", None))
        seen.add(id(error))
        error = error.__cause__ or error.__context__
    return None


def worker_signals() -> None:
    """In a worker process: Ctrl-C and SIGHUP (sent to the whole process group) ignored, the main process stops the
    workers and says so in one line; SIGTERM (how the main process stops them) exits, as by default."""
    for signum in (signal.SIGINT, getattr(signal, "SIGHUP", None)):
        if signum is not None:
            signal.signal(signum, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
