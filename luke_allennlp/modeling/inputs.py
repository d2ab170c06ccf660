"""
The encoder's inputs as one typed value, `LukeInputs`, and as the task readers give them, `LukeFields` (entities over
spans of subwords), each field with its padding declared once, here: the readers pad a batch with `FIELD_PADDING`
(`luke_allennlp.data.inputs.tensor_fields`), `StaticShapes` pads to its buckets with `PADDING`. A task model builds
`LukeInputs` from the readers' fields in one place (`LukeFields.luke_inputs`) and hands them whole to the encoder.

Both are `NamedTuple`s: torch.compile takes them as inputs, and a function of them reads fields by name.
"""

from typing import Any, Mapping, NamedTuple, Optional, Sequence, Tuple, Union

import torch

# How a tensor is padded: along the words (dimension 1), along the entities (dimension 1), the entities' mention
# positions (batch, entities, mention length: entities and mention length), or only along the batch; or along
# dimension 1 to the padded words, a tensor of at most one element per word position (e.g. one per word of a
# sentence: `WORD_SLOTS`).
WORDS, ENTITIES, MENTIONS, ROWS, WORD_SLOTS = "words", "entities", "mentions", "rows", "word_slots"
PAD_TOKEN = "pad_token"  # the padding value of word ids: the tokenizer's (the config's `pad_token_id`)

# Each row's real words and, with entity inputs, real entities (prefixes of the padded rows), known on the host.
Lengths = Tuple[Sequence[int], Optional[Sequence[int]]]


class Padding(NamedTuple):
    kind: str  # WORDS, ENTITIES, MENTIONS, ROWS or WORD_SLOTS
    value: Union[int, bool, str]  # PAD_TOKEN: the tokenizer's padding id


class LukeInputs(NamedTuple):
    """
    The inputs of `LukeEncoder`, named as transformers' `LukeModel` names them. Without `entity_ids` the encoder is a
    word encoder; the other optional fields default as `complete` fills them.
    """

    input_ids: torch.Tensor  # (batch, words)
    attention_mask: Optional[torch.Tensor] = None  # (batch, words): 1 for real tokens, 0 for padding
    token_type_ids: Optional[torch.Tensor] = None  # (batch, words)
    entity_ids: Optional[torch.Tensor] = None  # (batch, entities)
    entity_position_ids: Optional[torch.Tensor] = None  # (batch, entities, mention length): word positions, -1 padded
    entity_attention_mask: Optional[torch.Tensor] = None  # (batch, entities)
    entity_token_type_ids: Optional[torch.Tensor] = None  # (batch, entities)

    def complete(self) -> "LukeInputs":
        """The inputs with their defaults filled in: every word and entity attended, token types 0."""
        filled = {}
        if self.attention_mask is None:
            filled["attention_mask"] = torch.ones_like(self.input_ids)
        if self.token_type_ids is None:
            filled["token_type_ids"] = torch.zeros_like(self.input_ids)
        if self.entity_ids is not None:
            if self.entity_position_ids is None:
                raise ValueError("entity_position_ids is required when entity_ids is given")
            if self.entity_attention_mask is None:
                filled["entity_attention_mask"] = torch.ones_like(self.entity_ids)
            if self.entity_token_type_ids is None:
                filled["entity_token_type_ids"] = torch.zeros_like(self.entity_ids)
        return self._replace(**filled)

    def sizes(self) -> Tuple[int, int, Optional[int]]:
        """(batch, words, entities or None)."""
        batch, words = self.input_ids.shape[:2]
        return batch, words, None if self.entity_ids is None else self.entity_ids.size(1)


# How `StaticShapes` pads each input to its buckets (padding that the encoder masks out).
PADDING = LukeInputs(
    input_ids=Padding(WORDS, PAD_TOKEN),  # type: ignore[arg-type]
    attention_mask=Padding(WORDS, 0),  # type: ignore[arg-type]
    token_type_ids=Padding(WORDS, 0),  # type: ignore[arg-type]
    entity_ids=Padding(ENTITIES, 0),  # type: ignore[arg-type]
    entity_position_ids=Padding(MENTIONS, -1),  # type: ignore[arg-type]
    entity_attention_mask=Padding(ENTITIES, 0),  # type: ignore[arg-type]
    entity_token_type_ids=Padding(ENTITIES, 0),  # type: ignore[arg-type]
)


def span_position_ids(
    starts: torch.Tensor, ends: torch.Tensor, longest: Optional[int] = None, max_length: Optional[int] = None
) -> torch.Tensor:
    """`entity_position_ids` of contiguous mentions from their first and last positions (inclusive):
    (...) -> (..., longest mention), padded with -1. `longest`: the longest mention's length where the caller knows
    it on the host (at least that; else it is read from the device, which makes the host wait for it). A mention
    longer than `max_length` keeps its first `max_length` positions (as `LukeTokenizer`'s `max_mention_length`)."""
    if longest is None:
        longest = int((ends - starts).max()) + 1 if starts.numel() else 1
    if max_length is not None:
        longest = min(longest, max_length)
    positions = starts[..., None] + torch.arange(longest, device=starts.device)
    return positions.masked_fill(positions > ends[..., None], -1)


class LukeFields(NamedTuple):
    """
    The encoder's inputs as the task readers give them, fields of these names: an entity's mention as the input
    positions of its first and last subword (inclusive) instead of position ids. Rows may be stacked (windows or
    chunks of an instance: `(batch, windows, words)`, `(batch, chunks, entities)`).
    """

    word_ids: torch.Tensor  # (..., words)
    word_attention_mask: torch.Tensor  # (..., words)
    word_type_ids: Optional[torch.Tensor] = None  # (..., words)
    entity_ids: Optional[torch.Tensor] = None  # (..., entities)
    entity_start_positions: Optional[torch.Tensor] = None  # (..., entities)
    entity_end_positions: Optional[torch.Tensor] = None  # (..., entities)
    entity_attention_mask: Optional[torch.Tensor] = None  # (..., entities)
    entity_type_ids: Optional[torch.Tensor] = None  # (..., entities)

    @classmethod
    def of(cls, arguments: Mapping[str, Any]) -> "LukeFields":
        """The fields among a task model's `forward` arguments (`LukeFields.of(locals())`: allennlp passes a batch's
        fields by name); those it does not take are None."""
        return cls(**{name: arguments.get(name) for name in cls._fields})

    def words_only(self) -> "LukeFields":
        return LukeFields(self.word_ids, self.word_attention_mask, self.word_type_ids)

    def select(self, rows: Optional[Tuple[torch.Tensor, ...]]) -> "LukeFields":
        """The stacked rows that `rows` index (each tensor by as many of the indices as it has stacked dimensions);
        all of them for `None`."""
        if rows is None:
            return self
        return LukeFields(*(None if t is None else t[rows[: t.dim() - 1]] for t in self))

    def luke_inputs(self, longest_mention: Optional[int] = None, position_cap: Optional[int] = None) -> LukeInputs:
        """The encoder's inputs of (rows, words) fields: each entity's positions the first `position_cap` (subwords) of
        its mention's; `longest_mention`: see `span_position_ids`."""
        positions = None
        if self.entity_ids is not None:
            if self.entity_start_positions is None or self.entity_end_positions is None:
                raise ValueError("entity_start_positions and entity_end_positions are required with entity_ids")
            positions = span_position_ids(
                self.entity_start_positions, self.entity_end_positions, longest_mention, position_cap
            )
        return LukeInputs(
            input_ids=self.word_ids,
            attention_mask=self.word_attention_mask,
            token_type_ids=self.word_type_ids,
            entity_ids=self.entity_ids,
            entity_position_ids=positions,
            entity_attention_mask=self.entity_attention_mask,
            entity_token_type_ids=self.entity_type_ids,
        )


# How the readers' fields pad a batch (allennlp pads with it; PAD_TOKEN: the tokenizer's padding id).
FIELD_PADDING = LukeFields(
    word_ids=PAD_TOKEN,  # type: ignore[arg-type]
    word_attention_mask=False,  # type: ignore[arg-type]
    word_type_ids=0,  # type: ignore[arg-type]
    entity_ids=0,  # type: ignore[arg-type]
    entity_start_positions=0,  # type: ignore[arg-type]
    entity_end_positions=0,  # type: ignore[arg-type]
    entity_attention_mask=False,  # type: ignore[arg-type]
    entity_type_ids=0,  # type: ignore[arg-type]
)


def padding_value(padding: Any, pad_token_id: int) -> Any:
    """A declared padding value, `PAD_TOKEN` as `pad_token_id`."""
    return pad_token_id if isinstance(padding, str) and padding == PAD_TOKEN else padding
