"""
Inputs of the sentence-level tasks (GLUE/JGLUE style): JSON-lines files read record by record with errors that name
the file and line, and one sentence or a sentence pair in the tokenizer's own format (`<s> a </s></s> b </s>` for
RoBERTa/LUKE/mLUKE, `[CLS] a [SEP] b [SEP]` for BERT), cut to `max_seq_length` as transformers' `truncation=True`
(longest first) does, with every cut counted. Optionally (`mention_dictionary`), entity inputs: the dictionary's names found in the text
(`luke_allennlp.data.entity_mentions`).
"""

import logging
from collections import Counter
from types import SimpleNamespace
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple

import numpy as np
from allennlp.data import Instance
from allennlp.data.fields import Field
from transformers import PreTrainedTokenizerFast

from luke_allennlp.data.entity_mentions import MentionLinker, check_entity_limits, entity_tensor_fields
from luke_allennlp.data.inputs import tokenize
from luke_allennlp.data.sources import SourceReader
from luke_allennlp.data.windows import PairLayout, stack_window_entities
from luke_allennlp.resources.files import SeenIds, parse_json, read_text, require, split_lines
from luke_allennlp.resources.hf_datasets import Rows, builder_of
from luke_allennlp.resources.tokenization import load_fast_tokenizer, special_tokens_template

logger = logging.getLogger(__name__)


def json_lines(path: str, name: str) -> Iterator[Tuple[int, str, Dict[str, Any]]]:
    """(line number, "file:line", record) for each non-blank line, which must be a JSON object."""
    for number, line in enumerate(split_lines(read_text(path, name)), start=1):
        if not line.strip():
            continue
        where = f"{name}:{number}"
        record = parse_json(line, where)
        if not isinstance(record, dict):
            raise ValueError(f"{where}: expected a JSON object ({{...}}), not {type(record).__name__}")
        yield number, where, record


class ExampleIds:
    """Each record's id: its `id_field` (which must be there, and must not repeat), or `file:line` without one."""

    def __init__(self, id_field: Optional[str]) -> None:
        self.id_field = id_field
        self.seen = SeenIds()

    def __call__(self, record: Dict[str, Any], where: str, first_in: str) -> str:
        """`first_in`: where the record is, for the error naming a repeated id ("line 7", "row 6")."""
        if self.id_field is None:
            return where
        value = require(record, self.id_field, None, where)
        if not isinstance(value, (str, int)) or isinstance(value, bool):
            raise ValueError(f"{where}: the id field {self.id_field!r} should be a string or an integer, not {value!r}")
        example_id = str(value)
        self.seen.check(example_id, f"{where}: example {example_id}", first_in)
        return example_id


def require_text(record: Dict[str, Any], field: str, where: str) -> str:
    """A non-empty string field."""
    text = require(record, field, str, where)
    if not text.strip():
        raise ValueError(f"{where}: field {field!r} is empty")
    return text


class JsonLinesTaskReader(SourceReader):
    """
    A reader of JSON-lines task files whose examples are sentences (`SentenceEncoder`): a subclass turns each record
    into an example (`example(record, where, has_label)`, the rest of `text_to_instance`'s arguments), and reading
    a file shards the examples, counts what is cut, logs it, and refuses a file without examples. A file whose lines
    have no label field at all (a test split) gives unlabelled instances; a label missing on some lines only is an
    error naming the line. Datasets (`luke_allennlp.data.sources`: the Hub, `save_to_disk`, Parquet, Arrow, CSV, TSV)
    are read the same way, a row a record (their fields are columns); a `ClassLabel` label's -1 is no label, and a
    subclass whose labels are class names reads a dataset's integer labels as names (`label_value`).

    # Parameters

    model_name : `str`
        The checkpoint whose fast tokenizer to use.
    max_seq_length : `int`
        Subwords per input, special tokens included.
    label_field : `str`
    id_field : `str`, optional
        The field holding the example id; `None`: `file:line`.
    mention_dictionary : `str`, optional (default = `None`)
        Entity inputs (off by default): the file written by `allennlp build-mention-dictionary` (SQLite or JSON);
        each of its names found in a text (link probability at least `min_link_probability`) becomes an entity,
        the name's most linked entity, over the name's subwords, if the checkpoint's entity vocabulary has it
        (`MentionLinker`). Without it the instances have no entity fields.
    entity_vocab : `str`, optional (default = `None`)
        The checkpoint's entity vocabulary if not its `entity_vocab.json`.
    min_link_probability : `float`, optional (default = `0.01`)
    max_entities : `int`, optional (default = `128`)
        Entities per input (first sentence's first); the rest are cut (counted).
    max_mention_length : `int`, optional (default = `30`)
        Longest mention in subwords; longer matches are skipped (counted).
    """

    ENTITY_STATS = ("mentions", "mentions_not_in_entity_vocab", "mentions_too_long", "mentions_cut_by_max_entities")

    def __init__(
        self,
        model_name: str,
        max_seq_length: int,
        label_field: str,
        id_field: Optional[str],
        mention_dictionary: Optional[str] = None,
        entity_vocab: Optional[str] = None,
        min_link_probability: float = 0.01,
        max_entities: int = 128,
        max_mention_length: int = 30,
        **kwargs,
    ) -> None:
        super().__init__(**kwargs)
        self.max_seq_length = max_seq_length  # (the longest input: checked against the model's positions)
        self.tokenizer = load_fast_tokenizer(model_name)
        self.encoder = SentenceEncoder(self.tokenizer, max_seq_length)
        self.label_field = label_field
        self.id_field = id_field
        check_entity_limits(max_entities, max_mention_length)
        self.max_entities = max_entities
        self.linker: Optional[MentionLinker] = None
        if mention_dictionary is not None:
            self.linker = MentionLinker(
                model_name, mention_dictionary, entity_vocab, min_link_probability, max_mention_length
            )
        elif entity_vocab is not None:
            raise ValueError("entity_vocab is only used with mention_dictionary (entity inputs)")

    def encode(
        self, first: str, second: Optional[str] = None, example_id: str = "input"
    ) -> Tuple[np.ndarray, np.ndarray, Optional[List[Tuple[int, int, int]]]]:
        """(input ids, token type ids) as `SentenceEncoder.encode`, and without a mention dictionary None, with one
        the entities found in the kept subwords: (entity id, first input position, last input position)."""
        if self.linker is None:
            return (*self.encoder.encode(first, second), None)
        texts = [tokenize(self.tokenizer, text) for text in (first, second) if text is not None]
        ids, types, sides = self.encoder.encode_subwords(texts[0].ids, texts[1].ids if len(texts) > 1 else None)
        matcher = self.linker.text_matcher()
        entities: List[Tuple[int, int, int]] = []
        for text, (start, kept) in zip(texts, sides):
            found = self.linker.find(matcher, text, kept)
            self.stats["mentions_not_in_entity_vocab"] += found.not_in_entity_vocab
            self.stats["mentions_too_long"] += found.too_long
            entities += [
                (entity, start + first_subword, start + last) for entity, first_subword, last in found.entities
            ]
        self.stats["mentions"] += len(entities)
        if len(entities) > self.max_entities:
            cut = len(entities) - self.max_entities
            self.stats["mentions_cut_by_max_entities"] += cut
            logger.warning("%s: %d entity mentions cut by max_entities=%d", example_id, cut, self.max_entities)
        return ids, types, entities[: self.max_entities]

    def entity_fields(
        self, rows: Sequence[List[Tuple[int, int, int]]], type_ids: Sequence[np.ndarray], single: bool = False
    ) -> Dict[str, Field]:
        """The entity fields of inputs (rows) with these entities and token type ids, (rows, entities), or
        (entities,) for a `single` input; at least one (padding) entity, so that every batch has entity inputs."""
        width = max(1, max(map(len, rows)))
        table, mask, types = stack_window_entities([SimpleNamespace(token_type_ids=t) for t in type_ids], rows, width)
        if single:
            table, mask, types = table[0], mask[0], types[0]
        return entity_tensor_fields(self.tokenizer.pad_token_id, table, mask, types)

    @property
    def stats(self) -> Counter:
        """What the last read encoded (one input per sentence or pair) and cut (`SentenceEncoder.stats`)."""
        return self.encoder.stats

    def example(self, record: Dict[str, Any], where: str, has_label: bool) -> Tuple:
        raise NotImplementedError

    def native_file(self, path: str) -> bool:
        """JSON lines are the readers' own files; CSV and TSV are datasets."""
        builder = builder_of(path)
        return builder is not None and builder[0] == "json"

    def read_examples(self, path: str, name: Optional[str] = None) -> Iterator[Tuple]:
        """(id, *example) for each line."""
        name = name or path
        records = ((where, f"line {number}", record) for number, where, record in json_lines(path, name))
        return self._examples(records, "lines")

    def dataset_examples(self, rows: Rows) -> Iterator[Tuple]:
        """(id, *example) for each row of a dataset (its columns as a record's fields)."""
        value = None
        if self.label_field in rows.columns:
            value = self.label_value(rows)
        else:
            logger.info("%s: no %r column: unlabelled instances", rows.name, self.label_field)

        def records() -> Iterator[Tuple[str, str, Dict[str, Any]]]:
            for index, row in rows:
                where = rows.where(index)
                if value is not None:
                    row = dict(row)
                    row[self.label_field] = value(row[self.label_field], where)
                    if row[self.label_field] is None:  # (a ClassLabel's -1: no label)
                        del row[self.label_field]
                yield where, f"row {index}", row

        return self._examples(records(), "rows")

    def label_value(self, rows: Rows) -> Callable[[Any, str], Any]:
        """How a dataset's label values read: a `ClassLabel`'s -1 as no label (None), the rest as they are."""
        names = rows.class_names(self.label_field)
        return lambda value, where: None if (names is not None and value == -1) else value

    def _examples(self, records: Iterator[Tuple[str, str, Dict[str, Any]]], what: str) -> Iterator[Tuple]:
        ids = ExampleIds(self.id_field)
        labelled: Optional[bool] = None
        for where, first_in, record in records:
            has_label = self.label_field in record
            if labelled is None:
                labelled = has_label
            elif has_label != labelled:
                state = "has no" if labelled else "has a"
                raise ValueError(f"{where}: {state} {self.label_field!r} field, unlike the {what} before it")
            yield (ids(record, where, first_in), *self.example(record, where, has_label))

    def _read(self, file_path: str) -> Iterator[Instance]:
        self.encoder.reset_stats()
        if self.linker is not None:
            self.stats.update(dict.fromkeys(self.ENTITY_STATS, 0))
        examples = self.read_source(file_path, self.read_examples, self.dataset_examples)
        for example_id, *example in self.shard_iterable(examples):
            yield self.text_to_instance(*example, example_id=example_id)
        self.encoder.log_stats(file_path)
        if self.linker is not None:
            logger.info("%s: entity inputs: %s", file_path, {k: self.stats[k] for k in self.ENTITY_STATS})


class SentenceEncoder:
    """
    One sentence, or a pair, as the tokenizer's input ids and token type ids. A pair longer than `max_seq_length`
    loses subwords from the end of its longer side, one at a time (transformers' `longest_first`); a single sentence
    its last subwords. Counted in `stats`: `inputs`, `truncated_inputs`, `truncated_subwords`.

    # Parameters

    tokenizer : `PreTrainedTokenizerFast`
    max_seq_length : `int`
        Subwords per input, special tokens included.
    """

    STATS = ("inputs", "truncated_inputs", "truncated_subwords")

    def __init__(self, tokenizer: PreTrainedTokenizerFast, max_seq_length: int) -> None:
        self.tokenizer = tokenizer
        self.pair = PairLayout.of(tokenizer)
        single_ids, single_types = special_tokens_template(tokenizer)
        at = single_ids.index(-1)
        self.single = (
            single_ids[:at],
            single_ids[at + 1 :],
            single_types[:at],
            single_types[at],
            single_types[at + 1 :],
        )
        self.max_seq_length = max_seq_length
        if max_seq_length - self.pair.num_special < 2:
            raise ValueError(f"max_seq_length {max_seq_length} leaves no room for a sentence pair")
        self.pad_id = tokenizer.pad_token_id
        self.reset_stats()

    def reset_stats(self) -> None:
        self.stats: Counter = Counter(dict.fromkeys(self.STATS, 0))

    def log_stats(self, name: str) -> None:
        if self.stats["truncated_inputs"]:
            logger.warning(
                "%s: %d inputs; %d cut to max_seq_length %d (%d subwords dropped)",
                name,
                self.stats["inputs"],
                self.stats["truncated_inputs"],
                self.max_seq_length,
                self.stats["truncated_subwords"],
            )
        else:
            logger.info("%s: %d inputs, none cut", name, self.stats["inputs"])

    def subwords(self, text: str) -> List[int]:
        # (cut to max_seq_length by `encode_subwords`, counted in `stats`: transformers' warning would only mislead)
        return list(self.tokenizer(text, add_special_tokens=False, verbose=False)["input_ids"])

    def encode(self, first: str, second: Optional[str] = None) -> Tuple[np.ndarray, np.ndarray]:
        """(input ids, token type ids), each (words,)."""
        ids, types, _ = self.encode_subwords(
            self.subwords(first), self.subwords(second) if second is not None else None
        )
        return ids, types

    def encode_subwords(
        self, a: List[int], b: Optional[List[int]] = None
    ) -> Tuple[np.ndarray, np.ndarray, List[Tuple[int, int]]]:
        """`encode` of subword ids, and for each side (input position of its first subword, subwords kept)."""
        self.stats["inputs"] += 1
        if b is None:
            prefix, suffix, prefix_types, text_type, suffix_types = self.single
            room = self.max_seq_length - len(prefix) - len(suffix)
            cut = max(0, len(a) - room)
            a = a[: len(a) - cut]
            ids = [*prefix, *a, *suffix]
            types = [*prefix_types, *[text_type] * len(a), *suffix_types]
            sides = [(len(prefix), len(a))]
        else:
            room = self.max_seq_length - self.pair.num_special
            keep_a, keep_b = longest_first(len(a), len(b), room)
            cut = len(a) + len(b) - keep_a - keep_b
            ids, types, first_at, second_at = self.pair.build(a[:keep_a], b[:keep_b])
            sides = [(first_at, keep_a), (second_at, keep_b)]
        if cut:
            self.stats["truncated_inputs"] += 1
            self.stats["truncated_subwords"] += cut
        return np.asarray(ids, dtype=np.int64), np.asarray(types, dtype=np.int64), sides


def longest_first(length_a: int, length_b: int, room: int) -> Tuple[int, int]:
    """How many subwords of each side to keep so that both fit in `room`, as the `tokenizers` library's
    `longest_first` truncation (transformers' `truncation=True`) cuts: the shorter side stays whole if the longer one
    can fill the rest; otherwise both get half the room, the longer side (the second on a tie) the odd one."""
    if length_a + length_b <= room:
        return length_a, length_b
    swap = length_a > length_b
    short, long = (length_b, length_a) if swap else (length_a, length_b)
    keep_short, keep_long = short, (short if short > room else max(short, room - short))
    if keep_short + keep_long > room:
        keep_short = room // 2
        keep_long = keep_short + room % 2
    keep_short, keep_long = min(keep_short, short), min(keep_long, long)
    return (keep_long, keep_short) if swap else (keep_short, keep_long)
