"""
LUKE's entity vocabulary: Wikipedia titles <-> entity ids (rows of the entity embedding table).

Three file formats are read:

- LUKE's JSONL, one entity per line: `{"id": 3, "entities": [["United States", "en"]], "count": 261500}`.
  A multilingual line holds several `[title, language]` pairs that share one id (mLUKE).
- LUKE's TSV, `title<TAB>count`, the id being the line index (the format of the released `entity_vocab.tsv`).
- `transformers`' `entity_vocab.json` (`{title: id}`), what `LukeTokenizer` ships; `MLukeTokenizer`'s (mLUKE) keys
  are `language:title` (`"en:Tokyo"`, `"ja:東京"`, several keys sharing one id), read by `from_language_prefixed_json`.
  transformers 5's `save_pretrained` writes no `entity_vocab.json`: the same object is the `entity_vocab` of its
  `tokenizer_config.json`, read from there (`from_checkpoint` for a checkpoint or tokenizer directory).

Plain Python: no AllenNLP, no torch.
"""

import json
import logging
import os
import re
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple, Union

from luke_allennlp.resources.files import read_text, split_lines

logger = logging.getLogger(__name__)

PathLike = Union[str, "os.PathLike[str]"]

# A Wikipedia language code as mLUKE prefixes titles with it: "en", "ja", "als", "zh-yue", "be-tarask", "simple".
# Lower case only, so that a title's own colon ("Star Wars: Episode IV") is never read as a prefix.
LANGUAGE_PREFIX = re.compile(r"^([a-z]{2,3}(?:-[a-z0-9]+)*|simple):(.+)$", re.DOTALL)
LANGUAGE_CODE = re.compile(r"[a-z]{2,3}(?:-[a-z0-9]+)*|simple")


class EntityVocab:
    """
    Title <-> id. Ids are positions: in vocabularies built here `"[PAD]"`=0, `"[UNK]"`=1, `"[MASK]"`=2, then
    entities by decreasing count. Vocabularies read from files keep their files' ids.

    # Parameters

    titles : `Sequence[str]`
        The title of each id, in id order.
    counts : `Optional[Sequence[int]]`, optional (default = `None`)
        How often each entity was linked (all 0 when not given).
    language : `str`, optional (default = `"en"`)
        The language of the titles (written to LUKE's JSONL).
    """

    PAD, UNK, MASK = "[PAD]", "[UNK]", "[MASK]"
    SPECIAL_TOKENS = (PAD, UNK, MASK)

    def __init__(self, titles: Sequence[str], counts: Optional[Sequence[int]] = None, language: str = "en") -> None:
        if counts is not None and len(counts) != len(titles):
            raise ValueError(f"{len(titles)} titles but {len(counts)} counts")
        entries = [[(title, language)] for title in titles]
        self._init(entries, list(counts) if counts is not None else [0] * len(titles), language, source="titles")

    def _init(
        self,
        entries: List[Optional[List[Tuple[str, Optional[str]]]]],
        counts: List[int],
        language: Optional[str],
        source: str,
    ) -> None:
        # entries[id]: the (title, language) pairs of that id; None for an id a file leaves unused.
        self._entries = entries
        self._counts = counts
        self.language = language
        self._ids: Dict[str, int] = {}
        self._ids_by_language: Dict[Tuple[str, Optional[str]], int] = {}
        conflicts = 0
        for entity_id, pairs in enumerate(entries):
            for title, lang in pairs or ():
                if (title, lang) in self._ids_by_language:
                    first = self._ids_by_language[title, lang]
                    raise ValueError(f"{source}: {title!r} ({lang}) has two ids, {first} and {entity_id}")
                self._ids_by_language[title, lang] = entity_id
                # A title of two languages may name two entities (en:Apple, fr:Apple): the title alone finds
                # the lower id; `get(title, language=...)` finds either.
                if self._ids.setdefault(title, entity_id) != entity_id:
                    conflicts += 1
        if conflicts:
            logger.info("%s: %d titles name different entities in different languages", source, conflicts)

    @classmethod
    def _from_entries(
        cls,
        entries: List[Optional[List[Tuple[str, Optional[str]]]]],
        counts: List[int],
        language: Optional[str],
        source: str,
    ) -> "EntityVocab":
        vocab = cls.__new__(cls)
        vocab._init(entries, counts, language, source)
        return vocab

    # --- reading -----------------------------------------------------------------------------------------------

    @classmethod
    def from_file(cls, path: PathLike, language: str = "en") -> "EntityVocab":
        """
        Reads LUKE's JSONL or TSV, or `transformers`' `entity_vocab.json`: `.tsv` and `.jsonl` by extension,
        anything else by content. `language` is given to titles of formats that have none (TSV, JSON). A directory is
        read as a LUKE checkpoint or tokenizer directory (`from_checkpoint`), a `tokenizer_config.json` holding an
        `entity_vocab` (what transformers 5 saves) as that vocabulary.
        """
        path = os.fspath(path)
        if os.path.isdir(path):
            return cls.from_checkpoint(path)
        text = read_text(path)
        if path.endswith(".tsv"):
            return cls._from_tsv(text, path, language)
        if path.endswith(".jsonl"):
            return cls._from_jsonl(text, path)
        stripped = text.lstrip()
        if stripped.startswith("{"):
            first_line = stripped.split("\n", 1)[0]
            try:
                first = json.loads(first_line)
            except json.JSONDecodeError:
                first = None
            if isinstance(first, dict) and "entities" in first and "id" in first:
                return cls._from_jsonl(text, path)
            return cls._from_transformers_json(text, path, language)
        return cls._from_tsv(text, path, language)

    @classmethod
    def _from_tsv(cls, text: str, path: str, language: str) -> "EntityVocab":
        titles, counts = [], []
        for line_number, line in enumerate(split_lines(text), 1):
            title, tab, count = line.rpartition("\t")
            if not tab or not title:
                raise ValueError(f"{path}, line {line_number}: expected 'title<TAB>count', got {line!r}")
            try:
                counts.append(int(count))
            except ValueError:
                raise ValueError(f"{path}, line {line_number}: the count {count!r} is not an integer") from None
            titles.append(title)
        return cls._from_entries([[(t, language)] for t in titles], counts, language, source=path)

    @classmethod
    def _from_jsonl(cls, text: str, path: str) -> "EntityVocab":
        by_id: Dict[int, Tuple[List[Tuple[str, Optional[str]]], int]] = {}
        languages = set()
        for line_number, line in enumerate(split_lines(text), 1):
            if not line.strip():
                continue
            try:
                item = json.loads(line)
                entity_id, count = item["id"], item.get("count", 0)
                pairs = [(str(title), lang) for title, lang in item["entities"]]
            except (json.JSONDecodeError, KeyError, TypeError, ValueError) as error:
                raise ValueError(
                    f'{path}, line {line_number}: expected {{"id": int, "entities": [[title, language], ...], '
                    f'"count": int}} ({type(error).__name__}: {error})'
                ) from None
            if not isinstance(entity_id, int) or entity_id < 0 or not isinstance(count, int) or not pairs:
                raise ValueError(f"{path}, line {line_number}: bad id, count or empty entities in {line.strip()!r}")
            if entity_id in by_id:
                raise ValueError(f"{path}, line {line_number}: id {entity_id} appears twice")
            by_id[entity_id] = (pairs, count)
            languages.update(lang for title, lang in pairs if title not in cls.SPECIAL_TOKENS)
        if not by_id:
            raise ValueError(f"{path}: no entities")
        size = max(by_id) + 1
        if size != len(by_id):
            # mLUKE's multilingual vocabularies are cut after sorting, leaving unused ids: keep the file's ids.
            logger.warning("%s: %d of ids 0..%d are unused", path, size - len(by_id), size - 1)
        entries: List[Optional[List[Tuple[str, Optional[str]]]]] = [None] * size
        counts = [0] * size
        for entity_id, (pairs, count) in by_id.items():
            entries[entity_id], counts[entity_id] = pairs, count
        return cls._from_entries(entries, counts, next(iter(languages)) if len(languages) == 1 else None, source=path)

    @classmethod
    def _from_transformers_json(cls, text: str, path: str, language: str) -> "EntityVocab":
        mapping = cls._read_json_object(text, path)
        # a LukeTokenizer's tokenizer_config.json (transformers 5) holds the vocabulary as its entity_vocab
        if isinstance(mapping, dict) and isinstance(mapping.get("entity_vocab"), dict):
            prefixed = mapping.get("tokenizer_class") == "MLukeTokenizer"
            return cls.from_transformers_mapping(mapping["entity_vocab"], path, prefixed, language)
        return cls.from_transformers_mapping(mapping, path, language=language)

    @classmethod
    def from_language_prefixed_json(cls, path: PathLike) -> "EntityVocab":
        """
        Reads `MLukeTokenizer`'s `entity_vocab.json` (the `studio-ousia/mluke-*` checkpoints): `{"language:title": id}`,
        the language being the text before the first colon (`"en:Star Wars: Episode IV"` is the English "Star Wars:
        Episode IV"), the special entities (`[PAD]`, `[UNK]`, `[MASK]`, `[MASK2]`) without one. A key with no language
        code before its first colon is kept as a title of no language, and counted in a warning.
        """
        path = os.fspath(path)
        return cls.from_transformers_mapping(cls._read_json_object(read_text(path), path), path, language_prefixed=True)

    @classmethod
    def from_checkpoint(cls, name_or_path: str) -> "EntityVocab":
        """
        The entity vocabulary of a LUKE checkpoint or tokenizer (a directory or a hub name) as its `LukeTokenizer` or
        `MLukeTokenizer` saved it: `entity_vocab.json` (the released layout), else the `entity_vocab` inside
        `tokenizer_config.json` (transformers 5's `save_pretrained`). Where `tokenizer_config.json` names
        `MLukeTokenizer`, keys are `language:title` (see `from_language_prefixed_json`); else they are titles of the
        language its `entity_vocab_language` names (what `export-luke` writes of a vocabulary of one language), English
        where it names none (the released LUKE checkpoints).
        """
        from luke_allennlp.resources.checkpoint_tokenizer import checkpoint_entities, read_tokenizer_config
        from luke_allennlp.resources.tokenization import ENTITY_VOCAB_LANGUAGE

        found = checkpoint_entities(name_or_path)
        if found is None:
            raise ValueError(
                f"{name_or_path} has no entity vocabulary: neither entity_vocab.json (the released layout) nor an "
                "entity_vocab in tokenizer_config.json (transformers 5's save_pretrained of a LukeTokenizer)"
            )
        mapping, path = found
        config = read_tokenizer_config(name_or_path)
        language = config.get(ENTITY_VOCAB_LANGUAGE) or "en"
        if not isinstance(language, str) or not LANGUAGE_CODE.fullmatch(language):
            raise ValueError(
                f"{name_or_path}: tokenizer_config.json's {ENTITY_VOCAB_LANGUAGE} {language!r} is no language code"
            )
        prefixed = config.get("tokenizer_class") == "MLukeTokenizer"
        return cls.from_transformers_mapping(mapping, path, prefixed, language=language)

    @classmethod
    def from_transformers_mapping(
        cls, mapping: Dict[str, int], source: str, language_prefixed: bool = False, language: str = "en"
    ) -> "EntityVocab":
        """
        The vocabulary of a `{title: id}` object (`source` names where it was read, for errors). With
        `language_prefixed` (mLUKE), keys are `language:title` (see `from_language_prefixed_json`); else every
        title gets `language`.
        """
        if not isinstance(mapping, dict) or not all(
            isinstance(i, int) and not isinstance(i, bool) and i >= 0 for i in mapping.values()
        ):
            raise ValueError(f"{source}: expected a JSON object mapping titles to non-negative integer ids")
        if not mapping:
            raise ValueError(f"{source}: no entities")
        entries: List[Optional[List[Tuple[str, Optional[str]]]]] = [None] * (max(mapping.values()) + 1)
        if not language_prefixed:
            for title, entity_id in mapping.items():
                entries[entity_id] = (entries[entity_id] or []) + [(title, language)]
            return cls._from_entries(entries, [0] * len(entries), language, source=source)
        unprefixed = []
        for key, entity_id in mapping.items():
            special = key in cls.SPECIAL_TOKENS or key == "[MASK2]"
            match = None if special else LANGUAGE_PREFIX.match(key)
            if match is None and not special:
                unprefixed.append(key)
            pair = (match.group(2), match.group(1)) if match else (key, None)
            entries[entity_id] = (entries[entity_id] or []) + [pair]
        if unprefixed:
            logger.warning(
                "%s: %d titles have no language prefix, e.g. %r; kept without a language",
                source,
                len(unprefixed),
                unprefixed[0],
            )
        return cls._from_entries(entries, [0] * len(entries), None, source=source)

    @staticmethod
    def _read_json_object(text: str, path: str) -> Dict[str, Any]:
        try:
            return json.loads(text)
        except json.JSONDecodeError as error:
            raise ValueError(
                f"{path}, line {error.lineno}: neither LUKE's JSONL nor a JSON object {{title: id}} ({error.msg})"
            ) from None

    # --- writing -----------------------------------------------------------------------------------------------

    def save(self, path: PathLike) -> None:
        """LUKE's TSV when `path` ends with `.tsv`, else LUKE's JSONL. Written under a temporary name and renamed: an
        interrupted save leaves the previous file (or none), never a partial vocabulary."""
        temporary = f"{os.fspath(path)}.tmp-{os.getpid()}"
        try:
            if os.fspath(path).endswith(".tsv"):
                self.save_tsv(temporary)
            else:
                self.save_jsonl(temporary)
            os.replace(temporary, path)
        finally:
            if os.path.exists(temporary):
                os.remove(temporary)

    def save_jsonl(self, path: PathLike) -> None:
        """LUKE's JSONL: one `{"id", "entities": [[title, language], ...], "count"}` per used id."""
        with open(path, "w", encoding="utf-8") as f:
            for entity_id, pairs in enumerate(self._entries):
                if pairs is not None:
                    item = {"id": entity_id, "entities": [list(p) for p in pairs], "count": self._counts[entity_id]}
                    f.write(json.dumps(item, ensure_ascii=False) + "\n")

    def save_tsv(self, path: PathLike) -> None:
        """LUKE's TSV (`title<TAB>count`, id = line): one title per id, ids without gaps."""
        with open(path, "w", encoding="utf-8") as f:
            for entity_id in range(len(self)):
                f.write(f"{self.title(entity_id)}\t{self._counts[entity_id]}\n")

    def to_transformers_json(self, language_prefixed: Optional[bool] = None) -> Dict[str, int]:
        """
        The `{title: id}` of `transformers`' `entity_vocab.json`. Titles of a multilingual vocabulary (or any, with
        `language_prefixed=True`: `MLukeTokenizer`'s layout) are written `"language:title"` as mLUKE's are; special
        tokens never carry a language.
        """
        multilingual = self.language is None if language_prefixed is None else language_prefixed
        mapping: Dict[str, int] = {}
        for entity_id, pairs in enumerate(self._entries):
            for title, lang in pairs or ():
                key = f"{lang}:{title}" if multilingual and lang and title not in self.SPECIAL_TOKENS else title
                mapping.setdefault(key, entity_id)
        return mapping

    # --- lookup ------------------------------------------------------------------------------------------------

    def __len__(self) -> int:
        """The number of ids (the size of the entity embedding table)."""
        return len(self._entries)

    def __contains__(self, title: object) -> bool:
        return title in self._ids

    def __getitem__(self, title: str) -> int:
        try:
            return self._ids[title]
        except KeyError:
            raise KeyError(f"{title!r} is not in the entity vocabulary") from None

    def __iter__(self) -> Iterator[str]:
        """Every title, in id order."""
        for pairs in self._entries:
            for title, _ in pairs or ():
                yield title

    def get(self, title: str, default: Optional[int] = None, language: Optional[str] = None) -> Optional[int]:
        if language is not None:
            return self._ids_by_language.get((title, language), default)
        return self._ids.get(title, default)

    def title(self, entity_id: int, language: Optional[str] = None) -> str:
        """The title of an id (in `language`, if given and the id has several)."""
        pairs = self._entries[entity_id] if 0 <= entity_id < len(self._entries) else None
        if not pairs:
            raise KeyError(f"no entity has id {entity_id}")
        if language is not None:
            for title, lang in pairs:
                if lang == language:
                    return title
        return pairs[0][0]

    def count(self, entity_id: int) -> int:
        if not 0 <= entity_id < len(self._counts):
            raise KeyError(f"no entity has id {entity_id}")
        return self._counts[entity_id]

    @property
    def pad_id(self) -> int:
        return self[self.PAD]

    @property
    def unk_id(self) -> int:
        return self[self.UNK]

    @property
    def languages(self) -> List[str]:
        """The languages of the titles (sorted; the special tokens have none)."""
        return sorted({lang for _, lang in self._ids_by_language if lang is not None})

    @property
    def mask_id(self) -> int:
        return self[self.MASK]

    def __repr__(self) -> str:
        return f"EntityVocab({len(self)} ids, language={self.language!r})"
