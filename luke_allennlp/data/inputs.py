"""
The input builder of the task readers: what lies between "the file parsed into examples" and the tensors a
task model reads.

- `tokenize` / `tokenize_words` / `tokenize_joined_words`: a text with each subword's character offsets, or
  pre-split words with each word's subwords (each word as after a space, or, for scripts without spaces, as the
  running text they form), from the checkpoint's fast tokenizer;
- `TokenizedText.char_span_to_subwords`: a character span to its first and last subword;
- `centred_window`: which part of a long input to keep so that its mentions stay, centred in what fits;
- `MentionInputs`: one sequence with the tokenizer's special tokens and entities over its mentions, cut to
  `max_seq_length` with every cut counted (`stats`);
- `stack`: windows or chunks of different lengths as one padded array;
- `tensor_fields`: the arrays as the fields the task models read, each padded with its own value;
- `InputCounts`: what a reader counted of an instance's encoder inputs, for the model to size its passes by.

Reading comprehension builds its question/passage pairs from these (`luke_allennlp.data.windows`).
"""

import logging
from collections import Counter
from dataclasses import dataclass
from typing import Any, Dict, List, NamedTuple, Optional, Sequence, Tuple, Union

import numpy as np
import torch
from allennlp.data.fields import Field, TensorField
from transformers import PreTrainedTokenizerFast

from luke_allennlp.modeling.inputs import FIELD_PADDING, padding_value
from luke_allennlp.modeling.inputs import PADDING as ENCODER_PADDING
from luke_allennlp.resources.tokenization import special_token_layout

logger = logging.getLogger(__name__)

# The padding of the task heads' fields (allennlp pads a batch with it); the encoder's fields pad as
# `luke_allennlp.modeling.inputs.FIELD_PADDING` declares (and `entity_position_ids`, which the entity disambiguation
# and pretraining readers give instead of first and last positions, as the encoder's input of that name), other
# fields with 0.
HEAD_PADDING = {
    "passage_subwords": -1,
    "max_context": False,
    "entity_candidates": -1,
    "start_positions": -1,
    "end_positions": -1,
    "labels": -1,
}
PADDING = {
    **FIELD_PADDING._asdict(),
    "entity_position_ids": ENCODER_PADDING.entity_position_ids.value,
    **HEAD_PADDING,
}


COUNTS = "input_counts"  # the metadata key of an instance's `InputCounts`


class InputCounts(NamedTuple):
    """
    What a task reader counted of an instance's encoder inputs on the host, in its metadata under `COUNTS`: the task
    model sizes its encoder passes and its entities' position ids by them without reading the device. (A NamedTuple:
    allennlp's trainer copies metadata to the device through tuples.)
    """

    # The rows the model encodes: windows (SQuAD), windows holding a mention (ReCoRD), chunks of spans (NER).
    passes: int
    longest_mention: int  # subwords of the longest entity mention (1 without entities)
    subwords: Optional[int] = None  # each row's real subwords, where every row is the same sentence (NER)

    @staticmethod
    def of(metadata: Sequence[Dict[str, Any]]) -> List["InputCounts"]:
        """The counts of a batch's instances."""
        return [meta[COUNTS] for meta in metadata]


@dataclass
class TokenizedText:
    text: str
    ids: List[int]
    offsets: np.ndarray  # (subwords, 2) character start, end (exclusive) of each subword in `text`

    def char_span_to_subwords(self, start: int, end: int) -> Optional[Tuple[int, int]]:
        """First and last (inclusive) subword overlapping characters [start, end), or None if none does."""
        inside = np.nonzero((self.offsets[:, 0] < end) & (self.offsets[:, 1] > start))[0]
        return (int(inside[0]), int(inside[-1])) if len(inside) else None


# The readers tokenise whole texts (a CoNLL document, a SQuAD passage) and cut them into windows of `max_seq_length`
# themselves, counting what they truncate or split: `verbose=False` quiets transformers' "Token indices sequence
# length is longer than the specified maximum sequence length (N > 512)", which is about the whole text, not about
# any input the model will see.


def tokenize(tokenizer: PreTrainedTokenizerFast, text: str) -> TokenizedText:
    encoding = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True, verbose=False)
    offsets = np.array(encoding["offset_mapping"], dtype=np.int64).reshape(-1, 2)
    return TokenizedText(text, list(encoding["input_ids"]), offsets)


@dataclass
class TokenizedWords:
    """Pre-split words tokenised in one call: word `i` is subwords `ids[starts[i]:ends[i]]`."""

    ids: np.ndarray  # (subwords,)
    starts: np.ndarray  # (words,)
    ends: np.ndarray  # (words,)


def tokenize_words(tokenizer: PreTrainedTokenizerFast, words: Sequence[str]) -> TokenizedWords:
    """Each word tokenised as after a space (see `load_fast_tokenizer`). A word that gives no subword (e.g. only
    control characters) becomes the unknown token, so that every word keeps a position."""
    words = list(words)
    encoding = tokenizer(words, is_split_into_words=True, add_special_tokens=False, verbose=False)
    word_index = np.array([-1 if w is None else w for w in encoding.word_ids()], dtype=np.int64)
    counts = np.bincount(word_index, minlength=len(words))
    if (counts == 0).any():
        words = [w if c else tokenizer.unk_token for w, c in zip(words, counts)]
        encoding = tokenizer(words, is_split_into_words=True, add_special_tokens=False, verbose=False)
        word_index = np.array(encoding.word_ids(), dtype=np.int64)
        counts = np.bincount(word_index, minlength=len(words))
    ends = np.cumsum(counts)
    return TokenizedWords(np.array(encoding["input_ids"], dtype=np.int64), ends - counts, ends)


def tokenize_joined_words(tokenizer: PreTrainedTokenizerFast, words: Sequence[str]) -> Tuple[TokenizedWords, int]:
    """
    Pre-split words of a script written without spaces (Japanese, Chinese) tokenised as the running text they form,
    as a model pretrained on such text saw them: word `i` takes the subwords that cover its characters, so a subword
    across a word boundary (`二人の男性が` over `二人`, `の`, `男性`, `が`) belongs to each word it covers. Returns
    the words' subwords and how many word boundaries fall inside a subword.
    """
    lengths = np.array([len(w) for w in words], dtype=np.int64)
    char_ends = np.cumsum(lengths)
    char_starts = char_ends - lengths
    tokens = tokenize(tokenizer, "".join(words))
    piece_starts, piece_ends = tokens.offsets[:, 0], tokens.offsets[:, 1]
    # First subword ending after the word's start; one past the last subword starting before its end.
    starts = np.searchsorted(piece_ends, char_starts, side="right")
    ends = np.searchsorted(piece_starts, char_ends, side="left")
    ends = np.maximum(ends, np.minimum(starts + 1, len(tokens.ids)))  # a word without subword keeps one position
    starts = np.minimum(starts, ends - 1)
    # A boundary is inside a subword when the last subword starting before it ends after it.
    boundaries = char_ends[:-1]
    before = np.searchsorted(piece_starts, boundaries, side="left") - 1
    inside = int(np.sum((before >= 0) & (piece_ends[np.maximum(before, 0)] > boundaries)))
    return TokenizedWords(np.array(tokens.ids, dtype=np.int64), starts, ends), inside


def centred_window(first: int, last: int, length: int, room: int) -> int:
    """
    Where to start `room` consecutive positions of a sequence of `length` so that they hold positions
    first..last (inclusive) with the rest of the room split evenly on both sides, as far as the sequence's ends
    allow; 0 when the whole sequence fits. first..last must fit in the room.
    """
    if last - first + 1 > room:
        raise ValueError(f"positions {first}..{last} do not fit in {room}")
    return max(0, min(first - (room - (last - first + 1)) // 2, length - room))


def stack(rows: Sequence[Sequence], pad: Union[int, bool], dtype=np.int64, width: Optional[int] = None) -> np.ndarray:
    """Rows of different lengths (windows, chunks) as one (rows, width) array, right-padded with `pad`;
    `width` defaults to the longest row."""
    width = max((len(r) for r in rows), default=0) if width is None else width
    out = np.full((len(rows), width), pad, dtype=dtype)
    for i, row in enumerate(rows):
        out[i, : len(row)] = row
    return out


def tensor_fields(pad_id: int, **arrays: Union[np.ndarray, torch.Tensor]) -> Dict[str, Field]:
    """The arrays as `TensorField`s, each padded with its field's value (`word_ids` with `pad_id`)."""
    fields: Dict[str, Field] = {}
    for name, array in arrays.items():
        tensor = torch.from_numpy(np.ascontiguousarray(array)) if isinstance(array, np.ndarray) else array
        fields[name] = TensorField(tensor, padding_value=padding_value(PADDING.get(name, 0), pad_id))
    return fields


def insert_markers(
    tokens: TokenizedText, subwords: Sequence[Tuple[int, int]], markers: Sequence[int], example_id: str
) -> Tuple[TokenizedText, List[Tuple[int, int]]]:
    """`tokens` with `markers[i]` before and after mention i's subwords (first, last); the mentions' new
    (first, last) cover their markers. Inserted markers get the empty character span of where they stand."""
    order = sorted(range(len(subwords)), key=lambda i: subwords[i][0])
    for a, b in zip(order, order[1:]):
        if subwords[b][0] <= subwords[a][1]:
            raise ValueError(f"{example_id}: entity markers need mentions that do not overlap")
    ids, offsets = list(tokens.ids), [tuple(o) for o in tokens.offsets.tolist()]
    placed: List[Tuple[int, int]] = [(0, 0)] * len(subwords)
    for i in reversed(order):  # from the end, so that earlier positions stay valid
        first, last = subwords[i]
        ids[last + 1 : last + 1] = [markers[i]]
        offsets[last + 1 : last + 1] = [(offsets[last][1],) * 2]
        ids[first:first] = [markers[i]]
        offsets[first:first] = [(offsets[first][0],) * 2]
    shift = 0
    for i in order:
        first, last = subwords[i]
        placed[i] = (first + shift, last + shift + 2)
        shift += 2
    return TokenizedText(tokens.text, ids, np.array(offsets, dtype=np.int64).reshape(-1, 2)), placed


class UnusableExample(ValueError):
    """
    An example that cannot become an instance: a mention without text (`reason` "empty_mentions") or mentions
    too far apart for one input ("mentions_too_far_apart"). Reading a file, a reader counts and skips it
    (`MentionInputs.skip`); `text_to_instance` alone raises it.
    """

    def __init__(self, message: str, reason: str) -> None:
        super().__init__(message)
        self.reason = reason


class MentionInputs:
    """
    One sequence of subwords with the tokenizer's special tokens around it, and entities over mentions in it:
    the inputs of relation classification and entity typing, and of any task that marks mentions in a text.

    A text longer than `max_seq_length` keeps the window that holds all its mentions, centred on them; a
    mention longer than that window keeps its first subwords. Both are counted in `stats`
    (`truncated_inputs`, `truncated_mentions`), with `inputs` and the mention boundaries that fall inside a subword
    (`mention_boundaries_inside_subwords`, see `mention_subwords`), and the mentions longer than `position_cap`
    subwords, whose entity the model gives the positions of their first ones (`mention_positions_capped`).

    # Parameters

    tokenizer : `PreTrainedTokenizerFast`
    max_seq_length : `int`
        Subwords per input, special tokens included.
    position_cap : `int`, optional (default = `None`)
        The most subwords whose positions an entity averages: the `luke` embedder's `max_mention_length` (the
        checkpoint's); mentions longer than that are counted.
    """

    STATS = (
        "inputs",
        "truncated_inputs",
        "truncated_mentions",
        "skipped_empty_mentions",
        "skipped_mentions_too_far_apart",
        "mention_boundaries_inside_subwords",
        "mention_positions_capped",
    )

    def __init__(
        self, tokenizer: PreTrainedTokenizerFast, max_seq_length: int, position_cap: Optional[int] = None
    ) -> None:
        self.tokenizer = tokenizer
        self.position_cap = position_cap
        prefix, suffix = special_token_layout(tokenizer)
        self.prefix, self.suffix = np.array(prefix, dtype=np.int64), np.array(suffix, dtype=np.int64)
        self.room = max_seq_length - len(prefix) - len(suffix)  # subwords for text
        if self.room < 1:
            raise ValueError(f"max_seq_length {max_seq_length} leaves no room for text after the special tokens")
        self.pad_id = tokenizer.pad_token_id
        self.stats: Counter = Counter(dict.fromkeys(self.STATS, 0))

    def reset_stats(self) -> None:
        self.stats = Counter(dict.fromkeys(self.STATS, 0))

    def skip(self, error: UnusableExample) -> None:
        """Counts an example skipped while reading a file (`skipped_<reason>`); the first few are logged."""
        key = f"skipped_{error.reason}"
        self.stats[key] += 1
        if self.stats[key] <= 5:
            logger.warning("%s: skipped", error)

    def log_stats(self, name: str) -> None:
        """Logs what was read, cut and skipped (a warning if anything was)."""
        lost = {k: v for k, v in self.stats.items() if k != "inputs" and v}
        if lost:
            logger.warning("%s: %d inputs; %s (see the reader's stats)", name, self.stats["inputs"], lost)
        else:
            logger.info("%s: %d inputs, none cut or skipped", name, self.stats["inputs"])

    def with_special_tokens(self, ids: np.ndarray) -> np.ndarray:
        """(len(prefix) + subwords + len(suffix),): the tokenizer's special tokens around `ids`."""
        return np.concatenate([self.prefix, np.asarray(ids, dtype=np.int64), self.suffix])

    def window(self, length: int, first: int, last: int) -> Tuple[int, int]:
        """[begin, end) of the subwords of a sequence of `length` to keep: everything if it fits, else the window
        centred on first..last (inclusive), which must fit (counted in `truncated_inputs`)."""
        begin = centred_window(first, last, length, self.room)
        end = min(length, begin + self.room)
        self.stats["truncated_inputs"] += end - begin < length
        return begin, end

    @staticmethod
    def check_spans(text: str, spans: Sequence[Tuple[int, int]], names: Sequence[str], example_id: str) -> None:
        """Each character span (end exclusive) must lie in `text`; an empty one raises `UnusableExample`."""
        for name, (start, end) in zip(names, spans):
            if start == end and 0 <= start <= len(text):
                raise UnusableExample(f"{example_id}: the {name} mention is empty", "empty_mentions")
            if not 0 <= start < end <= len(text):
                raise ValueError(
                    f"{example_id}: {name} span [{start}, {end}] is out of range for a text of {len(text)} characters"
                )

    def mention_subwords(
        self, tokens: TokenizedText, spans: Sequence[Tuple[int, int]], names: Sequence[str], example_id: str
    ) -> List[Tuple[int, int]]:
        """First and last subword of each character span (end exclusive): the subwords that cover its characters. A
        subword that straddles a mention boundary (text without spaces between words, as Japanese: the span "シマウマ"
        in the piece "頭のシマウマが") is kept whole, and counted in `mention_boundaries_inside_subwords`. A span out
        of range raises an error, a span that covers no subword (an empty mention) raises `UnusableExample`."""
        self.check_spans(tokens.text, spans, names, example_id)
        subwords = []
        for name, (start, end) in zip(names, spans):
            found = tokens.char_span_to_subwords(start, end)
            if found is None:
                message = f"{example_id}: the {name} span [{start}, {end}] covers no subword of {tokens.text!r}"
                raise UnusableExample(message, "empty_mentions")
            if tokens.offsets[found[0], 0] < start or tokens.offsets[found[1], 1] > end:
                self.stats["mention_boundaries_inside_subwords"] += 1
            subwords.append(found)
        return subwords

    def encode(
        self,
        text: str,
        spans: Sequence[Tuple[int, int]],
        entity_ids: Sequence[int],
        example_id: str,
        names: Sequence[str] = ("mention",),
        markers: Optional[Sequence[int]] = None,
    ) -> Dict[str, Field]:
        """
        `word_ids`, `word_attention_mask` (words,) and `entity_ids`, `entity_start_positions`,
        `entity_end_positions` (mentions,): an entity over each character span (end exclusive) of `text`.
        Mentions that together do not fit in one input raise `UnusableExample`. `markers` (a token id per
        mention) are put before the first and after the last subword of each mention, and the entity covers
        them, as transformers' `LukeTokenizer` does for its `task=` modes with `<ent>` / `<ent2>`.
        """
        tokens = tokenize(self.tokenizer, text)
        subwords = self.mention_subwords(tokens, spans, names, example_id)
        if markers is not None:
            tokens, subwords = insert_markers(tokens, subwords, markers, example_id)
        if len(subwords) == 1 and subwords[0][1] - subwords[0][0] + 1 > self.room:
            first, last = subwords[0]
            subwords = [(first, first + self.room - 1)]
            self.stats["truncated_mentions"] += 1
            logger.warning(
                "%s: a mention of %d subwords is cut to its first %d (max_seq_length)",
                example_id,
                last - first + 1,
                self.room,
            )
        low, high = min(s for s, _ in subwords), max(e for _, e in subwords)
        if high - low + 1 > self.room:
            raise UnusableExample(
                f"{example_id}: {' and '.join(names)} are {high - low + 1} subwords apart, more than max_seq_length allows",
                "mentions_too_far_apart",
            )
        if self.position_cap is not None:
            self.stats["mention_positions_capped"] += sum(e - s + 1 > self.position_cap for s, e in subwords)
        self.stats["inputs"] += 1
        begin, end = self.window(len(tokens.ids), low, high)
        shift = len(self.prefix) - begin  # subword position -> input position
        word_ids = self.with_special_tokens(np.asarray(tokens.ids[begin:end], dtype=np.int64))
        return tensor_fields(
            self.pad_id,
            word_ids=word_ids,
            word_attention_mask=np.ones(len(word_ids), dtype=bool),
            entity_ids=np.asarray(entity_ids, dtype=np.int64),
            entity_start_positions=np.array([s + shift for s, _ in subwords], dtype=np.int64),
            entity_end_positions=np.array([e + shift for _, e in subwords], dtype=np.int64),
        )
