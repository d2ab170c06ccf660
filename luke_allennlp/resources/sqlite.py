"""
The SQLite files the project writes (the mention dictionary's store, the builders' part files and title index):
connections for building and for reading, and their `meta(key, value)` table of JSON values. Standard library only.
"""

import json
import os
import sqlite3
from typing import Any, Dict

CACHE_KIB = 16 * 1024  # SQLite's page cache per connection while building (and its sorter's memory before it spills)


def connect(path: "os.PathLike[str] | str", create: bool = False) -> sqlite3.Connection:
    """A connection for building: no journal (a failed build is rebuilt), a bounded cache, temp files on disk."""
    path = os.fspath(path)
    if create and os.path.exists(path):
        os.remove(path)
    connection = sqlite3.connect(path, isolation_level=None)
    for pragma in ("journal_mode=OFF", "synchronous=OFF", f"cache_size=-{CACHE_KIB}", "temp_store=FILE", "mmap_size=0"):
        connection.execute(f"PRAGMA {pragma}")
    return connection


def open_readonly(path: "os.PathLike[str] | str", mmap_bytes: int = 1 << 40) -> sqlite3.Connection:
    """A read-only connection that reads the file through a memory map (its pages shared by every process)."""
    uri = "file:" + os.path.abspath(os.fspath(path)).replace("?", "%3f").replace("#", "%23") + "?mode=ro&immutable=1"
    connection = sqlite3.connect(uri, uri=True, check_same_thread=False)
    connection.execute(f"PRAGMA mmap_size={mmap_bytes}")
    connection.execute("PRAGMA cache_size=-8192")
    return connection


def is_sqlite(path: "os.PathLike[str] | str") -> bool:
    with open(path, "rb") as f:
        return f.read(16) == b"SQLite format 3\x00"


def set_meta(connection: sqlite3.Connection, **values: Any) -> None:
    connection.execute("CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT)")
    connection.executemany(
        "INSERT OR REPLACE INTO meta VALUES (?, ?)",
        [(key, json.dumps(value, ensure_ascii=False)) for key, value in values.items()],
    )


def get_meta(connection: sqlite3.Connection, schema: str = "main") -> Dict[str, Any]:
    return {key: json.loads(value) for key, value in connection.execute(f"SELECT key, value FROM {schema}.meta")}
