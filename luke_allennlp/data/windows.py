"""
Question + passage inputs for reading comprehension (SQuAD, ReCoRD): the tokenizer's own pair format
(`<s> q </s></s> p </s>` for RoBERTa, `[CLS] q [SEP] p [SEP]` for BERT, `p <sep> q <sep> <cls>` for XLNet)
and sliding windows over passages too long for one input, as BERT's `doc_stride` does.

The passage is tokenised once; each window is a range of its subwords, so a character offset maps to the
same subword in every window that holds it. The windows of one question are stacked (`stack_windows`,
`stack_window_entities`), and the model encodes each (see `luke_allennlp.models.luke_task_model`).
"""

import logging
from dataclasses import dataclass
from typing import List, Optional, Sequence, Tuple

import numpy as np
from transformers import PreTrainedTokenizerFast

from luke_allennlp.data.inputs import TokenizedText, stack, tokenize
from luke_allennlp.resources.tokenization import special_tokens_template

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class PairLayout:
    """Where a tokenizer puts its special tokens around a pair of sequences, and the token type ids it uses."""

    prefix: Tuple[int, ...]
    middle: Tuple[int, ...]
    suffix: Tuple[int, ...]
    types: Tuple[Tuple[int, ...], int, Tuple[int, ...], int, Tuple[int, ...]]  # prefix, first, middle, second, suffix

    @classmethod
    def of(cls, tokenizer: PreTrainedTokenizerFast) -> "PairLayout":
        ids, types = special_tokens_template(tokenizer, pair=True)
        a, b = ids.index(-1), ids.index(-2)
        layout = (tuple(types[:a]), types[a], tuple(types[a + 1 : b]), types[b], tuple(types[b + 1 :]))
        return cls(tuple(ids[:a]), tuple(ids[a + 1 : b]), tuple(ids[b + 1 :]), layout)

    @property
    def num_special(self) -> int:
        return len(self.prefix) + len(self.middle) + len(self.suffix)

    def build(self, first: Sequence[int], second: Sequence[int]) -> Tuple[List[int], List[int], int, int]:
        """(input ids, token type ids, position of `first`'s first subword, position of `second`'s first subword)."""
        prefix_types, first_type, middle_types, second_type, suffix_types = self.types
        ids = [*self.prefix, *first, *self.middle, *second, *self.suffix]
        types = [*prefix_types, *[first_type] * len(first), *middle_types, *[second_type] * len(second), *suffix_types]
        first_at = len(self.prefix)
        return ids, types, first_at, first_at + len(first) + len(self.middle)


@dataclass
class Window:
    """One encoder input: the question and the passage subwords [passage_begin, passage_end)."""

    input_ids: List[int]
    token_type_ids: List[int]
    question_start: int  # input position of the question's first subword
    passage_start: int  # input position of subword `passage_begin`
    passage_begin: int
    passage_end: int

    def contains(self, first: int, last: int) -> bool:
        """Whether passage subwords first..last (inclusive) are all in this window."""
        return self.passage_begin <= first and last < self.passage_end

    def position(self, subword: int) -> int:
        """The input position of passage subword `subword` (which must be in the window)."""
        return self.passage_start + subword - self.passage_begin


@dataclass
class EncodedPair:
    question: TokenizedText
    passage: TokenizedText
    windows: List[Window]
    question_truncated: int  # subwords cut from the end of a question longer than `max_question_length`


def window_starts(length: int, room: int, stride: int) -> List[int]:
    """Starts of windows of `room` subwords over `length`, each `stride` after the last, until one reaches the end."""
    starts = [0]
    while starts[-1] + room < length:
        starts.append(starts[-1] + stride)
    return starts


class QuestionPassageEncoder:
    """
    Encodes a question with a passage as one or more windows in the tokenizer's pair format.

    # Parameters

    tokenizer : `PreTrainedTokenizerFast`
    max_seq_length : `int`, optional (default = `512`)
        Subwords per input, special tokens included.
    doc_stride : `int`, optional (default = `128`)
        Subwords between the starts of consecutive windows over a long passage.
    max_question_length : `int`, optional (default = `64`)
        Longer questions are cut to this many subwords (reported in `EncodedPair.question_truncated`). It is
        capped, with a warning, at half of what `max_seq_length` leaves after the special tokens, so that
        short inputs keep room for the passage.
    question_first : `bool`, optional (default = `None`)
        Whether the question comes first. `None` follows the tokenizer, as transformers' SQuAD code does:
        question first, except for left-padding tokenizers (XLNet), whose pretraining put the passage first.
    """

    def __init__(
        self,
        tokenizer: PreTrainedTokenizerFast,
        max_seq_length: int = 512,
        doc_stride: int = 128,
        max_question_length: int = 64,
        question_first: Optional[bool] = None,
    ) -> None:
        self.tokenizer = tokenizer
        self.layout = PairLayout.of(tokenizer)
        self.max_seq_length = max_seq_length
        self.doc_stride = doc_stride
        room = max_seq_length - self.layout.num_special
        if room < 2:
            raise ValueError(
                f"max_seq_length {max_seq_length} leaves no room for text after {self.layout.num_special} special tokens"
            )
        if max_question_length > room // 2:
            logger.warning(
                "max_question_length %d capped to %d, half of what max_seq_length %d leaves for text",
                max_question_length,
                room // 2,
                max_seq_length,
            )
        self.max_question_length = min(max_question_length, room // 2)
        self.question_first = tokenizer.padding_side != "left" if question_first is None else question_first
        if doc_stride < 1:
            raise ValueError(f"doc_stride must be positive, not {doc_stride}")

    def encode(
        self,
        question: str,
        passage: str,
        passage_tokens: Optional[TokenizedText] = None,
        question_tokens: Optional[TokenizedText] = None,
    ) -> EncodedPair:
        """`passage_tokens` / `question_tokens`: the texts already tokenised (by `tokenize`), e.g. to share a
        passage's subwords between its questions."""
        for given, text in ((passage_tokens, passage), (question_tokens, question)):
            if given is not None and given.text != text:
                raise ValueError(f"the tokens given for {text[:40]!r} are the tokenisation of another text")
        q = question_tokens if question_tokens is not None else tokenize(self.tokenizer, question)
        cut = max(0, len(q.ids) - self.max_question_length)
        if cut:
            q = TokenizedText(question, q.ids[: self.max_question_length], q.offsets[: self.max_question_length])
        p = passage_tokens if passage_tokens is not None else tokenize(self.tokenizer, passage)
        room = self.max_seq_length - self.layout.num_special - len(q.ids)
        windows = []
        for begin in window_starts(len(p.ids), room, min(self.doc_stride, room)):
            end = min(begin + room, len(p.ids))
            piece = p.ids[begin:end]
            if self.question_first:
                ids, types, question_start, passage_start = self.layout.build(q.ids, piece)
            else:
                ids, types, passage_start, question_start = self.layout.build(piece, q.ids)
            windows.append(Window(ids, types, question_start, passage_start, begin, end))
        return EncodedPair(q, p, windows, cut)


def max_context_windows(windows: Sequence[Window], num_subwords: int) -> np.ndarray:
    """
    For each passage subword, the index of the window in which it has the most context (BERT's
    `_check_is_max_context`): score min(subwords left of it, subwords right of it) + 0.01 x window length, the
    first window winning ties. Decoding starts an answer only in that window, so overlapping windows do not
    propose the same start twice with less context.
    """
    best = np.full(num_subwords, -1, dtype=np.int64)
    best_score = np.full(num_subwords, -np.inf)
    for index, window in enumerate(windows):
        positions = np.arange(window.passage_begin, window.passage_end)
        length = window.passage_end - window.passage_begin
        score = np.minimum(positions - window.passage_begin, window.passage_end - 1 - positions) + 0.01 * length
        better = score > best_score[positions]
        best[positions[better]] = index
        best_score[positions[better]] = score[better]
    return best


def stack_windows(windows: Sequence[Window], pad_id: int) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The windows of one question as right-padded arrays (windows, longest window): input ids (padded with
    `pad_id`), token type ids and attention mask."""
    ids = stack([w.input_ids for w in windows], pad_id)
    types = stack([w.token_type_ids for w in windows], 0)
    mask = stack([[True] * len(w.input_ids) for w in windows], False, dtype=bool)
    return ids, types, mask


def stack_window_entities(
    windows: Sequence[Window], rows: Sequence[Sequence[Tuple[int, ...]]], width: int
) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """
    The entities of each window, `(entity id, first input position, last input position, *more)` tuples, as
    arrays (windows, width): the tuples' columns (windows, width, columns), zero-padded; the mask of real
    entities; and each entity's token type, that of its first subword (the segment it lies in).
    """
    columns = max((len(e) for row in rows for e in row), default=3)
    table = np.zeros((len(windows), width, columns), dtype=np.int64)
    mask = np.zeros((len(windows), width), dtype=bool)
    types = np.zeros((len(windows), width), dtype=np.int64)
    for index, (window, row) in enumerate(zip(windows, rows)):
        if row:
            count = len(row)
            table[index, :count] = np.array(row, dtype=np.int64)
            mask[index, :count] = True
            types[index, :count] = np.asarray(window.token_type_ids)[table[index, :count, 1]]
    return table, mask, types
