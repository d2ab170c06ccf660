import collections
import logging
import math
import os
import unicodedata
from dataclasses import dataclass
from typing import Any, Counter, Dict, Iterator, List, Optional, Sequence, Tuple

import numpy as np
import torch
from allennlp.common.file_utils import cached_path
from allennlp.common.util import lazy_groups_of
from allennlp.data import DatasetReader, Instance
from allennlp.data.fields import MetadataField, TensorField

from luke_allennlp.data.inputs import tensor_fields
from luke_allennlp.data.sources import Columns, SourceReader, cell
from luke_allennlp.data.windows import tokenize
from luke_allennlp.resources.checkpoint_tokenizer import max_mention_length as checkpoint_max_mention_length
from luke_allennlp.resources.checkpoint_vocab import checkpoint_entity_vocab
from luke_allennlp.resources.entity_disambiguation import EdMention, read_benchmark
from luke_allennlp.resources.entity_vocab import EntityVocab
from luke_allennlp.resources.hf_datasets import Rows
from luke_allennlp.resources.mentions.json_dictionary import MentionDictionary
from luke_allennlp.resources.mentions.name_matcher import NameMatcher
from luke_allennlp.resources.pretraining_corpus import METADATA_FILE, PretrainingCorpus
from luke_allennlp.resources.tokenization import load_fast_tokenizer, special_token_layout

logger = logging.getLogger(__name__)


def _letter_or_mark(character: str) -> bool:
    return character.isalnum() or unicodedata.category(character).startswith("M")


NO_GOLD = -2  # a mention without a gold entity (raw text); -1 is a gold entity outside the entity vocabulary
PAGES = ("all", "train", "held_out")
ROWS_PER_READ = 128
STATS = (
    "documents",
    "windows",
    "instances",
    "mentions",
    "mentions_without_candidates",
    "gold_outside_vocabulary",
    "gold_outside_candidates",
    "candidates_outside_vocabulary",
    "documents_split_into_windows",
    "windows_split_for_max_entities",
    "mentions_cut_to_max_mention_length",
    "mentions_cut_at_window_end",
)


@DatasetReader.register("luke_entity_disambiguation")
class LukeEntityDisambiguationReader(SourceReader):
    """
    Entity disambiguation (Yamada et al., NAACL 2022, "Global Entity Disambiguation with BERT") and entity linking.
    Each instance is a window of a document's subwords with one `[MASK]` entity per mention over the mention's
    subwords, each mention with its candidate entities and, where known, its gold entity. Reads:

    - a corpus directory written by `allennlp build-pretraining-corpus`: its linked mentions are the gold mentions,
      their entities the labels (Wikipedia hyperlinks as training data, as in the paper). The corpus must be
      tokenised with the model's tokenizer; its entity ids are mapped to the model's entity vocabulary by title.
      A mention's name (its subwords, decoded) is looked up in `mention_dictionary` for candidates; with
      `pages: "train"` / `"held_out"` every `held_out_every`-th page (by page id) is held out, for evaluation on
      pages not trained on;
    - a file in the ED benchmarks' format (deep-ed's CSV: `aida_train.csv`, `aida_testB.csv`, `wned-*.csv`; see
      `luke_allennlp.resources.entity_disambiguation`), with its own candidates and priors;
    - raw text (`text_to_instances`, for the predictor): mentions found with the mention dictionary (`NameMatcher`:
      longest match at token boundaries, names of link probability >= `min_link_probability`), or given;
    - datasets (`hf://NAME[:CONFIG][@SPLIT]`, a `save_to_disk` directory, Parquet, Arrow, JSON lines; see
      `luke_allennlp.data.sources`), a document per row: `text`, `mentions` (a list of `{"start", "end", "entity"}`,
      characters with the end exclusive and the gold entity's title, or null where unknown; optionally
      `"candidates"`, titles, with `"priors"`; without them, the mention dictionary's) and an `id` where there is
      one. Other column names: `columns`.

    Candidates are a mention's entities by p(entity | mention), those outside the entity vocabulary dropped
    (counted), the `max_candidates` most probable kept (30 as in the paper). Documents longer than a window are
    split into near-equal windows that do not cut mentions (the original code's "simple" split), and windows with
    more than `max_entities` mentions into several instances, so that every mention is disambiguated. Mentions
    without candidates, with a gold entity outside the vocabulary or outside their candidates are kept (they score
    as wrong) and counted, as is everything cut or split, in `stats`, logged at the end of each read.

    With `mention_detection`, benchmark documents are read as end-to-end linking data: the mentions are found in the
    text as in raw text, and the gold mentions become the gold links the model scores against (span and entity).

    # Parameters

    model_name : `str`
        The LUKE checkpoint (its fast word tokenizer, and its `entity_vocab.json` by default).
    entity_vocab : `str`, optional (default = `None`)
        The vocabulary of the checkpoint's entity table (any format `EntityVocab.from_file` reads); `None`: the
        checkpoint's `entity_vocab.json` (or LUKE's `entity_vocab.jsonl`; an mLUKE checkpoint's `language:title`
        keys are read as titles of their languages).
    mention_dictionary : `str`, optional (default = `None`)
        The file of `allennlp build-mention-dictionary` (SQLite, queried as needed; or JSON, version 2, loaded
        whole): candidates for corpus mentions and raw text, names for mention detection. Benchmark files bring
        their own candidates.
    max_candidates : `int`, optional (default = `30`)
    max_seq_length : `int`, optional (default = `512`)
        Subwords per window, special tokens included.
    max_entities : `int`, optional (default = `128`)
        Mentions per instance.
    max_mention_length : `int`, optional (default = the checkpoint's)
        Subwords per mention entity; longer mentions keep their first ones (counted). The checkpoint's
        tokenizer_config.json `max_mention_length` (as `LukeTokenizer`), else 30.
    pages : `str`, optional (default = `"all"`)
        Which pages of a corpus to read: `"all"`, `"train"` (all but every `held_out_every`-th) or `"held_out"`.
    held_out_every : `int`, optional (default = `10`)
    mention_detection : `bool`, optional (default = `False`)
        Read benchmark files as end-to-end linking data (see above).
    min_link_probability : `float`, optional (default = `0.01`)
        Names linked less often than this where they occur are not detected as mentions.
    columns : `Dict[str, str]`, optional (default = `None`)
        Datasets: the column of each role not under its default name: `text`, `mentions`, `id`.
    """

    ROLES = {"text": ("text",), "mentions": ("mentions",), "id": ("id", "document_id")}

    def __init__(
        self,
        model_name: str,
        entity_vocab: Optional[str] = None,
        mention_dictionary: Optional[str] = None,
        max_candidates: int = 30,
        max_seq_length: int = 512,
        max_entities: int = 128,
        max_mention_length: Optional[int] = None,
        pages: str = "all",
        held_out_every: int = 10,
        mention_detection: bool = False,
        min_link_probability: float = 0.01,
        columns: Optional[Dict[str, str]] = None,
        **kwargs,
    ) -> None:
        super().__init__(**kwargs)
        self.columns = Columns("luke_entity_disambiguation", self.ROLES, columns)
        self.max_seq_length = max_seq_length  # (the longest input: checked against the model's positions)
        if max_mention_length is None:
            max_mention_length = checkpoint_max_mention_length(model_name)
        if pages not in PAGES:
            raise ValueError(f"pages must be one of {PAGES}, not {pages!r}")
        if min(max_candidates, max_entities, max_mention_length, held_out_every) < 1:
            raise ValueError("max_candidates, max_entities, max_mention_length and held_out_every must be positive")
        self.tokenizer = load_fast_tokenizer(model_name)
        self.prefix, self.suffix = special_token_layout(self.tokenizer)
        self.room = max_seq_length - len(self.prefix) - len(self.suffix)
        if self.room < 1:
            raise ValueError(f"max_seq_length {max_seq_length} leaves no room for words")
        self.entity_vocab = checkpoint_entity_vocab(
            model_name, entity_vocab, ("entity_vocab.json", "entity_vocab.jsonl")
        )
        self.dictionary = MentionDictionary.from_file(cached_path(mention_dictionary)) if mention_dictionary else None
        self.max_candidates = max_candidates
        self.max_entities = max_entities
        self.max_mention_length = max_mention_length
        self.pages = pages
        self.held_out_every = held_out_every
        self.mention_detection = mention_detection
        self.min_link_probability = min_link_probability
        self._matcher: Optional[NameMatcher] = None
        self.stats: Counter = collections.Counter(dict.fromkeys(STATS, 0))

    # --- reading files ---------------------------------------------------------------------------------------------

    def native_file(self, path: str) -> bool:
        """A pretraining corpus directory, and the benchmarks' CSV (tab-separated, `CANDIDATES` and `GT:` fields)."""
        if os.path.isdir(path):
            return os.path.isfile(os.path.join(path, METADATA_FILE))
        return path.lower().endswith((".csv", ".tsv"))

    def _read(self, file_path: str) -> Iterator[Instance]:
        self.stats = collections.Counter(dict.fromkeys(STATS, 0))
        rows = self.open_rows(file_path)
        if rows is not None:
            for document_id, text, mentions in self.shard_iterable(self.dataset_documents(rows)):
                if self.mention_detection:
                    yield from self.text_to_instances(text, None, document_id, gold_links=mentions)
                else:
                    yield from self.text_to_instances(text, mentions, document_id)
            logger.info("%s: %s", file_path, dict(self.stats))
            return
        path = cached_path(file_path)
        if os.path.isdir(path):
            if self.mention_detection:
                raise ValueError(
                    f"{file_path}: mention_detection needs text (a benchmark file); a corpus has subwords only"
                )
            yield from self._read_corpus(path)
        else:
            file_stats: Counter = collections.Counter()
            documents = read_benchmark(path, file_stats)
            for name in ("nil_mentions", "contexts_not_overlapping"):
                self.stats[name] += file_stats[name]
            for document in self.shard_iterable(documents):
                if self.mention_detection:
                    yield from self.text_to_instances(document.text, None, document.id, gold_links=document.mentions)
                else:
                    yield from self.text_to_instances(document.text, document.mentions, document.id)
        logger.info("%s: %s", file_path, dict(self.stats))

    def dataset_documents(self, rows: Rows) -> Iterator[Tuple[str, str, List[EdMention]]]:
        """(id, text, mentions) of each row of a dataset (see the class's doc); a bad mention raises naming it."""
        text_column, mentions_column = self.columns.require(rows, "text"), self.columns.require(rows, "mentions")
        id_column = self.columns.find(rows, "id")
        count = 0
        for index, row in rows:
            where = rows.where(index)
            document_id = f"{rows.name}:{row[id_column]}" if id_column else where
            text = cell(row, text_column, str, where)
            mentions = []
            for number, mention in enumerate(cell(row, mentions_column, list, where)):
                at = f"{where}, mention {number}"
                if not isinstance(mention, dict):
                    raise ValueError(f"{at}: expected {{'start', 'end', 'entity'}}, not {str(mention)[:60]!r}")
                start, end = cell(mention, "start", int, at), cell(mention, "end", int, at)
                if not 0 <= start < end <= len(text):
                    raise ValueError(f"{at}: [{start}, {end}) is not a span of the {len(text)} characters of the text")
                gold = mention.get("entity")
                if gold is not None and not isinstance(gold, str):
                    raise ValueError(f"{at}: the entity should be a title or null, not {gold!r}")
                titles = mention.get("candidates") or []
                priors = mention.get("priors") or [1.0 / max(1, len(titles))] * len(titles)
                if len(priors) != len(titles):
                    raise ValueError(f"{at}: {len(titles)} candidates but {len(priors)} priors")
                candidates = list(zip(titles, priors))
                if not candidates and gold is not None and self.dictionary is not None:
                    candidates = self._dictionary_candidates(text[start:end])
                mentions.append(EdMention(start, end, gold, sorted(candidates, key=lambda c: -c[1])))
            count += 1
            yield document_id, text, mentions
        if not count:
            raise ValueError(f"{rows.name}: no documents")

    def _read_corpus(self, path: str) -> Iterator[Instance]:
        corpus = PretrainingCorpus(path)
        # (a LUKE checkpoint's vocabulary is RoBERTa's plus <ent> and <ent2>: a corpus tokenised with RoBERTa's fits)
        model_vocab = self.tokenizer.get_vocab()
        if any(model_vocab.get(token) != i for token, i in corpus.tokenizer().get_vocab().items()):
            raise ValueError(
                f"{path}: the corpus was tokenised with another vocabulary than the model's ({corpus.tokenizer_path})"
            )
        corpus_vocab = corpus.entity_vocab()
        special = {corpus_vocab.get(t) for t in EntityVocab.SPECIAL_TOKENS}
        # corpus entity id -> model entity id (-1: outside the model's vocabulary, e.g. [UNK] links)
        to_model = np.full(len(corpus_vocab), -1, dtype=np.int64)
        for entity_id in range(len(corpus_vocab)):
            if entity_id not in special:
                try:
                    to_model[entity_id] = self.entity_vocab.get(corpus_vocab.title(entity_id), -1)
                except KeyError:  # an id the file leaves unused
                    pass
        dataset = corpus.load_dataset()
        rows = np.arange(len(dataset))
        if self.pages != "all":
            page_ids = np.asarray(dataset["page_id"])
            held_out = np.isin(page_ids, np.unique(page_ids)[:: self.held_out_every])
            rows = rows[held_out if self.pages == "held_out" else ~held_out]
        for chunk in lazy_groups_of(self.shard_iterable(rows), ROWS_PER_READ):
            batch = dataset[[int(i) for i in chunk]]
            for k, row in enumerate(chunk):
                where = f"{path} row {row}"
                words, entities, positions = (
                    batch["word_ids"][k],
                    batch["entity_ids"][k],
                    batch["entity_position_ids"][k],
                )
                if len(positions) != len(entities) or any(
                    not p or min(p) < 0 or max(p) >= len(words) for p in positions
                ):
                    raise ValueError(
                        f"{where}: entity positions {positions} do not fit its {len(words)} words and {len(entities)} entities"
                    )
                mentions = []
                for entity_id, mention_positions in zip(entities, positions):
                    first, end = min(mention_positions), max(mention_positions) + 1
                    name = self.tokenizer.decode(words[first:end]).strip()
                    gold = int(to_model[entity_id]) if 0 <= entity_id < len(to_model) else -1
                    gold_title = (
                        corpus_vocab.title(entity_id) if 0 <= entity_id < len(to_model) else None
                    )  # "[UNK]" too
                    mentions.append(
                        self._mention(
                            first, end, gold, self._corpus_candidates(name), {"text": name, "gold": gold_title}
                        )
                    )
                self.stats["documents"] += 1
                yield from self._instances(list(words), mentions, where)

    # --- inputs: a document's subwords and mentions -> instances ---------------------------------------------------

    def text_to_instances(
        self,
        text: str,
        mentions: Optional[Sequence[EdMention]] = None,
        document_id: str = "input",
        gold_links: Optional[Sequence[EdMention]] = None,
    ) -> List[Instance]:
        """
        The instances of a text: `mentions` (character spans with their gold entity if known and their candidates;
        a span with neither, as the predictor gives, gets the mention dictionary's candidates for its text), or, when
        `None`, the names the mention dictionary finds in the text (`detect_mentions`). `gold_links` are the
        mentions that end-to-end linking is scored against (span and entity).
        """
        tokens = tokenize(self.tokenizer, text)
        if mentions is None:
            mentions = self.detect_mentions(text)
        built = []
        for mention in mentions:
            span = tokens.char_span_to_subwords(mention.start, mention.end)
            if span is None:
                raise ValueError(
                    f"{document_id}: mention {mention.start}-{mention.end} ({text[mention.start : mention.end]!r}) covers no subword"
                )
            candidates = mention.candidates
            if not candidates and mention.gold is None and self.dictionary is not None:
                candidates = self._dictionary_candidates(text[mention.start : mention.end])
            gold = NO_GOLD if mention.gold is None else self.entity_vocab.get(mention.gold, -1)
            meta = {
                "start": mention.start,
                "end": mention.end,
                "text": text[mention.start : mention.end],
                "gold": mention.gold,
            }
            built.append(self._mention(span[0], span[1] + 1, gold, candidates, meta))
        links = None
        if gold_links is not None:
            links = [(tokens.char_span_to_subwords(m.start, m.end), [m.start, m.end, m.gold]) for m in gold_links]
            if any(span is None for span, _ in links):
                raise ValueError(f"{document_id}: a gold link covers no subword")
        self.stats["documents"] += 1
        return list(self._instances(tokens.ids, built, document_id, links))

    def text_to_instance(
        self, text: str, mentions: Optional[Sequence[EdMention]] = None, document_id: str = "input"
    ) -> Instance:  # type: ignore[override]
        """One instance of a text that fits one window (see `text_to_instances`)."""
        instances = self.text_to_instances(text, mentions, document_id)
        if len(instances) != 1:
            raise ValueError(f"{document_id}: the text needs {len(instances)} instances; use text_to_instances")
        return instances[0]

    def detect_mentions(self, text: str) -> List[EdMention]:
        """The dictionary's names found in `text` whose candidates include an entity of the vocabulary."""
        if self.dictionary is None:
            raise ValueError("finding mentions in raw text needs a mention_dictionary")
        if self._matcher is None:
            # (names are looked up as the text brings them in a SQLite dictionary, all held in a JSON one's matcher)
            self._matcher = self.dictionary.name_matcher(
                self.min_link_probability,
                lambda candidates: 1 if any(title in self.entity_vocab for title, _ in candidates) else None,
            )
        mentions = []
        for start, end, name in self._matcher.find(text):
            if self._matcher.value(name) is None:  # matched so that it hides shorter names inside it
                self.stats["detected_names_without_candidates"] += 1
            else:
                mentions.append(EdMention(start, end, None, self.dictionary.candidates(name)))
        return mentions

    def _dictionary_candidates(self, name: str) -> List[Tuple[str, float]]:
        if self.dictionary is None:
            raise ValueError("candidates for corpus mentions and raw text come from a mention_dictionary: set one")
        return self.dictionary.candidates(name, ignore_case=True)

    def _corpus_candidates(self, name: str) -> List[Tuple[str, float]]:
        """
        Candidates of a corpus mention's name, its subwords decoded. Where a link's edge falls inside a subword
        (`Scott, James C.,` for the anchor `Scott, James C.`), the punctuation the subword adds is trimmed (counted);
        a combining mark is part of its letter (decomposed `Café` is never trimmed to `Cafe`).
        """
        candidates = self._dictionary_candidates(name)
        trimmed = name
        while not candidates and len(trimmed) > 1 and not _letter_or_mark(trimmed[-1]):
            trimmed = trimmed[:-1].rstrip()
            candidates = self._dictionary_candidates(trimmed)
        self.stats["corpus_names_trimmed"] += bool(candidates) and trimmed != name
        return candidates

    def _mention(
        self, first: int, end: int, gold: int, candidates: Sequence[Tuple[str, float]], meta: Dict[str, Any]
    ) -> "_Mention":
        """Candidates restricted to the vocabulary and cut to `max_candidates`; counted."""
        ids, priors = [], []
        for title, prior in candidates:
            entity_id = self.entity_vocab.get(title)
            if entity_id is None:
                self.stats["candidates_outside_vocabulary"] += 1
            elif len(ids) < self.max_candidates:
                ids.append(entity_id)
                priors.append(prior)
        self.stats["mentions"] += 1
        self.stats["mentions_without_candidates"] += not ids
        if gold == -1:
            self.stats["gold_outside_vocabulary"] += 1
        elif gold >= 0 and gold not in ids:
            self.stats["gold_outside_candidates"] += 1
        meta["candidates"] = [self.entity_vocab.title(i) for i in ids]
        return _Mention(first, end, gold, ids, priors, meta)

    def _instances(
        self,
        ids: List[int],
        mentions: List["_Mention"],
        document_id: str,
        gold_links: Optional[List[Tuple[Tuple[int, int], list]]] = None,
    ) -> Iterator[Instance]:
        windows = self._windows(len(ids), mentions)
        self.stats["documents_split_into_windows"] += len(windows) > 1
        for number, (begin, end) in enumerate(windows):
            inside = [m for m in mentions if begin <= m.first < end]
            chunks = [inside[i : i + self.max_entities] for i in range(0, len(inside), self.max_entities)] or [[]]
            self.stats["windows"] += 1
            self.stats["windows_split_for_max_entities"] += len(chunks) > 1
            # A gold link goes with the chunk holding the mention of its span (only that one can match it).
            chunk_of = {
                (m.meta.get("start"), m.meta.get("end")): part for part, chunk in enumerate(chunks) for m in chunk
            }
            chunk_links: List[List[list]] = [[] for _ in chunks]
            for (first, _), link in gold_links or ():
                if begin <= first < end:
                    chunk_links[chunk_of.get((link[0], link[1]), 0)].append(link)
            for part, chunk in enumerate(chunks):
                if not chunk and gold_links is None:
                    continue  # (nothing to disambiguate or score)
                name = document_id + (f" [window {number + 1}/{len(windows)}]" if len(windows) > 1 else "")
                name += (
                    f" [mentions {part * self.max_entities + 1}-{part * self.max_entities + len(chunk)}]"
                    if len(chunks) > 1
                    else ""
                )
                yield self._instance(
                    ids[begin:end], begin, chunk, name, chunk_links[part] if gold_links is not None else None
                )

    def _windows(self, length: int, mentions: List["_Mention"]) -> List[Tuple[int, int]]:
        """Near-equal windows of at most `room` subwords covering `length`, their edges moved off mentions."""
        if length <= self.room:
            return [(0, length)]
        size = math.ceil(length / math.ceil(length / self.room))
        covering = np.full(length + 1, -1)
        for i, m in enumerate(mentions):
            covering[m.first : m.end] = i
        windows, begin = [], 0
        while begin < length:
            end = cut = min(length, begin + size)
            while cut > begin + 1 and covering[cut] >= 0 and covering[cut] == covering[cut - 1]:
                cut -= 1
            if covering[cut] < 0 or covering[cut] != covering[cut - 1]:  # else a mention longer than a window: cut it
                end = cut
            windows.append((begin, end))
            begin = end
        return windows

    def _instance(
        self,
        ids: Sequence[int],
        begin: int,
        mentions: List["_Mention"],
        document_id: str,
        gold_links: Optional[List[list]],
    ) -> Instance:
        shift = len(self.prefix) - begin  # document subword -> input position
        word_ids = [*self.prefix, *ids, *self.suffix]
        window_end = begin + len(ids)
        lengths = []
        for m in mentions:
            self.stats["mentions_cut_at_window_end"] += m.end > window_end
            length = min(m.end, window_end) - m.first
            self.stats["mentions_cut_to_max_mention_length"] += length > self.max_mention_length
            lengths.append(min(length, self.max_mention_length))
        positions = np.full((len(mentions), max(lengths, default=1)), -1, dtype=np.int64)
        width = max((len(m.candidates) for m in mentions), default=1) or 1
        candidates = np.full((len(mentions), width), -1, dtype=np.int64)
        priors = np.zeros((len(mentions), width), dtype=np.float32)
        for i, (m, length) in enumerate(zip(mentions, lengths)):
            positions[i, :length] = np.arange(m.first, m.first + length) + shift
            candidates[i, : len(m.candidates)] = m.candidates
            priors[i, : len(m.priors)] = m.priors
        metadata: Dict[str, Any] = {"id": document_id, "mentions": [m.meta for m in mentions]}
        if gold_links is not None:
            metadata["gold_links"] = gold_links
        self.stats["instances"] += 1
        fields = {
            **tensor_fields(
                self.tokenizer.pad_token_id,
                word_ids=torch.tensor(word_ids),
                word_attention_mask=torch.ones(len(word_ids), dtype=torch.bool),
                entity_position_ids=positions,
                entity_attention_mask=torch.ones(len(mentions), dtype=torch.bool),
            ),
            "gold_entity_ids": TensorField(
                torch.tensor([m.gold for m in mentions], dtype=torch.long), padding_value=NO_GOLD
            ),
            "candidate_ids": TensorField(torch.from_numpy(candidates), padding_value=-1),
            "candidate_priors": TensorField(torch.from_numpy(priors), padding_value=0.0),
            "metadata": MetadataField(metadata),
        }
        return Instance(fields)


@dataclass
class _Mention:
    first: int  # subwords [first, end) of the document
    end: int
    gold: int  # gold entity id; -1: outside the vocabulary; NO_GOLD: unknown
    candidates: List[int]  # entity ids, most probable first
    priors: List[float]  # their p(entity | mention)
    meta: Dict[str, Any]  # what the output reports: characters, text, gold title, candidate titles
