"""
LUKE (Yamada et al., EMNLP 2020) in plain PyTorch: words and entities as tokens of one transformer, with
entity-aware self-attention (`attention.py`: one widened `scaled_dot_product_attention` call per layer on GPUs,
score blocks on the CPU). Inside the layers a batch's hidden states are laid out by type, words then entities
(`attention.Shape`), so that each type's rows are one matrix.

Parameter names equal those of `transformers.LukeModel`, so its state dicts load unchanged. Checkpoint
conversion (RoBERTa/BERT initialisation, hub names, `save_pretrained`) lives in `loading.py`.
"""

import logging
import os
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

import torch
import torch.nn.functional as F
from torch import nn

from luke_allennlp.modeling.attention import AttentionMask, LukeSelfAttention, Shape, blocks_apply
from luke_allennlp.modeling.configuration import LukeConfig
from luke_allennlp.modeling.dropout import Dropout, dropout_add
from luke_allennlp.modeling.embedding import Embedding
from luke_allennlp.modeling.inputs import Lengths, LukeInputs
from luke_allennlp.modeling.packed_linear import drop_packed, linear

logger = logging.getLogger(__name__)


def _gelu_tanh(x: torch.Tensor) -> torch.Tensor:
    return F.gelu(x, approximate="tanh")


def _gelu_(x: torch.Tensor) -> torch.Tensor:
    return torch.ops.aten.gelu_(x)


def _gelu_tanh_(x: torch.Tensor) -> torch.Tensor:
    return torch.ops.aten.gelu_(x, approximate="tanh")


def _silu_(x: torch.Tensor) -> torch.Tensor:
    return F.silu(x, inplace=True)


# (named functions, not lambdas: modules holding them pickle)
ACTIVATIONS: Dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
    "gelu": F.gelu,
    "gelu_new": _gelu_tanh,
    "gelu_pytorch_tanh": _gelu_tanh,
    "relu": F.relu,
    "silu": F.silu,
    "swish": F.silu,
}
# The same, written into their input: for a fresh matrix no gradient needs (inference), where a new (rows,
# intermediate) matrix a layer costs page faults and cache misses (`benchmarks/RESULTS.md`).
IN_PLACE_ACTIVATIONS: Dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
    "gelu": _gelu_,
    "gelu_new": _gelu_tanh_,
    "gelu_pytorch_tanh": _gelu_tanh_,
    "relu": torch.relu_,
    "silu": _silu_,
    "swish": _silu_,
}


@dataclass
class LukeEncoderOutput:
    last_hidden_state: torch.Tensor  # (batch, words, hidden)
    entity_last_hidden_state: Optional[torch.Tensor]  # (batch, entities, hidden), None without entities
    pooler_output: Optional[torch.Tensor]  # (batch, hidden), None without a pooler


class LukeEmbeddings(nn.Module):
    """Word + position + token-type embeddings (RoBERTa's, positions counted from `pad_token_id + 1`)."""

    def __init__(self, config: LukeConfig):
        super().__init__()
        self.padding_idx = config.pad_token_id
        # (the large tables: their gradients' memory kept from step to step on the CPU, `modeling.embedding`)
        self.word_embeddings = Embedding(config.vocab_size, config.hidden_size, padding_idx=self.padding_idx)
        self.position_embeddings = nn.Embedding(
            config.max_position_embeddings, config.hidden_size, padding_idx=self.padding_idx
        )
        self.token_type_embeddings = nn.Embedding(config.type_vocab_size, config.hidden_size)
        self.LayerNorm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)
        self.dropout = Dropout(config.hidden_dropout_prob)

    @property
    def max_words(self) -> int:
        """The longest input the position embeddings cover (RoBERTa's 514 positions: 512 words)."""
        return self.position_embeddings.num_embeddings - self.padding_idx - 1

    def check_length(self, input_ids: torch.Tensor) -> None:
        """Refuses inputs longer than the position embeddings cover (torch's `IndexError` said nothing of the cause):
        their shape, before any padding to static shapes (no sync)."""
        if input_ids.shape[1] > self.max_words:
            raise ValueError(
                f"an input of {input_ids.shape[1]} words is longer than the model's position embeddings cover "
                f"({self.max_words} words: max_position_embeddings {self.position_embeddings.num_embeddings}): "
                f"give the dataset reader a max_seq_length of at most {self.max_words}"
            )

    def forward(self, input_ids: torch.Tensor, token_type_ids: torch.Tensor) -> torch.Tensor:
        # Padding keeps position `padding_idx`; real tokens count up from `padding_idx + 1`.
        not_pad = input_ids.ne(self.padding_idx).long()
        position_ids = torch.cumsum(not_pad, dim=1) * not_pad + self.padding_idx  # (batch, words)
        embeddings = (
            self.word_embeddings(input_ids)
            + self.position_embeddings(position_ids)
            + self.token_type_embeddings(token_type_ids)
        )
        return self.dropout(self.LayerNorm(embeddings))  # (batch, words, hidden)


class LukeEntityEmbeddings(nn.Module):
    """
    Entity embedding (a Ve x `entity_emb_size` table, projected to `hidden_size` when narrower) + the mean
    of the position embeddings over the mention's word positions + a token-type embedding (paper §3.1).
    """

    def __init__(self, config: LukeConfig):
        super().__init__()
        self.entity_embeddings = Embedding(config.entity_vocab_size, config.entity_emb_size, padding_idx=0)
        if config.entity_emb_size != config.hidden_size:
            self.entity_embedding_dense = nn.Linear(config.entity_emb_size, config.hidden_size, bias=False)
        self.position_embeddings = nn.Embedding(config.max_position_embeddings, config.hidden_size)
        self.token_type_embeddings = nn.Embedding(config.type_vocab_size, config.hidden_size)
        self.LayerNorm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)
        self.dropout = Dropout(config.hidden_dropout_prob)

    def forward(
        self, entity_ids: torch.Tensor, entity_position_ids: torch.Tensor, token_type_ids: torch.Tensor
    ) -> torch.Tensor:
        embeddings = self.entity_embeddings(entity_ids)  # (batch, entities, entity_emb_size)
        if hasattr(self, "entity_embedding_dense"):
            embeddings = self.entity_embedding_dense(embeddings)  # (batch, entities, hidden)
        # entity_position_ids: (batch, entities, max_mention_length), padded with -1. The mean of the mention's position
        # embeddings, weighted 1 / length (0 at padding; 0 for an entity without positions).
        in_mention = entity_position_ids.ne(-1)
        weights = in_mention / in_mention.sum(dim=-1, keepdim=True).clamp(min=1)  # (batch, entities, mention length)
        weights = weights.to(self.position_embeddings.weight.dtype)
        if torch.compiler.is_compiling():  # inductor fuses gather and sum (its embedding_bag is a slow fallback)
            positions = (self.position_embeddings(entity_position_ids.clamp(min=0)) * weights[..., None]).sum(-2)
        else:  # one kernel, without the (batch, entities, mention length, hidden) tensor, nor keeping it for backward
            positions = F.embedding_bag(
                entity_position_ids.clamp(min=0).flatten(0, 1),
                self.position_embeddings.weight,
                mode="sum",
                per_sample_weights=weights.flatten(0, 1),
            ).view(*entity_ids.shape, self.position_embeddings.embedding_dim)  # (batch, entities, hidden)
        embeddings = embeddings + positions + self.token_type_embeddings(token_type_ids)
        return self.dropout(self.LayerNorm(embeddings))  # (batch, entities, hidden)


class LukeResidualOutput(nn.Module):
    """dense -> dropout -> LayerNorm(x + residual); BERT's `*Output` blocks."""

    def __init__(self, config: LukeConfig, in_features: int):
        super().__init__()
        self.dense = nn.Linear(in_features, config.hidden_size)
        self.LayerNorm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)
        self.dropout = Dropout(config.hidden_dropout_prob)

    def forward(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        x = linear(self, "dense", x, self.dense.weight, self.dense.bias)
        if not self.training and not torch.is_grad_enabled() and x.dtype == residual.dtype:
            # (no gradient: the fresh product takes the sum, no new matrix; under autocast the product is in half
            # precision and the residual not, and the sum is promoted as out of place)
            return self.LayerNorm(x.add_(residual))
        return self.LayerNorm(dropout_add(x, residual, self.dropout.p, self.training))


class LukeAttention(nn.Module):
    def __init__(self, config: LukeConfig):
        super().__init__()
        self.self = LukeSelfAttention(config)
        self.output = LukeResidualOutput(config, config.hidden_size)

    def forward(self, hidden_states: torch.Tensor, shape: Shape, attention_mask: AttentionMask) -> torch.Tensor:
        return self.output(self.self(hidden_states, shape, attention_mask), hidden_states)


class LukeIntermediate(nn.Module):
    def __init__(self, config: LukeConfig):
        super().__init__()
        if config.hidden_act not in ACTIVATIONS:
            raise ValueError(f"hidden_act {config.hidden_act!r} is not one of {sorted(ACTIVATIONS)}")
        self.dense = nn.Linear(config.hidden_size, config.intermediate_size)
        self.activation = ACTIVATIONS[config.hidden_act]
        self.activation_in_place = IN_PLACE_ACTIVATIONS[config.hidden_act]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = linear(self, "dense", x, self.dense.weight, self.dense.bias)  # (rows, intermediate), a fresh matrix
        return self.activation(x) if torch.is_grad_enabled() else self.activation_in_place(x)


class LukeLayer(nn.Module):
    def __init__(self, config: LukeConfig):
        super().__init__()
        self.attention = LukeAttention(config)
        self.intermediate = LukeIntermediate(config)
        self.output = LukeResidualOutput(config, config.intermediate_size)

    def forward(self, hidden_states: torch.Tensor, shape: Shape, attention_mask: AttentionMask) -> torch.Tensor:
        attended = self.attention(hidden_states, shape, attention_mask)
        return self.output(self.intermediate(attended), attended)  # (batch * (words + entities), hidden), by type


class LukeLayers(nn.Module):
    """Holds the layers under the checkpoint name `encoder.layer.N`."""

    def __init__(self, config: LukeConfig):
        super().__init__()
        self.layer = nn.ModuleList(LukeLayer(config) for _ in range(config.num_hidden_layers))
        self.gradient_checkpointing = False

    def forward(self, hidden_states: torch.Tensor, shape: Shape, attention_mask: AttentionMask) -> torch.Tensor:
        for layer in self.layer:
            if self.gradient_checkpointing and self.training:
                hidden_states = torch.utils.checkpoint.checkpoint(
                    layer, hidden_states, shape, attention_mask, use_reentrant=False
                )
            else:
                hidden_states = layer(hidden_states, shape, attention_mask)
        return hidden_states


class LukePooler(nn.Module):
    def __init__(self, config: LukeConfig):
        super().__init__()
        self.dense = nn.Linear(config.hidden_size, config.hidden_size)

    def forward(self, word_states: torch.Tensor) -> torch.Tensor:
        return torch.tanh(self.dense(word_states[:, 0]))  # (batch, hidden)


def activation_memory() -> float:
    """Bytes a packed batch's training activations may take before its rows are encoded in checkpointed groups:
    `LUKE_CPU_ACTIVATION_MEMORY` (GiB), default 12 (fixed, not the machine's: where the groups fall changes which
    random numbers each dropout mask draws, so a run is the same on any machine)."""
    setting = os.environ.get("LUKE_CPU_ACTIVATION_MEMORY", "").strip()
    try:
        return float(setting or 12) * 2**30
    except ValueError:
        raise ValueError(f"LUKE_CPU_ACTIVATION_MEMORY={setting!r}: expected a number of GiB") from None


def _padded(rows: torch.Tensor, lengths: Sequence[int], size: int) -> torch.Tensor:
    """(sum of lengths, hidden) rows, example by example, as (examples, size, hidden) with zeros after each."""
    return torch.stack([F.pad(part, (0, 0, 0, size - part.size(0))) for part in rows.split(list(lengths))])


class LukeEncoder(nn.Module):
    """
    The LUKE encoder: contextualised word and entity representations (paper §3).

    Words and entities are one sequence of `words + entities` tokens through every layer; only the
    attention's query projection depends on a token's type. Without `entity_ids` it is a plain RoBERTa-style
    word encoder (the paper's "w/o entity inputs" ablation).

    # Parameters

    config : `LukeConfig`
    add_pooling_layer : `bool`, optional (default = `True`)
        Whether to build the tanh pooler over the first word (`pooler_output`).
    """

    def __init__(self, config: LukeConfig, add_pooling_layer: bool = True):
        super().__init__()
        self.config = config
        self.embeddings = LukeEmbeddings(config)
        self.entity_embeddings = LukeEntityEmbeddings(config)
        self.encoder = LukeLayers(config)
        self.pooler = LukePooler(config) if add_pooling_layer else None
        self.apply(self._init_weights)

    def _init_weights(self, module: nn.Module) -> None:
        """BERT's initialisation, as `transformers.LukePreTrainedModel` does it."""
        std = self.config.initializer_range
        if isinstance(module, nn.Linear):
            nn.init.normal_(module.weight, std=std)
            if module.bias is not None:
                nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            nn.init.normal_(module.weight, std=std)
            if module.padding_idx is not None:
                with torch.no_grad():
                    module.weight[module.padding_idx].zero_()
        elif isinstance(module, nn.LayerNorm):
            nn.init.ones_(module.weight)
            nn.init.zeros_(module.bias)

    def select_entity_embeddings(self, rows: Sequence[int]) -> None:
        """
        Replaces the entity table by the given rows of it, in order: fine-tuning keeps only its special
        entities (e.g. `[PAD]`, and `[MASK]` three times for `[MASK]`, `[HEAD]` and `[TAIL]`, paper §4).
        """
        table = self.entity_embeddings.entity_embeddings
        index = torch.as_tensor(list(rows), dtype=torch.long, device=table.weight.device)
        new = Embedding(len(index), table.embedding_dim, padding_idx=0).to(table.weight)
        with torch.no_grad():
            new.weight.copy_(table.weight.index_select(0, index))
        self.entity_embeddings.entity_embeddings = new
        self.config.entity_vocab_size = len(index)

    def train(self, mode: bool = True) -> "LukeEncoder":
        if mode:
            drop_packed(self)  # (inference's packed weights: see `packed_linear`)
        return super().train(mode)

    def _apply(self, fn: Any, recurse: bool = True) -> "LukeEncoder":  # type: ignore[override]
        drop_packed(self)
        return super()._apply(fn, recurse)

    def gradient_checkpointing_enable(self) -> None:
        self.encoder.gradient_checkpointing = True

    def forward(
        self,
        input_ids: Union[torch.Tensor, LukeInputs],
        attention_mask: Optional[torch.Tensor] = None,
        token_type_ids: Optional[torch.Tensor] = None,
        entity_ids: Optional[torch.Tensor] = None,
        entity_position_ids: Optional[torch.Tensor] = None,
        entity_attention_mask: Optional[torch.Tensor] = None,
        entity_token_type_ids: Optional[torch.Tensor] = None,
        lengths: Optional[Lengths] = None,
    ) -> LukeEncoderOutput:
        """
        The project's code passes its inputs whole, as `LukeInputs` (`encoder(inputs, lengths=...)`); the keyword
        names of transformers' `LukeModel` work too:

        # Parameters

        input_ids : `torch.LongTensor` (batch, words), or `LukeInputs` (then no other input)
        attention_mask : `torch.Tensor`, optional, (batch, words); 1 for real tokens, 0 for padding
        token_type_ids : `torch.LongTensor`, optional, (batch, words)
        entity_ids : `torch.LongTensor`, optional, (batch, entities)
        entity_position_ids : `torch.LongTensor`, (batch, entities, max_mention_length)
            The word positions (indices into `input_ids`) of each entity's mention, padded with -1.
            Required with `entity_ids`.
        entity_attention_mask : `torch.Tensor`, optional, (batch, entities)
        entity_token_type_ids : `torch.LongTensor`, optional, (batch, entities)
        lengths : `Lengths`, optional
            Each row's number of real words and of real entities (Python ints: the host knows them), where the masks
            are these prefixes of the rows. On the CPU, eagerly, the encoder then computes the real tokens alone
            (`attention.Shape`, packed), and the outputs at padding positions are 0 (unlike transformers', which
            computes them too); elsewhere (compiled, a GPU, autocast) it is ignored.
        """
        if isinstance(input_ids, LukeInputs):
            named = (attention_mask, token_type_ids, entity_ids, entity_position_ids, entity_attention_mask)
            if any(t is not None for t in named) or entity_token_type_ids is not None:
                raise ValueError("LukeEncoder: given LukeInputs, no other input is given by name")
            inputs = input_ids
        else:
            inputs = LukeInputs(
                input_ids,
                attention_mask,
                token_type_ids,
                entity_ids,
                entity_position_ids,
                entity_attention_mask,
                entity_token_type_ids,
            )
        return self.encode_complete(self.checked(inputs), lengths)

    def checked(self, inputs: LukeInputs) -> LukeInputs:
        """The inputs completed (`LukeInputs.complete`), refused if longer than the position embeddings cover."""
        inputs = inputs.complete()
        self.embeddings.check_length(inputs.input_ids)
        return inputs

    def encode_complete(self, inputs: LukeInputs, lengths: Optional[Lengths] = None) -> LukeEncoderOutput:
        """The model on `checked` inputs: what `forward` runs, and what `static_shapes.Runner` compiles on inputs
        padded to static shapes (which may pass the position embeddings' reach: padding keeps the padding position)."""
        batch, num_words = inputs.input_ids.shape
        word_states = self.embeddings(inputs.input_ids, inputs.token_type_ids)  # (batch, words, hidden)
        hidden = word_states.size(-1)
        entity_states = None
        num_entities = 0
        if inputs.entity_ids is not None:
            entity_states = self.entity_embeddings(
                inputs.entity_ids, inputs.entity_position_ids, inputs.entity_token_type_ids
            )  # (batch, entities, hidden)
            num_entities = entity_states.size(1)
        if lengths is not None and blocks_apply(word_states):
            return self._forward_packed(word_states, entity_states, lengths)
        mask = inputs.attention_mask.bool()
        hidden_states = word_states.reshape(batch * num_words, hidden)
        if entity_states is not None:
            # (batch * words + batch * entities, hidden): the words' rows, then the entities'
            hidden_states = torch.cat([hidden_states, entity_states.reshape(batch * num_entities, hidden)])
            mask = torch.cat([mask, inputs.entity_attention_mask.bool()], dim=1)  # (batch, words + entities)
        shape = Shape(batch, num_words, num_entities)
        hidden_states = self.encoder(hidden_states, shape, AttentionMask(mask))
        word_states = hidden_states[: batch * num_words].view(batch, num_words, hidden)
        if entity_states is not None:
            entity_states = hidden_states[batch * num_words :].view(batch, num_entities, hidden)
        pooled = self.pooler(word_states) if self.pooler is not None else None
        return LukeEncoderOutput(word_states, entity_states, pooled)

    def _forward_packed(
        self, word_states: torch.Tensor, entity_states: Optional[torch.Tensor], lengths: Lengths
    ) -> LukeEncoderOutput:
        """The layers over the real tokens alone (`Shape`, packed); the outputs padded back with zeros."""
        batch, num_words, hidden = word_states.shape
        word_lengths = tuple(int(n) for n in lengths[0])
        if len(word_lengths) != batch or any(not 0 < n <= num_words for n in word_lengths):
            raise ValueError(f"lengths: {batch} rows of 1 to {num_words} words expected, got {word_lengths}")
        rows = [word_states[b, :n] for b, n in enumerate(word_lengths)]
        entity_lengths, num_entities = None, 0
        if entity_states is not None:
            num_entities = entity_states.size(1)
            entity_lengths = tuple(int(n) for n in (lengths[1] if lengths[1] is not None else [num_entities] * batch))
            if len(entity_lengths) != batch or any(not 0 <= n <= num_entities for n in entity_lengths):
                raise ValueError(
                    f"lengths: {batch} rows of 0 to {num_entities} entities expected, got {entity_lengths}"
                )
            rows += [entity_states[b, :n] for b, n in enumerate(entity_lengths)]
        else:
            rows += [word_states.new_empty(0, hidden)] * batch
        entity_lengths = entity_lengths or (0,) * batch
        word_parts, entity_parts = [], []
        for first, last in self._row_groups(word_lengths, entity_lengths):
            shape = Shape(last - first, num_words, num_entities, word_lengths[first:last], entity_lengths[first:last])
            group = torch.cat(rows[first:last] + rows[batch + first : batch + last])  # (real tokens, hidden) by type
            if last - first == batch:
                out = self.encoder(group, shape, None)
            else:  # (recomputed in the backward pass: each group's activations are kept in turn, not all at once)
                out = torch.utils.checkpoint.checkpoint(self.encoder, group, shape, None, use_reentrant=False)
            word_part, entity_part = out.split([shape.word_rows, out.size(0) - shape.word_rows])
            word_parts.append(word_part)
            entity_parts.append(entity_part)
        word_rows, entity_rows = torch.cat(word_parts), torch.cat(entity_parts)
        word_states = _padded(word_rows, word_lengths, num_words)
        if entity_states is not None:
            entity_states = _padded(entity_rows, entity_lengths, num_entities)  # type: ignore[arg-type]
        pooled = self.pooler(word_states) if self.pooler is not None else None
        return LukeEncoderOutput(word_states, entity_states, pooled)

    def _row_groups(self, word_lengths: Sequence[int], entity_lengths: Sequence[int]) -> List[Tuple[int, int]]:
        """Consecutive rows of a packed batch whose training activations fit `activation_memory()` together: one group
        of all rows, unless the batch's would not (then each group is checkpointed: `_forward_packed`)."""
        config = self.config
        if not (self.training and torch.is_grad_enabled()):
            return [(0, len(word_lengths))]
        dropout = config.attention_probs_dropout_prob > 0
        per_row = [
            config.num_hidden_layers
            * (
                (w + e) * config.hidden_size * 4 * 20
                + config.num_attention_heads * (w + e) ** 2 * (8 if dropout else 4)
            )
            for w, e in zip(word_lengths, entity_lengths)
        ]  # bytes autograd keeps: about 19 activations of hidden_size a token, and the attention's probabilities
        budget = activation_memory()
        if sum(per_row) <= budget:
            return [(0, len(word_lengths))]
        groups, first, total = [], 0, 0
        for row, size in enumerate(per_row):
            if row > first and total + size > budget / 2:
                groups.append((first, row))
                first, total = row, 0
            total += size
        return groups + [(first, len(per_row))]

    @classmethod
    def from_pretrained(cls, name_or_path: str, **kwargs) -> "LukeEncoder":
        """Loads a LUKE, RoBERTa or BERT checkpoint; see `loading.load_encoder` for the arguments."""
        from luke_allennlp.modeling.loading import load_encoder

        return load_encoder(cls, name_or_path, **kwargs)

    def save_pretrained(self, directory: str) -> None:
        """Writes `config.json` and `model.safetensors`, loadable by `transformers.LukeModel`."""
        from luke_allennlp.modeling.loading import save_encoder

        save_encoder(self, directory)
