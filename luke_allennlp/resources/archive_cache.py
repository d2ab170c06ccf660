"""
An extraction cache for model archives: a `model.tar.gz` is decompressed once, not at every `allennlp predict`,
`evaluate` or `Predictor.from_path` (LUKE base: 5.6 s of a 7.8 s start).

Entries are keyed by the archive's content (SHA-256; a file whose size, modification and change times, inode and
device are those of a file hashed before is not read again) and live in a private directory (mode 0700) under
`$LUKE_ARCHIVE_CACHE` (default `$XDG_CACHE_HOME/luke_allennlp/archives`, i.e. `~/.cache/luke_allennlp/archives`;
`LUKE_ARCHIVE_CACHE=off` extracts to a temporary directory as before). What an entry holds is what
`resources.archives.extract_archive` wrote, once, with all its checks (traversal, links, decompression bombs,
corruption); whoever loads the entry checks the archive's config as for any archive (`archival.load_archive`).

- One writer per entry: extraction holds the entry's lock exclusively, into a temporary directory renamed into place
  when complete, so two processes loading the same archive at once extract it once and both see it whole (and a
  crash leaves no half entry).
- Bounded: after an entry is added, the least recently used ones are removed while the entries hold more than
  `LUKE_ARCHIVE_CACHE_MAX_BYTES` (default 16G; K/M/G/T suffixes), the newest always kept. An entry in use (a process
  that loaded it holds its lock, shared, until it exits) is never removed.
- `python -m luke_allennlp.resources.archive_cache clear` removes every entry not in use (or delete the directory when
  nothing runs).
"""

import contextlib
import hashlib
import json
import logging
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Tuple

logger = logging.getLogger(__name__)

DEFAULT_MAX_BYTES = 16 << 30
_HELD: Dict[str, int] = {}  # entry -> the descriptor of its lock, held shared while this process may use it


def cache_root() -> Optional[Path]:
    """The cache's directory, or None when the cache is off (`LUKE_ARCHIVE_CACHE=off`)."""
    setting = os.environ.get("LUKE_ARCHIVE_CACHE", "").strip()
    if setting.lower() in ("off", "0", "none", "false"):
        return None
    if setting:
        return Path(setting).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "luke_allennlp" / "archives"


def max_bytes() -> float:
    value = os.environ.get("LUKE_ARCHIVE_CACHE_MAX_BYTES", "").strip()
    if not value:
        return DEFAULT_MAX_BYTES
    scale = 1 << (10 * " KMGT".index(value[-1].upper())) if value[-1].upper() in "KMGT" else 1
    try:
        return float(value[:-1] if scale > 1 else value) * scale
    except ValueError:
        raise ValueError(
            f"LUKE_ARCHIVE_CACHE_MAX_BYTES={value!r}: expected a number (bytes may end in K, M, G or T)"
        ) from None


def content_key(archive: Path, root: Path) -> str:
    """The SHA-256 of the archive's bytes; remembered (in `root/hashes.json`) against the file's identity and times,
    so that an unchanged file is not read again."""
    stat = archive.stat()
    identity = [stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns, stat.st_ino, stat.st_dev]
    memo_path = root / "hashes.json"
    with _locked(root / "hashes.lock", exclusive=False):
        memo = _read_json(memo_path)
    name = str(archive.resolve())
    if memo.get(name, {}).get("identity") == identity:
        return memo[name]["sha256"]
    digest = hashlib.sha256()
    with open(archive, "rb") as f:
        for block in iter(lambda: f.read(1 << 22), b""):
            digest.update(block)
    key = digest.hexdigest()
    with _locked(root / "hashes.lock", exclusive=True):
        memo = {k: v for k, v in _read_json(memo_path).items() if os.path.exists(k)}  # (archives since removed)
        memo[name] = {"identity": identity, "sha256": key}
        _write_atomically(memo_path, json.dumps(memo))
    return key


def cached_extraction(archive: os.PathLike, extract) -> Optional[Path]:
    """The directory of `archive`'s cache entry, extracted with `extract(archive, directory)` if it is not there yet
    (None when the cache is off). This process holds the entry's lock shared until it exits."""
    root = cache_root()
    if root is None:
        return None
    root.mkdir(parents=True, exist_ok=True, mode=0o700)
    archive = Path(archive)
    key = content_key(archive, root)
    entry = root / key
    if str(entry) not in _HELD:
        in_use = os.open(root / f"{key}.lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            _flock(in_use, exclusive=False)  # shared: in use (`evict` takes it exclusively, without waiting)
            if not entry.is_dir():
                with _locked(root / f"{key}.build", exclusive=True):  # one writer; the others wait, then find it
                    if not entry.is_dir():
                        building = Path(tempfile.mkdtemp(prefix=f".{key}.", dir=root))
                        try:
                            extract(archive, building)
                            os.rename(building, entry)  # the entry appears whole, or not at all
                        finally:
                            shutil.rmtree(building, ignore_errors=True)
                        logger.info("%s extracted into the archive cache: %s", archive, entry)
        except BaseException:
            os.close(in_use)
            raise
        _HELD[str(entry)] = in_use  # (closed at exit, which releases the lock)
        logger.info("%s: its extraction in the archive cache is used (%s)", archive, entry)
    os.utime(entry)  # recently used
    evict(root, keep=entry)
    return entry


def evict(root: Path, keep: Optional[Path] = None, limit: Optional[float] = None) -> List[Path]:
    """Removes the least recently used entries not in use while the entries hold more than `limit` bytes
    (`max_bytes()`; 0 removes all it can), never `keep`. Returns those removed."""
    limit = max_bytes() if limit is None else limit
    entries = sorted((p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")), key=_last_used)
    sizes = {entry: _size(entry) for entry in entries}
    total = sum(sizes.values())
    removed = []
    for entry in entries:  # oldest first
        if total <= limit:
            break
        if entry == keep or str(entry) in _HELD:
            continue
        descriptor = os.open(root / f"{entry.name}.lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            if not _flock(descriptor, exclusive=True, wait=False):
                continue  # in use by another process
            doomed = root / f".{entry.name}.removing"
            os.rename(entry, doomed)
            shutil.rmtree(doomed, ignore_errors=True)
            total -= sizes[entry]
            removed.append(entry)
        finally:
            os.close(descriptor)
    return removed


def _last_used(entry: Path) -> float:
    with contextlib.suppress(OSError):
        return entry.stat().st_mtime
    return 0.0


def _size(directory: Path) -> int:
    total = 0
    for base, _, files in os.walk(directory):
        for name in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(base, name)).st_size
    return total


def _flock(descriptor: int, exclusive: bool, wait: bool = True) -> bool:
    import fcntl

    flags = (fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH) | (0 if wait else fcntl.LOCK_NB)
    try:
        fcntl.flock(descriptor, flags)
    except BlockingIOError:
        return False
    return True


@contextlib.contextmanager
def _locked(path: Path, exclusive: bool) -> Iterator[None]:
    descriptor = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        _flock(descriptor, exclusive)
        yield
    finally:
        os.close(descriptor)


def _read_json(path: Path) -> dict:
    with contextlib.suppress(OSError, ValueError):
        value = json.loads(path.read_text(encoding="utf-8"))
        return value if isinstance(value, dict) else {}
    return {}


def _write_atomically(path: Path, text: str) -> None:
    descriptor, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    with os.fdopen(descriptor, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(temporary, path)


def _entries(root: Path) -> List[Tuple[Path, int, float]]:
    return [(p, _size(p), _last_used(p)) for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")]


def main(argv: List[str]) -> int:
    root = cache_root()
    if root is None or not root.is_dir():
        print(f"no archive cache ({'off' if root is None else root})")
        return 0
    if argv[:1] == ["clear"]:
        removed = evict(root, limit=0)
        print(f"{root}: removed {len(removed)} entries; {len(_entries(root))} in use kept")
        return 0
    for entry, size, used in sorted(_entries(root), key=lambda e: -e[2]):
        print(
            f"{entry.name}  {size / (1 << 20):,.0f} MiB  last used {time.strftime('%Y-%m-%d %H:%M', time.localtime(used))}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
