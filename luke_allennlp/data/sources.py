"""
The readers' data sources: a data path is a file in the reader's own format, or a dataset read with Hugging Face
`datasets` (`luke_allennlp.resources.hf_datasets`: a Hub dataset `hf://NAME[:CONFIG][@SPLIT]`, a `save_to_disk`
directory, a Parquet/Arrow/CSV/TSV/JSON(L) file). `SourceReader` is the readers' base: `open_rows(path)` gives the
dataset's rows or None for the reader's own format; `Columns` finds the columns of a reader's roles (the config's
names, else the Hub's common ones) and `LabelNames` turns a label column's values into names (`ClassLabel` names,
else the reader's `label_names`; integers without names are refused).
"""

import logging
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple, TypeVar, Union

from allennlp.common.file_utils import cached_path
from allennlp.data import DatasetReader

from luke_allennlp.resources.files import nonempty
from luke_allennlp.resources.hf_datasets import Rows, open_rows

logger = logging.getLogger(__name__)
T = TypeVar("T")


class SourceReader(DatasetReader):
    """
    A dataset reader whose data paths may also be datasets (see the module's doc). It shards its examples itself
    (`shard_iterable`: every example read once per pass across distributed processes and data-loader workers).

    # Parameters

    streaming : `bool`, optional (default = `False`)
        Stream a Hub dataset (`hf://...`) rather than download and prepare it whole in the datasets cache first: for
        datasets larger than the disk, or to start at once. Local files are always read as streams (nothing is copied
        into the cache) and `save_to_disk` directories are memory-mapped.
    """

    def __init__(self, streaming: bool = False, **kwargs) -> None:
        super().__init__(manual_distributed_sharding=True, manual_multiprocess_sharding=True, **kwargs)
        self.streaming = streaming

    def native_file(self, path: str) -> bool:
        """Whether a local file named like a table (`.json`, `.jsonl`, `.csv`, `.tsv`, ...) is in the reader's own
        format after all (its content says so), and is read by the reader's own parser."""
        return False

    def open_rows(self, file_path: str) -> Optional[Rows]:
        """The rows of `file_path` if it is a dataset, None if it is in the reader's own format."""
        return open_rows(str(file_path), self.native_file, self.streaming)

    def read_source(
        self,
        file_path: str,
        read_file: Callable[[str, str], Iterator[T]],
        read_rows: Callable[[Rows], Iterator[T]],
    ) -> Iterator[T]:
        """The examples of a data path: `read_rows(rows)` of a dataset, else `read_file(local copy, path)` of a file
        in the reader's own format; a path without examples is an error naming it."""
        rows = self.open_rows(file_path)
        examples = read_file(cached_path(file_path), file_path) if rows is None else read_rows(rows)
        return nonempty(examples, file_path)


class Columns:
    """
    The columns of a reader's roles in a dataset: the column the config names for a role (`columns`), else the first
    of the role's default names that the dataset has.

    # Parameters

    reader : `str`
        The reader's registered name, for messages.
    roles : `Mapping[str, Sequence[str]]`
        Each role and its default column names (the Hub's common ones first).
    given : `Mapping[str, str]`, optional
        The config's `columns`: role -> column name. A role the reader does not have is refused.
    """

    def __init__(self, reader: str, roles: Mapping[str, Sequence[str]], given: Optional[Mapping[str, str]]) -> None:
        self.roles = {role: tuple(names) for role, names in roles.items()}
        self.given = dict(given or {})
        unknown = sorted(set(self.given) - set(self.roles))
        if unknown:
            raise ValueError(f"columns: {reader} has no role {unknown[0]!r} (its roles: {', '.join(self.roles)})")
        for role, name in self.given.items():
            if not isinstance(name, str) or not name:
                raise ValueError(f"columns: the column of {role!r} must be a column name, not {name!r}")

    def find(self, rows: Rows, role: str) -> Optional[str]:
        """The role's column, None if the config names none and the dataset has none of the defaults. A column the
        config names must be there."""
        if role in self.given:
            if self.given[role] not in rows.columns:
                raise rows.missing(f"{role!r}", [self.given[role]], f'columns (now {{"{role}": "{self.given[role]}"}})')
            return self.given[role]
        return next((name for name in self.roles[role] if name in rows.columns), None)

    def require(self, rows: Rows, role: str) -> str:
        column = self.find(rows, role)
        if column is None:
            raise rows.missing(f"{role!r}", self.roles[role], f'columns, e.g. columns: {{"{role}": "COLUMN"}}')
        return column

    def named(self, role: str) -> bool:
        """Whether the config names the role's column."""
        return role in self.given


class LabelNames:
    """
    The values of a label column as names: strings as they are; integers as the names of the column's `ClassLabel`
    feature, else of `label_names` (the names by index), else refused (a label that is a number says nothing, and a
    dataset exported without its features has lost its names). `ClassLabel`'s -1 (no label, as GLUE's test splits
    have) reads as None.
    """

    def __init__(self, rows: Rows, column: str, label_names: Optional[List[str]] = None) -> None:
        self.column = column
        self.class_names = rows.class_names(column)
        self.names = self.class_names if self.class_names is not None else label_names

    def __call__(self, value: Any, where: str) -> Optional[str]:
        if isinstance(value, str):
            return value
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"{where}: column {self.column!r} should hold label names or integers, not {value!r}")
        if value == -1 and self.class_names is not None:
            return None
        if self.names is None:
            raise ValueError(
                f"{where}: column {self.column!r} holds the integer {value} but no label names (it is not a ClassLabel "
                "column): give the reader's label_names, the names of 0, 1, ... in order"
            )
        if not 0 <= value < len(self.names):
            raise ValueError(
                f"{where}: label {value} of column {self.column!r} is not the index of one of its "
                f"{len(self.names)} names ({', '.join(self.names[:8])}{', ...' if len(self.names) > 8 else ''})"
            )
        return self.names[value]


def cell(row: Dict[str, Any], column: str, kind: Union[type, Tuple[type, ...]], where: str) -> Any:
    """`row[column]`, which must be of `kind` (a type or types; a bool is no int; None, a missing value, is
    refused)."""
    value = row[column]
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
        what = "missing (null)" if value is None else f"{type(value).__name__} {str(value)[:60]!r}"
        names = " or ".join(k.__name__ for k in kinds)
        raise ValueError(f"{where}: column {column!r} should be {names}, not {what}")
    return value
