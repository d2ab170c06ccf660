"""
Safe extraction of model archives.

`allennlp.models.archival` extracts `model.tar.gz` with `tarfile.extractall` and no filter, which before Python 3.14
trusts every member: `../` names, absolute paths and links write outside the extraction directory (CVE-2007-4559; the
patch offered upstream, allenai/allennlp#5725, was never merged). And tarfile stops reading before gzip's trailer, so
a corrupted archive (flipped bytes) loads with garbage weights. `extract_archive` refuses unsafe members before
writing them (and extracts through tarfile's `data` filter where it exists), refuses decompression bombs, and reads
the stream to its end so that gzip checks its CRC; an `ArchiveError` names the archive and what is wrong. It replaces
allennlp's `extracted_archive` (used by `load_archive`: `predict`, `evaluate`, `from_archive` models, the pretrained
initializer) and `cached_path`'s tar check (`checked_tarfile`, for `extract_archive=True`), and makes `data` the
default filter of any other extraction in the process (`allennlp.tools.archive_surgery`): `luke_allennlp.cli.archives`.
"""

import math
from typing import Any, Dict, Optional, Tuple


class ArchiveError(ValueError):
    """An archive that cannot be extracted safely: corrupted, not a tar archive, with a member that could
    write outside the extraction directory, or one that extracts to more than the limits below."""

    user_error = True  # the `allennlp` command prints it as one line


# Limits against decompression bombs (an 8.9 MB gzip of a 2 GiB member): the members' sizes, read from their
# headers before anything is written, may add up to at most MAX_RATIO times the archive's compressed size (but
# always to RATIO_FLOOR: small archives of text compress well) and never to more than MAX_BYTES. Trained weights
# compress by ~1.1x, vocabularies by 3-5x. The environment variables LUKE_ARCHIVE_MAX_RATIO and
# LUKE_ARCHIVE_MAX_BYTES (a number of bytes, or with a K/M/G/T suffix) override them; 0 lifts a limit.
ARCHIVE_MAX_RATIO = 100.0
ARCHIVE_RATIO_FLOOR = 64 << 20
ARCHIVE_MAX_BYTES = 32 << 30


def _archive_limit(compressed: Optional[int]) -> Tuple[float, str]:
    """The most bytes an archive of `compressed` bytes may extract to, and what sets that limit."""
    ratio = limit_setting("LUKE_ARCHIVE_MAX_RATIO", ARCHIVE_MAX_RATIO)
    absolute = limit_setting("LUKE_ARCHIVE_MAX_BYTES", ARCHIVE_MAX_BYTES)
    relative = max(ratio * compressed, ARCHIVE_RATIO_FLOOR) if compressed is not None else math.inf
    if relative < absolute:
        bomb = "a decompression bomb? LUKE_ARCHIVE_MAX_RATIO raises the limit"
        if ratio * compressed < ARCHIVE_RATIO_FLOOR:
            return relative, f"{{limit}}, the least limit for any archive ({bomb})"
        return relative, f"{ratio:g} times the archive's {_size(compressed)} ({bomb})"
    return absolute, "the limit of {limit} (LUKE_ARCHIVE_MAX_BYTES raises it)"


def limit_setting(variable: str, default: float) -> float:
    """A limit from the environment: a number (bytes may end in K, M, G or T), 0 for none (`math.inf`); a negative
    or not finite one is refused in one line (it used to lift both limits silently)."""
    import os

    value = os.environ.get(variable, "").strip()
    if not value:
        return default
    scale = 1 << (10 * " KMGT".index(value[-1].upper())) if value[-1].upper() in "KMGT" else 1
    try:
        number = float(value[:-1] if scale > 1 else value) * scale
    except ValueError:
        number = math.nan
    if not math.isfinite(number) or number < 0:
        raise ArchiveError(
            f"{variable}={value!r}: expected a number of at least 0 (bytes may end in K, M, G or T; 0 lifts the limit)"
        )
    return number if number > 0 else math.inf


def _size(n: float) -> str:
    """`n` bytes for a person, in GiB, MiB or KiB to a tenth (bytes below 1 KiB)."""
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n:.0f} bytes"


def _sizes(n: float, limit: float) -> Tuple[str, str]:
    """`_size` of both, or their exact bytes where those would read the same ("1.0 MiB more than 1.0 MiB")."""
    if _size(n) == _size(limit):
        return f"{n:,.0f} bytes", f"{limit:,.0f} bytes"
    return _size(n), _size(limit)


def extract_archive(archive_file: Any, directory: Any) -> None:
    """
    Extracts a tar archive (plain, gzip, bzip2 or xz) into `directory` in one pass over its stream, or raises an
    `ArchiveError` naming the archive and what is wrong:

    - unsafe members, refused before they are written (`_MemberCheck`): absolute names, names leaving the
      directory (`../`), devices and pipes, links (symbolic or hard) pointing outside it or to anything but an
      earlier member, paths through a symbolic link, a member replacing an earlier one. Where tarfile has the
      `data` filter (Python 3.8.17+, 3.9.17+, 3.10.12+, 3.11.4+), extraction goes through it as well;
    - corruption: the compressed stream is read to its end, so that gzip (bzip2, xz) checks its CRC and length;
      tarfile alone stops after the last member, before gzip's trailer, and takes a bad header after the first
      for the end of the archive. An uncompressed tar has no checksum to check.

    On an error, what was extracted is left in `directory` for the caller to remove.
    """
    import os
    import tarfile

    name = os.fspath(archive_file)
    with _open_tar(name) as tar:
        check = _MemberCheck(name, os.path.getsize(name))
        members = (check(member) for member in tar)  # headers are read as extraction goes
        try:
            if hasattr(tarfile, "data_filter"):
                tar.extractall(directory, members=members, filter="data")
            else:
                tar.extractall(directory, members=members)
            _read_to_end(tar, name, check.limit)
        except getattr(tarfile, "FilterError", ()) as error:  # (no such class where there is no filter)
            raise ArchiveError(f"{name} is unsafe to extract: {error}") from None
        except _corruption_errors() as error:
            raise ArchiveError(f"{name} is corrupted: {_describe_corruption(error)}") from None


def _open_tar(name: str) -> Any:
    import tarfile

    try:
        return tarfile.open(name)  # gzip, bzip2, xz or none, by the magic bytes
    except tarfile.ReadError as error:
        raise ArchiveError(f"{name} is not a tar archive, or is corrupted ({error})") from None


def _read_to_end(tar: Any, name: str, limit: float = math.inf) -> None:
    """Reads the rest of the (decompressed) stream: at its end the compressor checks its CRC. A stream longer than
    `limit` (a bomb hidden after the last member) is refused."""
    try:
        while tar.fileobj.read(1 << 20):
            if tar.fileobj.tell() > limit + (1 << 20):
                raise ArchiveError(f"{name} is refused: its stream goes on past {_size(limit)} after the last member")
    except _corruption_errors() + (OSError,) as error:  # (OSError: bzip2's "Invalid data stream", ...)
        raise ArchiveError(f"{name} is corrupted: {_describe_corruption(error)}") from None


def _corruption_errors() -> Tuple[type, ...]:
    import gzip
    import lzma
    import tarfile
    import zlib

    return (tarfile.ReadError, gzip.BadGzipFile, EOFError, zlib.error, lzma.LZMAError)


def _describe_corruption(error: BaseException) -> str:
    message = f"{type(error).__name__}: {error}"
    if "CRC" in str(error) or "Incorrect length" in str(error):  # gzip's trailer; bzip2 and xz say "CRC" too
        return f"CRC mismatch ({message})"
    if isinstance(error, EOFError):
        return f"truncated ({message})"
    return message


def _archive_path(path: str) -> str:
    import posixpath

    return posixpath.normpath(path) if path else "."


class _MemberCheck:
    """
    Checks an archive's members in their order, each before it is extracted, so that no member can write (or
    link) outside the extraction directory whatever comes after it: paths stay inside and never go through a
    symbolic link; a link points inside, at an earlier member (a hard link at a regular file); no member
    replaces an earlier one (which could turn a checked path into a link). Stricter than tarfile's `data`
    filter, which resolves links on disk as it goes and so depends on the order of members.
    """

    def __init__(self, name: str, compressed: Optional[int] = None) -> None:
        self.name = name
        self.kinds: Dict[str, str] = {".": "dir"}  # path -> "dir", "file" or "symlink", for every member so far
        self.limit, self.limit_reason = _archive_limit(compressed)  # the members' total size (decompression bombs)
        self.total = 0

    def __call__(self, member: Any) -> Any:
        reason = self._unsafe(member)
        if reason is not None:
            raise ArchiveError(f"{self.name} is unsafe to extract: member {member.name!r} is {reason}")
        self.total += member.size if member.isreg() else 0
        if self.total > self.limit:
            total, limit = _sizes(self.total, self.limit)
            reason = self.limit_reason.format(limit=limit)
            raise ArchiveError(
                f"{self.name} is refused: its members up to {member.name!r} would extract to {total}, more than "
                f"{reason}"
            )
        path = _archive_path(member.name)
        parts = path.split("/")
        for i in range(1, len(parts)):
            self.kinds.setdefault("/".join(parts[:i]), "dir")
        self.kinds[path] = "dir" if member.isdir() else "symlink" if member.issym() else "file"
        return member

    def _blocked(self, raw_path: str, link_target: bool = False) -> Optional[str]:
        """Why a path (as written) cannot be taken: a prefix of it is a symbolic link or a file (or, for a link's
        target, not yet a directory, which a later member could make a link)."""
        parts = raw_path.split("/")
        for i in range(1, len(parts)):
            prefix = _archive_path("/".join(parts[:i]))  # each prefix: `s/..` goes through `s`
            kind = self.kinds.get(prefix)
            if kind == "symlink":
                return f"through the symbolic link {prefix!r}"
            if kind == "file":
                return f"inside the file {prefix!r}"
            if kind is None and link_target:
                return f"through {prefix!r}, not an earlier member"
        return None

    def _unsafe(self, member: Any) -> Optional[str]:
        import os
        import posixpath

        raw = member.name
        if raw.startswith(("/", "\\")) or os.path.isabs(raw):
            return "an absolute path"
        path = _archive_path(raw)
        if path == ".." or path.startswith("../"):
            return "outside the extraction directory"
        if not (member.isreg() or member.isdir() or member.issym() or member.islnk()):
            return "a device, pipe or other special file"
        blocked = self._blocked(raw)
        if blocked is not None:
            return f"written {blocked}"
        earlier = self.kinds.get(path)
        if earlier is not None and not (earlier == "dir" and member.isdir()):
            return f"a second member at {path!r}, replacing the first"
        if not (member.issym() or member.islnk()):
            return None
        kind, target = ("a symbolic" if member.issym() else "a hard"), member.linkname
        if not target:
            return f"{kind} link without a target"
        if target.startswith(("/", "\\")) or os.path.isabs(target):
            return f"{kind} link to an absolute path ({target!r})"
        # A symbolic link's target is relative to its directory, a hard link's to the archive's root.
        joined = posixpath.join(posixpath.dirname(path), target) if member.issym() else target
        resolved = _archive_path(joined)
        if resolved == ".." or resolved.startswith("../"):
            return f"{kind} link pointing outside the extraction directory ({target!r})"
        blocked = self._blocked(joined, link_target=True)
        if blocked is not None:
            return f"{kind} link {blocked} ({target!r})"
        wanted = ("dir", "file", "symlink") if member.issym() else ("file",)
        if self.kinds.get(resolved) not in wanted:
            return f"{kind} link to {'anything' if member.issym() else 'a file'} but an earlier member ({target!r})"
        return None


def checked_tarfile(tar_file: Any) -> None:
    """`cached_path`'s `check_tarfile`, run before it extracts a tar archive: every member checked, the stream
    read to its end (the compressor's CRC), and the `data` filter for the extraction that follows."""
    import os
    import tarfile

    name = str(tar_file.name or "<archive>")
    check = _MemberCheck(name, os.path.getsize(name) if os.path.isfile(name) else None)
    try:
        for member in tar_file:
            check(member)
    except _corruption_errors() as error:
        raise ArchiveError(f"{name} is corrupted: {_describe_corruption(error)}") from None
    _read_to_end(tar_file, name, check.limit)
    if hasattr(tarfile, "data_filter"):
        tar_file.extraction_filter = tarfile.data_filter  # (an instance attribute: called as filter(member, path))
