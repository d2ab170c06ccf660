"""
Examples read with Hugging Face `datasets`: a data path that is not a file in a reader's own format.

A path given to `train_data_path`, `validation_data_path`, `allennlp evaluate`, `allennlp predict` or
`evaluate-cross-lingual` is one of:

- a dataset on the Hugging Face Hub, `hf://NAME[:CONFIG][@SPLIT]` (`hf://conll2003@train`,
  `hf://xquad:xquad.de@validation`, `hf://DFKI-SLT/tacred:original@test`, a slice `hf://squad@validation[:500]`):
  `datasets.load_dataset(NAME, CONFIG, split=SPLIT)`, online, or from the local datasets cache with
  `HF_DATASETS_OFFLINE=1` (or `HF_HUB_OFFLINE=1`). Without `@SPLIT` the dataset must have one split. A dataset whose
  Hub repository holds a loading script (which `datasets` 4 no longer runs) is read from the Hub's Parquet conversion
  of it (revision `refs/convert/parquet`), with a log line saying so;
- a directory written by `Dataset.save_to_disk` (or `DatasetDict.save_to_disk`: `DIR@SPLIT`), memory-mapped;
- a local Parquet, Arrow, CSV, TSV, JSON or JSON-lines file (optionally `.gz`, `.bz2`, `.xz`, `.zst`), read as a
  stream (no copy in the datasets cache; as large as the disk allows), unless the reader recognises it as its own
  format by its content (a SQuAD JSON file stays SQuAD JSON, a CoNLL `.tsv` stays a column file);
- anything else: the reader's own format, as before.

Local sources never make a network call. `Rows` iterates over the examples of any of them as dicts, with the
`ClassLabel` names of a column (`class_names`) and a name for each example in messages (`where`). A missing split,
configuration or dataset, or a Hub that cannot be reached, is a one-line error naming the source and what exists.
"""

import json
import logging
import os
import re
from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

from luke_allennlp.resources.files import COMPRESSIONS

logger = logging.getLogger(__name__)

HUB = "hf://"
# NAME or OWNER/NAME, then optional :CONFIG and @SPLIT (a split may carry a slice, `train[:10%]`).
HUB_PATH = re.compile(r"^hf://(?P<name>[\w.-]+(?:/[\w.-]+)?)(?::(?P<config>[^@]+))?(?:@(?P<split>.+))?$")
# suffix -> the `datasets` builder that reads it (and its keyword arguments)
BUILDERS: Dict[str, Tuple[str, Dict[str, Any]]] = {
    ".parquet": ("parquet", {}),
    ".arrow": ("arrow", {}),
    ".csv": ("csv", {}),
    ".tsv": ("csv", {"sep": "\t"}),
    ".json": ("json", {}),
    ".jsonl": ("json", {}),
    ".ndjson": ("json", {}),
}
TEXT_COMPRESSIONS = (*COMPRESSIONS, ".zst")  # what `datasets` decompresses as it streams CSV and JSON
PARQUET_REVISION = "refs/convert/parquet"  # the Hub's Parquet conversion of every public dataset


class DatasetSourceError(ValueError):
    """A data path that names a dataset that cannot be read as given (one line, naming what exists)."""

    user_error = True


@dataclass(frozen=True)
class HubPath:
    name: str
    config: Optional[str]
    split: Optional[str]


def parse_hub_path(path: str) -> Optional[HubPath]:
    """`hf://NAME[:CONFIG][@SPLIT]` -> its parts; None for any other path. A path of more than `OWNER/NAME` before
    the config is a file in a Hub repository (cached_path's `hf://OWNER/REPO/FILE`), not a dataset: None."""
    if not path.startswith(HUB):
        return None
    match = HUB_PATH.match(path)
    if match is None:
        if path[len(HUB) :].split(":")[0].split("@")[0].count("/") > 1:
            return None
        raise DatasetSourceError(
            f"{path}: not a Hugging Face dataset path; write hf://NAME[:CONFIG][@SPLIT], e.g. hf://conll2003@train or "
            "hf://xquad:xquad.de@validation"
        )
    return HubPath(match["name"], match["config"], match["split"])


def source_name(path: str) -> str:
    """The name a data path goes by, for names that say a language (`xquad.de.json`): a file's base name, a Hub
    dataset's configuration (`hf://xquad:xquad.de@validation` -> `xquad.de`), else its name."""
    hub = parse_hub_path(str(path)) if str(path).startswith(HUB) else None
    if hub is not None:
        return hub.config or hub.name.rsplit("/", 1)[-1]
    return os.path.basename(_local_split(os.fspath(path))[0].rstrip("/"))


def builder_of(path: str) -> Optional[Tuple[str, Dict[str, Any]]]:
    """The `datasets` builder (and its options) of a file named like a table (`.parquet`, `.csv.gz`, ...), or None."""
    name = path.lower()
    for compression in TEXT_COMPRESSIONS:
        if name.endswith(compression):
            name = name[: -len(compression)]
            if name.endswith((".parquet", ".arrow")):
                return None  # (compressed inside already)
            break
    return BUILDERS.get(os.path.splitext(name)[1])


def saved_dataset_kind(directory: str) -> Optional[str]:
    """ "dataset" for a `Dataset.save_to_disk` directory, "dict" for a `DatasetDict`'s, None for any other."""
    if os.path.isfile(os.path.join(directory, "dataset_dict.json")):
        return "dict"
    if os.path.isfile(os.path.join(directory, "state.json")) and os.path.isfile(
        os.path.join(directory, "dataset_info.json")
    ):
        return "dataset"
    return None


def _local_split(path: str) -> Tuple[str, Optional[str]]:
    """`DIR@SPLIT` -> (DIR, SPLIT) where DIR exists and the whole path does not; else (path, None)."""
    if "@" in path and not os.path.exists(path):
        local, split = path.rsplit("@", 1)
        if os.path.exists(local):
            return local, split
    return path, None


def is_dataset_path(path: str) -> bool:
    """Whether `path` is read with `datasets` whatever the reader (a Hub dataset, a save_to_disk directory, a
    Parquet, Arrow, CSV or TSV file): for `allennlp predict`, whose own input is JSON lines."""
    if parse_hub_path(path) is not None:
        return True
    local, _ = _local_split(path)
    if os.path.isdir(local):
        return saved_dataset_kind(local) is not None
    builder = builder_of(local)
    return os.path.isfile(local) and builder is not None and builder[0] != "json"


def first_json(path: str) -> Tuple[str, Any]:
    """
    What a local file starts with, for readers that tell their own JSON formats from JSON lines by content:
    ("array", None) for a JSON array; ("lines", value) where the first non-blank line is a whole JSON value (a JSON
    lines file, or a JSON document written on one line, as SQuAD's are); ("document", None) for a JSON object spread
    over lines; ("directory", None) for a directory; ("text", None) for anything else. Reads one line (decompressed
    as its name says).
    """
    if os.path.isdir(path):
        return "directory", None
    import bz2
    import gzip
    import lzma

    opener = {".gz": gzip.open, ".bz2": bz2.open, ".xz": lzma.open}.get(os.path.splitext(path)[1], open)
    try:
        with opener(path, "rb") as f:
            line = b""
            for line in f:
                if line.strip():
                    break
    except (OSError, EOFError, lzma.LZMAError):
        return "text", None
    text = line.decode("utf-8-sig", errors="replace").strip()
    if text.startswith("["):
        return "array", None
    if not text.startswith("{"):
        return "text", None
    try:
        return "lines", json.loads(text)
    except json.JSONDecodeError:
        return "document", None


class Rows:
    """
    The examples of a dataset, in order: iterating gives `(row index, example dict)`. `name` is the path as given
    (for messages: `where(index)`), `columns` its column names, `class_names(column)` the names of a `ClassLabel`
    column (or of a list of them, as NER tags are) if it is one.
    """

    def __init__(self, name: str, dataset: Any) -> None:
        self.name = name
        self.dataset = dataset
        self.features = getattr(dataset, "features", None)
        self._first: Optional[Dict[str, Any]] = None
        if self.features is not None:
            self.columns: List[str] = list(self.features)
        else:  # (a stream of JSON lines whose columns are known once read)
            self._first = next(iter(dataset), None)
            self.columns = list(self._first or ())

    def __iter__(self) -> Iterator[Tuple[int, Dict[str, Any]]]:
        return enumerate(self.dataset)

    def where(self, index: int) -> str:
        return f"{self.name}, row {index}"

    def class_names(self, column: str) -> Optional[List[str]]:
        """The label names of a `ClassLabel` column, or of a column of lists (or sequences) of `ClassLabel`s."""
        if self.features is None or column not in self.features:
            return None
        feature = self.features[column]
        while not hasattr(feature, "names") and hasattr(feature, "feature"):  # List / Sequence of ...
            feature = feature.feature
        names = getattr(feature, "names", None)
        return list(names) if names is not None else None

    def missing(self, what: str, looked_for: Any, option: str) -> DatasetSourceError:
        """The error for a column that is not there: what was looked for, the columns there are, the option to set."""
        wanted = ", ".join(looked_for) if isinstance(looked_for, (list, tuple)) else str(looked_for)
        return DatasetSourceError(
            f"{self.name}: no column for {what} (looked for {wanted}; its columns: {', '.join(self.columns)}); "
            f"name it in the reader's {option}"
        )


def open_rows(path: str, native: Callable[[str], bool], streaming: bool = False) -> Optional[Rows]:
    """
    The examples of `path` if it is read with `datasets` (see the module's doc); None where it is in the reader's
    own format: a local text file or directory that `native(path)` accepts, a file that no `datasets` builder reads,
    or a directory that is not a saved dataset. `streaming`: stream a Hub dataset rather than download and prepare it.
    """
    hub = parse_hub_path(path)
    if hub is not None:
        return Rows(path, load_hub(path, hub, streaming))
    local, split = _local_split(path)
    if os.path.isdir(local):
        kind = saved_dataset_kind(local)
        if kind is None or (split is None and native(local)):  # (a pretraining corpus is saved by datasets too)
            if split is not None:
                raise DatasetSourceError(f"{path}: {local} is not a directory written by save_to_disk")
            return None
        return Rows(path, _load_saved(path, local, kind, split))
    if not os.path.exists(local):
        if re.fullmatch(r"[\w-]+(/[\w.-]+)?", path) and not os.path.splitext(path)[1]:
            raise FileNotFoundError(f"{path}: no such file or directory (a Hugging Face dataset is named hf://{path})")
        return None
    if split is not None:
        raise DatasetSourceError(
            f"{path}: a split (@{split}) names part of a Hub dataset or of a DatasetDict's save_to_disk directory, "
            f"not of the file {local}"
        )
    builder = builder_of(local)
    if builder is None:
        return None
    kind, options = builder
    if kind in ("csv", "json") and native(local):  # (text that may be the reader's own format)
        return None
    import datasets

    try:
        dataset = datasets.load_dataset(kind, data_files=local, split="train", streaming=True, **options)
    except (ValueError, OSError, datasets.exceptions.DatasetsError) as error:
        raise DatasetSourceError(f"{path}: not readable as {kind} ({_one_line(error)})") from None
    return Rows(path, dataset)


def _load_saved(path: str, local: str, kind: str, split: Optional[str]) -> Any:
    import datasets

    saved = datasets.load_from_disk(local)
    if kind == "dataset":
        if split is not None:
            raise DatasetSourceError(f"{path}: {local} holds one dataset, not splits (leave out @{split})")
        return saved
    splits = list(saved)
    if split is None:
        if len(splits) == 1:
            return saved[splits[0]]
        raise DatasetSourceError(f"{path}: which split? It has {', '.join(splits)}: write {local}@{splits[0]}")
    if split not in saved:
        raise DatasetSourceError(f"{path}: no split {split!r} (its splits: {', '.join(splits)})")
    return saved[split]


def _one_line(error: BaseException) -> str:
    return " ".join(str(error).split())


def load_hub(path: str, hub: HubPath, streaming: bool) -> Any:
    """`datasets.load_dataset` of a Hub path, its errors as one line naming what exists."""
    import datasets

    split = hub.split
    try:
        if split is None:
            names = datasets.get_dataset_split_names(hub.name, hub.config)
            if len(names) != 1:
                raise DatasetSourceError(
                    f"{path}: which split? The dataset has {', '.join(names)}: write {path}@{names[0]}"
                )
            split = names[0]
        try:
            return datasets.load_dataset(hub.name, hub.config, split=split, streaming=streaming)
        except RuntimeError as error:
            if "scripts are no longer supported" not in str(error):
                raise
            logger.warning(
                "%s: the Hub repository holds a loading script, which datasets %s does not run: reading its Parquet "
                "conversion (revision %s)",
                path,
                datasets.__version__,
                PARQUET_REVISION,
            )
            return datasets.load_dataset(
                hub.name, hub.config, split=split, streaming=streaming, revision=PARQUET_REVISION
            )
    except DatasetSourceError:
        raise
    except ConnectionError as error:
        raise DatasetSourceError(
            f"{path}: the Hub cannot be reached and the dataset is not in the local datasets cache ({_one_line(error)}"
            "): load it once online (then HF_DATASETS_OFFLINE=1 reads the cache), or give a local copy "
            "(a save_to_disk directory or data files)"
        ) from None
    except datasets.exceptions.DatasetNotFoundError as error:
        raise DatasetSourceError(f"{path}: {_one_line(error)}") from None
    except ValueError as error:
        message = _one_line(error)
        if message.startswith("Unknown split"):
            names = datasets.get_dataset_split_names(hub.name, hub.config)
            raise DatasetSourceError(f"{path}: no split {split!r} (its splits: {', '.join(names)})") from None
        raise DatasetSourceError(f"{path}: {message}") from None
