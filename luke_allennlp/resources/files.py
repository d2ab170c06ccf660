"""
Reading the task files as their formats define them, with errors that name the file and the line or example:
UTF-8 text with an optional byte-order mark (or another encoding where a format's files come in one), lines ended by `\\n` (a `\\r` before it dropped), JSON documents
and JSON lines, fields of a JSON record, example ids that must not repeat, and files that must hold examples.
Files named `.gz`, `.bz2` or `.xz` are decompressed as they are read; compressed data under another name is refused
(it would otherwise read as "not UTF-8").
"""

import codecs
import json
import re
from typing import Any, Dict, Iterable, Iterator, List, Optional, Tuple, TypeVar, Union

T = TypeVar("T")

# suffix -> (format, the module that decompresses it, the first bytes of its data)
COMPRESSIONS = {
    ".gz": ("gzip", "gzip", b"\x1f\x8b"),
    ".bz2": ("bzip2", "bz2", b"BZh"),
    ".xz": ("xz", "lzma", b"\xfd7zXZ\x00"),
}
# A `\\uXXXX` escape of a UTF-16 surrogate, with the low half that may follow a high one.
SURROGATE_ESCAPE = re.compile(r"\\u(d[89a-f][0-9a-f]{2})(\\u(d[c-f][0-9a-f]{2}))?", re.IGNORECASE)
SURROGATE = re.compile("[\ud800-\udfff]")


def _decompressed(raw: bytes, path: str, name: str) -> bytes:
    """`raw` decompressed if `path` names a compressed file; compressed data under another name is an error."""
    import importlib

    for suffix, (label, module, magic) in COMPRESSIONS.items():
        if path.endswith(suffix):
            decompressor = importlib.import_module(module)
            try:
                return decompressor.decompress(raw)
            except (OSError, EOFError, ValueError, getattr(decompressor, "LZMAError", OSError)) as error:
                raise ValueError(f"{name}: not {label} data, or truncated, as its name says ({error})") from None
        if raw.startswith(magic):
            raise ValueError(
                f"{name}: {label}-compressed data, not text: name it with {suffix} to read it compressed, "
                f"or decompress it"
            )
    return raw


def read_text(path: str, name: Optional[str] = None, encoding: str = "utf-8", hint: Optional[str] = None) -> str:
    """
    The file as text of `encoding` (UTF-8 by default; an ASCII-compatible one such as `latin-1` otherwise); a UTF-8
    byte-order mark is dropped (it would otherwise become part of the first line). Bytes that do not decode raise an
    error naming the file (`name`, default `path`) and the line, ending with `hint` (what to do) if given.
    """
    with open(path, "rb") as f:
        raw = _decompressed(f.read(), str(path), name or str(path))
    if raw.startswith(codecs.BOM_UTF8) and codecs.lookup(encoding).name == "utf-8":
        raw = raw[len(codecs.BOM_UTF8) :]
    try:
        return raw.decode(encoding)
    except UnicodeDecodeError as error:
        line = raw.count(b"\n", 0, error.start) + 1
        label = "UTF-8" if codecs.lookup(encoding).name == "utf-8" else encoding
        raise ValueError(
            f"{name or path}:{line}: not {label} text (byte {raw[error.start]:#04x}: {error.reason}); "
            + (hint or f"the file must be saved as {label}")
        ) from None


def split_lines(text: str) -> List[str]:
    """
    The lines of a text, split at `\\n` only and without their `\\r\\n` / `\\n` ends; a final line end does not
    start another line. (`str.splitlines` would also split at characters such as U+2028 or U+0085, which can
    occur inside a sentence or a title.) Line `n` (1-based) is item `n - 1`.
    """
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def read_lines(path: str, name: Optional[str] = None, encoding: str = "utf-8", hint: Optional[str] = None) -> List[str]:
    """The file's lines (`split_lines` of `read_text`)."""
    return split_lines(read_text(path, name, encoding, hint))


def load_json(path: str, name: Optional[str] = None) -> Any:
    """A JSON document; malformed JSON raises an error naming the file and the line."""
    return parse_json(read_text(path, name), name or path)


TOO_DEEP = "JSON nested too deeply (Python's JSON reader stops at about 1,000 levels of arrays and objects)"


def parse_json(text: str, where: str) -> Any:
    """`text` as JSON; malformed JSON raises an error naming `where` and, for a multi-line text, the line."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        at = f"{where}:{error.lineno}" if "\n" in text.rstrip() else where
        raise ValueError(f"{at}: not valid JSON ({error.msg}, column {error.colno})") from None
    except RecursionError:
        raise ValueError(f"{where}: {TOO_DEEP}") from None
    if "\\u" in text:
        refuse_lone_surrogates(value, text, where)
    return value


def refuse_lone_surrogates(value: Any, text: str, where: str) -> None:
    """A `\\ud800` escape not paired with a low surrogate decodes to no character: tokenizers fail on it (the fast
    ones with a bare `TypeError`) and offsets computed past it are wrong. Raises an error naming the line and field."""
    field = _surrogate_field(value, "")
    if field is None:
        return
    at = where
    for match in SURROGATE_ESCAPE.finditer(text):
        high = int(match.group(1), 16) < 0xDC00
        if not (high and match.group(2)):
            if "\n" in text.rstrip():
                at = f"{where}:{text.count(chr(10), 0, match.start()) + 1}"
            escape = match.group(0)[:6]
            break
    else:
        escape = "\\u" + f"{ord(SURROGATE.search(field[1]).group()):04x}"  # type: ignore[union-attr]
    raise ValueError(
        (f"{at}: " if at else "")
        + f"field {field[0] or '(the value)'}: {escape} is half of a UTF-16 surrogate pair, not a character "
        "(the text is damaged; replace it, e.g. with \\ufffd)"
    )


def _surrogate_field(value: Any, path: str) -> Optional[Tuple[str, str]]:
    """The path (`data[0].context`) and text of the first string in `value` (a key or a value) with a surrogate."""
    if isinstance(value, str):
        return (path, value) if SURROGATE.search(value) else None
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, item in items:
        inner = f"{path}[{key}]" if isinstance(key, int) else f"{path}.{key}" if path else key
        if isinstance(key, str) and SURROGATE.search(key):
            return inner, key
        found = _surrogate_field(item, inner)
        if found:
            return found
    return None


def require(record: Any, key: str, kind: Union[None, type, Tuple[type, ...]] = None, where: str = "input") -> Any:
    """`record[key]`, which must exist and, if `kind` is given, be of that type or types (an int is not a bool)."""
    if not isinstance(record, dict):
        raise ValueError(f"{where}: expected a JSON object with {key!r}, not {type(record).__name__}")
    if key not in record:
        raise ValueError(f"{where}: missing field {key!r}")
    value = record[key]
    kinds = kind if isinstance(kind, tuple) else (kind,) if kind is not None else ()
    if kinds and (not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds)):
        names = " or ".join(k.__name__ for k in kinds)
        raise ValueError(f"{where}: field {key!r} should be {names}, not {type(value).__name__} ({value!r})")
    return value


def require_span(value: Any, where: str, what: str = "span") -> Tuple[int, int]:
    """A `[start, end]` pair of integers (a JSON list or a tuple)."""
    if (
        not isinstance(value, (list, tuple))
        or len(value) != 2
        or not all(isinstance(x, int) and not isinstance(x, bool) for x in value)
    ):
        raise ValueError(f"{where}: {what} must be [start, end], two integers, not {value!r}")
    return int(value[0]), int(value[1])


def require_strings(value: Any, where: str, what: str) -> List[str]:
    """A JSON list of strings (a single string is refused: it is not split into characters)."""
    if not isinstance(value, list) or not all(isinstance(x, str) for x in value):
        kind = "a string" if isinstance(value, str) else type(value).__name__
        raise ValueError(f"{where}: {what} must be a list of strings, not {kind} ({str(value)[:60]!r})")
    return value


class SeenIds:
    """
    Example ids of one file, which must not repeat: `check` raises `"{at}: the {what} is repeated (first in
    {first})"` for an id seen before.
    """

    def __init__(self, what: str = "example id") -> None:
        self.what = what
        self._first: Dict[str, str] = {}

    def check(self, key: str, at: str, first_in: str) -> None:
        if key in self._first:
            raise ValueError(f"{at}: the {self.what} is repeated (first in {self._first[key]})")
        self._first[key] = first_in


def nonempty(examples: Iterable[T], name: str) -> Iterator[T]:
    """The examples, and an error naming the file if there are none: an empty file would otherwise give
    `allennlp evaluate` no instances, and it would exit without metrics as if it had succeeded."""
    count = 0
    for example in examples:
        count += 1
        yield example
    if count == 0:
        raise ValueError(f"{name}: no examples in the file (it is empty, or holds only blank lines)")
