"""
Inputs of the sentence-level tasks (GLUE/JGLUE style): JSON-lines files read record by record with errors that name
the file and line, and one sentence or a sentence pair in the tokenizer's own format (`<s> a </s></s> b </s>` for
RoBERTa/LUKE/mLUKE, `[CLS] a [SEP] b [SEP]` for BERT), cut to `max_seq_length` as transformers' `truncation=True`
(longest first) does, with every cut counted.
"""

import logging
from collections import Counter
from typing import Any, Dict, Iterator, List, Optional, Tuple

import numpy as np
from allennlp.common.file_utils import cached_path
from allennlp.data import DatasetReader, Instance
from transformers import PreTrainedTokenizerFast

from luke_allennlp.data.files import SeenIds, nonempty, parse_json, read_text, require, split_lines
from luke_allennlp.data.tokenization import load_fast_tokenizer
from luke_allennlp.data.windows import PairLayout
from luke_allennlp_compat import special_tokens_template

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

    def __call__(self, record: Dict[str, Any], where: str, number: int) -> str:
        if self.id_field is None:
            return where
        value = require(record, self.id_field, None, where)
        if not isinstance(value, (str, int)) or isinstance(value, bool):
            raise ValueError(f"{where}: the id field {self.id_field!r} should be a string or an integer, not {value!r}")
        example_id = str(value)
        self.seen.check(example_id, f"{where}: example {example_id}", f"line {number}")
        return example_id


def require_text(record: Dict[str, Any], field: str, where: str) -> str:
    """A non-empty string field."""
    text = require(record, field, str, where)
    if not text.strip():
        raise ValueError(f"{where}: field {field!r} is empty")
    return text


class JsonLinesTaskReader(DatasetReader):
    """
    A reader of JSON-lines task files whose examples are sentences (`SentenceEncoder`): a subclass turns each record
    into an example (`example(record, where, has_label)`, the rest of `text_to_instance`'s arguments), and reading
    a file shards the examples, counts what is cut, logs it, and refuses a file without examples. A file whose lines
    have no label field at all (a test split) gives unlabelled instances; a label missing on some lines only is an
    error naming the line.

    # Parameters

    model_name : `str`
        The checkpoint whose fast tokenizer to use.
    max_seq_length : `int`
        Subwords per input, special tokens included.
    label_field : `str`
    id_field : `str`, optional
        The field holding the example id; `None`: `file:line`.
    """

    def __init__(
        self, model_name: str, max_seq_length: int, label_field: str, id_field: Optional[str], **kwargs
    ) -> None:
        super().__init__(manual_distributed_sharding=True, manual_multiprocess_sharding=True, **kwargs)
        self.tokenizer = load_fast_tokenizer(model_name)
        self.encoder = SentenceEncoder(self.tokenizer, max_seq_length)
        self.label_field = label_field
        self.id_field = id_field

    @property
    def stats(self) -> Counter:
        """What the last read encoded (one input per sentence or pair) and cut (`SentenceEncoder.stats`)."""
        return self.encoder.stats

    def example(self, record: Dict[str, Any], where: str, has_label: bool) -> Tuple:
        raise NotImplementedError

    def read_examples(self, path: str, name: Optional[str] = None) -> Iterator[Tuple]:
        """(id, *example) for each line."""
        name = name or path
        ids = ExampleIds(self.id_field)
        labelled: Optional[bool] = None
        for number, where, record in json_lines(path, name):
            has_label = self.label_field in record
            if labelled is None:
                labelled = has_label
            elif has_label != labelled:
                state = "has no" if labelled else "has a"
                raise ValueError(f"{where}: {state} {self.label_field!r} field, unlike the lines before it")
            yield (ids(record, where, number), *self.example(record, where, has_label))

    def _read(self, file_path: str) -> Iterator[Instance]:
        self.encoder.reset_stats()
        examples = nonempty(self.read_examples(cached_path(file_path), file_path), file_path)
        for example_id, *example in self.shard_iterable(examples):
            yield self.text_to_instance(*example, example_id=example_id)
        self.encoder.log_stats(file_path)


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
            logger.warning("%s: %d inputs; %d cut to max_seq_length %d (%d subwords dropped)", name,
                           self.stats["inputs"], self.stats["truncated_inputs"], self.max_seq_length,
                           self.stats["truncated_subwords"])  # fmt: skip
        else:
            logger.info("%s: %d inputs, none cut", name, self.stats["inputs"])

    def subwords(self, text: str) -> List[int]:
        return list(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    def encode(self, first: str, second: Optional[str] = None) -> Tuple[np.ndarray, np.ndarray]:
        """(input ids, token type ids), each (words,)."""
        a = self.subwords(first)
        b = self.subwords(second) if second is not None else None
        self.stats["inputs"] += 1
        if b is None:
            prefix, suffix, prefix_types, text_type, suffix_types = self.single
            room = self.max_seq_length - len(prefix) - len(suffix)
            cut = max(0, len(a) - room)
            a = a[: len(a) - cut]
            ids = [*prefix, *a, *suffix]
            types = [*prefix_types, *[text_type] * len(a), *suffix_types]
        else:
            room = self.max_seq_length - self.pair.num_special
            keep_a, keep_b = longest_first(len(a), len(b), room)
            cut = len(a) + len(b) - keep_a - keep_b
            ids, types, _, _ = self.pair.build(a[:keep_a], b[:keep_b])
        if cut:
            self.stats["truncated_inputs"] += 1
            self.stats["truncated_subwords"] += cut
        return np.asarray(ids, dtype=np.int64), np.asarray(types, dtype=np.int64)


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
