"""
Reading the task files as their formats define them, with errors that name the file and the line or example:
UTF-8 text with an optional byte-order mark (or another encoding where a format's files come in one), lines ended by `\\n` (a `\\r` before it dropped), JSON documents
and JSON lines, fields of a JSON record, example ids that must not repeat, and files that must hold examples.
"""

import codecs
import json
from typing import Any, Dict, Iterable, Iterator, List, Optional, Tuple, TypeVar

T = TypeVar("T")


def read_text(path: str, name: Optional[str] = None, encoding: str = "utf-8", hint: Optional[str] = None) -> str:
    """
    The file as text of `encoding` (UTF-8 by default; an ASCII-compatible one such as `latin-1` otherwise); a UTF-8
    byte-order mark is dropped (it would otherwise become part of the first line). Bytes that do not decode raise an
    error naming the file (`name`, default `path`) and the line, ending with `hint` (what to do) if given.
    """
    with open(path, "rb") as f:
        raw = f.read()
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


def parse_json(text: str, where: str) -> Any:
    """`text` as JSON; malformed JSON raises an error naming `where` and, for a multi-line text, the line."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        at = f"{where}:{error.lineno}" if "\n" in text.rstrip() else where
        raise ValueError(f"{at}: not valid JSON ({error.msg}, column {error.colno})") from None


def require(record: Any, key: str, kind: Optional[type] = None, where: str = "input") -> Any:
    """`record[key]`, which must exist and, if `kind` is given, be of that type (an int is not a bool)."""
    if not isinstance(record, dict):
        raise ValueError(f"{where}: expected a JSON object with {key!r}, not {type(record).__name__}")
    if key not in record:
        raise ValueError(f"{where}: missing field {key!r}")
    value = record[key]
    if kind is not None and (not isinstance(value, kind) or (kind is int and isinstance(value, bool))):
        raise ValueError(f"{where}: field {key!r} should be {kind.__name__}, not {type(value).__name__} ({value!r})")
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
