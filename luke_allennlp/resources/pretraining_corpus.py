"""
A pretraining corpus directory, as `allennlp build-pretraining-corpus` writes it: a Hugging Face `datasets`
dataset on disk (memory-mapped Arrow) with LUKE's columns (`corpus_features`), its `metadata.json`, and a copy of the
tokenizer and of the entity vocabulary it was built with. `PretrainingCorpus` reads one; `save_rows` and
`write_metadata` write its dataset and metadata (`luke_allennlp.wikipedia.corpus` builds it). Plain Python: no
AllenNLP.
"""

import json
import os
import re
from pathlib import Path
from typing import Any, Dict, List, NamedTuple, Union

from luke_allennlp.resources.files import load_json

# The corpus directory's layout.
MODEL_COLUMNS = ("word_ids", "entity_ids", "entity_position_ids")  # what pretraining reads
COLUMNS = MODEL_COLUMNS + ("page_id",)
METADATA_FILE = "metadata.json"
TOKENIZER_DIR = "tokenizer"
ENTITY_VOCAB_FILE = "entity_vocab.jsonl"


class EntityVocabSummary(NamedTuple):
    """What masking needs of an entity vocabulary: its size and its special entities' ids."""

    size: int
    pad_id: int
    unk_id: int
    mask_id: int


class PretrainingCorpus:
    """
    Reads a corpus directory's `metadata.json` and finds what it names.

    # Parameters

    directory : `str`
        The corpus directory (`datasets.load_from_disk` loads it).
    """

    def __init__(self, directory: Union[str, "os.PathLike[str]"]) -> None:
        self.directory = Path(directory)
        path = self.directory / METADATA_FILE
        if not path.is_file():
            raise FileNotFoundError(
                f"{self.directory} is not a pretraining corpus: it has no metadata.json "
                "(build one with `allennlp build-pretraining-corpus`)"
            )
        self.metadata: Dict[str, Any] = load_json(str(path))
        if not isinstance(self.metadata, dict):
            raise ValueError(f"{path}: not a JSON object")
        for key in ("tokenizer", "entity_vocab", "max_seq_length"):
            if key not in self.metadata:
                raise ValueError(f"{path}: no {key!r} entry")

    def _resolve(self, path: str) -> str:
        """Paths in metadata.json are relative to the corpus directory, or absolute."""
        return str(path) if os.path.isabs(path) else str(self.directory / path)

    @property
    def tokenizer_path(self) -> str:
        """The tokenizer the corpus was built with: its copy in the corpus directory (`tokenizer.path`)."""
        tokenizer = self.metadata["tokenizer"]
        if not isinstance(tokenizer, dict) or "path" not in tokenizer:
            raise ValueError(
                f"{self.directory}/metadata.json: 'tokenizer' must be a dict with a 'path', not {tokenizer!r}"
            )
        return self._resolve(tokenizer["path"])

    @property
    def entity_vocab_path(self) -> str:
        """The entity vocabulary the corpus was built with: its copy in the corpus directory."""
        path = self._resolve(self.metadata["entity_vocab"])
        if not os.path.isfile(path):
            raise FileNotFoundError(
                f"{self.directory}/metadata.json names the entity vocabulary {path}, which is missing"
            )
        return path

    @property
    def max_seq_length(self) -> int:
        return int(self.metadata["max_seq_length"])

    def entity_vocab(self):
        from luke_allennlp.resources.entity_vocab import EntityVocab

        return EntityVocab.from_file(self.entity_vocab_path)

    def entity_vocab_summary(self) -> EntityVocabSummary:
        """
        The entity vocabulary's size and special ids, as `entity_vocab()` gives them, without parsing every entry
        where the corpus allows it (a JSONL vocabulary and metadata.json's `entity_vocab_size`, as
        `build-pretraining-corpus` writes them): data-loader workers start anew on every pass over the corpus, and
        parsing a 500,000-entity vocabulary takes seconds. Only the lines that hold a special title are parsed; a
        title is the lowest id that has it, as in `EntityVocab`.
        """
        from luke_allennlp.resources.entity_vocab import EntityVocab

        path = self.entity_vocab_path
        if "entity_vocab_size" not in self.metadata or not path.endswith(".jsonl"):
            vocab = self.entity_vocab()
            return EntityVocabSummary(len(vocab), vocab.pad_id, vocab.unk_id, vocab.mask_id)
        with open(path, "rb") as f:
            raw = f.read()
        found: Dict[str, List[int]] = {title: [] for title in EntityVocab.SPECIAL_TOKENS}
        # A JSON string holding a special title is exactly `"[PAD]"` (a quote inside a string is escaped): one
        # scan of the bytes finds the lines to parse.
        for match in re.finditer(rb'"\[(?:PAD|UNK|MASK)\]"', raw):
            begin, end = raw.rfind(b"\n", 0, match.start()) + 1, raw.find(b"\n", match.end())
            item = json.loads(raw[begin : end if end >= 0 else len(raw)])
            for title in found:
                if any(pair[0] == title for pair in item["entities"]):
                    found[title].append(int(item["id"]))
        ids = []
        for title in (EntityVocab.PAD, EntityVocab.UNK, EntityVocab.MASK):
            if not found[title]:
                raise KeyError(f"{title!r} is not in the entity vocabulary {path}")
            ids.append(min(found[title]))
        return EntityVocabSummary(int(self.metadata["entity_vocab_size"]), *ids)

    def tokenizer(self):
        from luke_allennlp.resources.tokenization import load_fast_tokenizer

        return load_fast_tokenizer(self.tokenizer_path)

    def load_dataset(self):
        """The rows, memory-mapped (nothing is read into memory until it is accessed). A corpus without rows is an
        error (`datasets` itself cannot load one)."""
        import datasets

        state = self.directory / "state.json"
        if state.is_file() and not load_json(str(state)).get("_data_files", True):
            raise ValueError(f"{self.directory}: the corpus has no rows")
        dataset = datasets.load_from_disk(str(self.directory))
        missing = [c for c in MODEL_COLUMNS if c not in dataset.column_names]
        if missing:
            raise ValueError(
                f"{self.directory}: the corpus lacks the columns {missing} (it has {dataset.column_names})"
            )
        if len(dataset) == 0:
            raise ValueError(f"{self.directory}: the corpus has no rows")
        return dataset


def corpus_directories(path: str) -> List[str]:
    """The corpus directories of a `train_data_path`: one, or several joined by commas (e.g. one corpus per
    language, for mLUKE: `corpus/de,corpus/ja`)."""
    parts = [part.strip() for part in str(path).split(",")]
    return [part for part in parts if part] if len(parts) > 1 and all(os.path.isdir(p) for p in parts if p) else [path]


def entity_vocab_size(path: str) -> int:
    """The entity vocabulary size of a corpus directory or of an entity vocabulary file."""
    from luke_allennlp.resources.entity_vocab import EntityVocab

    if os.path.isdir(path):
        corpus = PretrainingCorpus(path)
        if "entity_vocab_size" in corpus.metadata:
            return int(corpus.metadata["entity_vocab_size"])
        path = corpus.entity_vocab_path
    return len(EntityVocab.from_file(path))


def corpus_features():
    """The rows' columns and types (`datasets.Features`)."""
    from datasets import Features, Sequence, Value

    return Features(
        {
            "word_ids": Sequence(Value("int32")),
            "entity_ids": Sequence(Value("int32")),
            "entity_position_ids": Sequence(Sequence(Value("int32"))),
            "page_id": Value("int64"),
        }
    )


def save_rows(dataset, directory: Union[str, "os.PathLike[str]"]) -> None:
    """The rows (a `datasets.Dataset` of `corpus_features()`) saved as the dataset of the corpus directory."""
    # (`save_to_disk` gives a dataset without rows no shard at all, which `load_from_disk` cannot read)
    dataset.save_to_disk(str(directory), num_shards=None if dataset.num_rows else 1)


def write_metadata(directory: Union[str, "os.PathLike[str]"], metadata: Dict[str, Any]) -> None:
    """The corpus directory's `metadata.json`."""
    with open(Path(directory) / METADATA_FILE, "w", encoding="utf-8") as f:
        json.dump(metadata, f, indent=2, ensure_ascii=False)
        f.write("\n")
