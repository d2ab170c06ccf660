"""
LUKE's pretraining model (paper §3.3): the encoder, a masked-language-model head tied to the word embeddings
and the masked-entity-prediction head tied to the entity embeddings; loss = MLM + masked-entity cross-entropy.

Parameter names equal those of `transformers.LukeForMaskedLM`, so a state dict moves between the two as is.
Unlike transformers, the heads run only at the masked positions: with 15% masked, that skips 85% of the
50k-word and 500k-entity logits, which are most of a pretraining step's arithmetic.
"""

import logging
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple, Union

import torch
import torch.nn.functional as F
from torch import nn

from luke_allennlp.modeling.configuration import LukeConfig
from luke_allennlp.modeling.encoder import ACTIVATIONS, LukeEncoder
from luke_allennlp.modeling.inputs import LukeInputs
from luke_allennlp.modeling.static_shapes import ENTITIES, ROWS, WORDS, Head, Like, Padding, Runner

logger = logging.getLogger(__name__)

IGNORE_INDEX = -100  # label of a position that is not predicted (as in transformers)


@dataclass
class LukeForPretrainingOutput:
    loss: Optional[torch.Tensor]  # masked_lm_loss + masked_entity_loss; None without labels
    masked_lm_loss: Optional[torch.Tensor]
    masked_entity_loss: Optional[torch.Tensor]
    # With labels: the logits and targets of the masked positions only, (masked, vocab) and (masked,).
    # Without labels: the logits of every position, (batch, words, vocab) and (batch, entities, entity vocab).
    logits: torch.Tensor
    entity_logits: Optional[torch.Tensor]
    targets: Optional[torch.Tensor] = None
    entity_targets: Optional[torch.Tensor] = None


class LukeLMHead(nn.Module):
    """RoBERTa's masked-LM head: dense, gelu, layer norm, then the word embedding matrix's transpose plus a bias."""

    def __init__(self, config: LukeConfig):
        super().__init__()
        self.dense = nn.Linear(config.hidden_size, config.hidden_size)
        self.layer_norm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)
        self.bias = nn.Parameter(torch.zeros(config.vocab_size))

    def forward(self, states: torch.Tensor, word_embeddings: torch.Tensor) -> torch.Tensor:
        x = self.layer_norm(F.gelu(self.dense(states)))
        return F.linear(x, word_embeddings, self.bias)  # (..., vocab)


class EntityPredictionHeadTransform(nn.Module):
    def __init__(self, config: LukeConfig):
        super().__init__()
        self.dense = nn.Linear(config.hidden_size, config.entity_emb_size)
        self.activation = ACTIVATIONS[config.hidden_act]
        self.LayerNorm = nn.LayerNorm(config.entity_emb_size, eps=config.layer_norm_eps)

    def forward(self, states: torch.Tensor) -> torch.Tensor:
        return self.LayerNorm(self.activation(self.dense(states)))  # (..., entity_emb_size)


class EntityPredictionHead(nn.Module):
    """Paper §3.3: dense, activation, layer norm, then the entity table's transpose plus a bias."""

    def __init__(self, config: LukeConfig):
        super().__init__()
        self.transform = EntityPredictionHeadTransform(config)
        self.bias = nn.Parameter(torch.zeros(config.entity_vocab_size))

    def forward(self, states: torch.Tensor, entity_embeddings: torch.Tensor) -> torch.Tensor:
        return F.linear(self.transform(states), entity_embeddings, self.bias)  # (..., entity vocab)


def masked_cross_entropy(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Mean cross-entropy over the given positions; 0 (still connected to the graph) when there are none, so
    that every parameter gets a gradient in every step, as DistributedDataParallel requires."""
    return F.cross_entropy(logits.float(), targets, reduction="sum") / max(targets.numel(), 1)


def static_cross_entropy(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """`masked_cross_entropy` over the targets that are not -100 (padding), counted on the device."""
    count = targets.ne(IGNORE_INDEX).sum().clamp(min=1)
    return F.cross_entropy(logits.float(), targets, reduction="sum", ignore_index=IGNORE_INDEX) / count


class LukeForPretraining(nn.Module):
    """
    `LukeEncoder` + masked-LM head + masked-entity-prediction head. Decoders are tied to the embedding tables
    (they are the tables, used transposed), so the state dict has no `*.decoder.*` entries.

    The pooler (`luke.pooler`) plays no part in pretraining; it is kept, frozen, so that checkpoints hold every
    weight `transformers.LukeForMaskedLM` expects.

    # Parameters

    config : `LukeConfig`
    luke : `LukeEncoder`, optional
        An encoder already built (e.g. loaded from a checkpoint); a new one otherwise.
    """

    def __init__(self, config: LukeConfig, luke: Optional[LukeEncoder] = None):
        super().__init__()
        self.config = config
        self.luke = luke if luke is not None else LukeEncoder(config)
        self.lm_head = LukeLMHead(config)
        self.entity_predictions = EntityPredictionHead(config)
        self.lm_head.apply(self.luke._init_weights)
        self.entity_predictions.apply(self.luke._init_weights)
        if self.luke.pooler is not None:
            self.luke.pooler.requires_grad_(False)
        # The encoder, and with static masked positions the heads and loss too: eager, or compiled as one graph per
        # bucket of static shapes where a `Runner` with `compile_kwargs` replaces it (`luke_pretraining`'s `compile`).
        self.runner = Runner(self.luke)

    def forward(
        self,
        input_ids: Union[torch.Tensor, LukeInputs],
        labels: Optional[torch.Tensor] = None,
        entity_labels: Optional[torch.Tensor] = None,
        masked_counts: Optional[Tuple[int, int]] = None,
        masked_positions: Optional[torch.Tensor] = None,
        masked_entity_positions: Optional[torch.Tensor] = None,
        **encoder_inputs: Optional[torch.Tensor],
    ) -> LukeForPretrainingOutput:
        """
        `input_ids`: the encoder's `LukeInputs` (what the project's code passes), or its word ids with the other
        inputs of `LukeEncoder.forward` (`attention_mask`, `entity_ids`, `entity_position_ids`, ...) by name, as in
        transformers; and:

        labels : `torch.LongTensor`, optional, (batch, words)
            The original word ids at masked positions, -100 elsewhere.
        entity_labels : `torch.LongTensor`, optional, (batch, entities)
            The original entity ids at masked entities, -100 elsewhere.
        masked_counts : `Tuple[int, int]`, optional
            The numbers of masked words and masked entities, where the caller knows them on the host (else they are
            read from the device: the step's one host sync).
        masked_positions, masked_entity_positions : `torch.LongTensor`, optional, (batch, fixed size)
            The word / entity positions of each row's labels, padded with -1 to a size that bounds them all (the
            reader's `masked_positions`). With them the heads run at that static size: no host sync, no shape
            that depends on the data (CUDA graphs); the outputs' logits and targets then hold the padding too,
            with targets -100. Without them, at the masked positions found on the device (one host sync).
        """
        inputs = input_ids if isinstance(input_ids, LukeInputs) else LukeInputs(input_ids, **encoder_inputs)
        if masked_positions is not None and labels is not None:
            return self.runner(
                inputs, self.static_heads, labels, entity_labels, masked_positions, masked_entity_positions
            )
        out = self.runner(inputs)
        word_table = self.luke.embeddings.word_embeddings.weight
        entity_table = self.luke.entity_embeddings.entity_embeddings.weight

        masked_lm_loss = masked_entity_loss = targets = entity_targets = entity_logits = None
        entities = out.entity_last_hidden_state
        word_masked = labels.ne(IGNORE_INDEX).flatten() if labels is not None else None  # (batch * words,)
        entity_masked = None
        if entities is not None and entity_labels is not None:
            entity_masked = entity_labels.ne(IGNORE_INDEX).flatten()  # (batch * entities,)
        # The heads run at the masked positions only. Their numbers are read from the device once for both (the
        # step's one host sync): boolean-mask indexing would read each count separately.
        masks = [m for m in (word_masked, entity_masked) if m is not None]
        if masked_counts is not None:
            counts = iter([n for n, m in zip(masked_counts, (word_masked, entity_masked)) if m is not None])
        else:
            counts = iter(torch.stack([m.sum() for m in masks]).tolist() if masks else [])

        if word_masked is None:
            logits = self.lm_head(out.last_hidden_state, word_table)  # (batch, words, vocab)
        else:
            positions = torch.nonzero_static(word_masked, size=next(counts)).squeeze(1)  # (masked words,)
            targets = labels.flatten()[positions]
            hidden = out.last_hidden_state.flatten(0, 1)[positions]  # (masked words, hidden)
            logits = self.lm_head(hidden, word_table)  # (masked words, vocab)
            masked_lm_loss = masked_cross_entropy(logits, targets)

        if entities is not None:
            if entity_masked is None:
                entity_logits = self.entity_predictions(entities, entity_table)
            else:
                positions = torch.nonzero_static(entity_masked, size=next(counts)).squeeze(1)  # (masked entities,)
                entity_targets = entity_labels.flatten()[positions]
                hidden = entities.flatten(0, 1)[positions]  # (masked entities, hidden)
                entity_logits = self.entity_predictions(hidden, entity_table)
                masked_entity_loss = masked_cross_entropy(entity_logits, entity_targets)

        losses = [x for x in (masked_lm_loss, masked_entity_loss) if x is not None]
        loss = torch.stack(losses).sum() if losses else None
        return LukeForPretrainingOutput(
            loss, masked_lm_loss, masked_entity_loss, logits, entity_logits, targets, entity_targets
        )

    @property
    def static_heads(self) -> Head:
        """`_static_heads` on labels padded with -100 and positions with -1 (no target), its logits and targets cut to
        the batch's positions."""
        positions, entity_positions = Like(2, flat=True), Like(3, flat=True)
        return Head(
            self._static_heads,
            (Padding(WORDS, IGNORE_INDEX), Padding(ENTITIES, IGNORE_INDEX), Padding(ROWS, -1), Padding(ROWS, -1)),
            {
                "logits": positions,
                "targets": positions,
                "entity_logits": entity_positions,
                "entity_targets": entity_positions,
            },
            "the pretraining model",
        )

    def _static_heads(
        self, word_states, entities, labels, entity_labels, positions, entity_positions
    ) -> LukeForPretrainingOutput:
        """The heads at the given positions, padding (-1) included with target -100."""
        logits, targets = self._gather(word_states, labels, positions)  # (batch * size, hidden), (...)
        logits = self.lm_head(logits, self.luke.embeddings.word_embeddings.weight)  # (batch * size, vocab)
        masked_lm_loss = static_cross_entropy(logits, targets)
        entity_logits = entity_targets = masked_entity_loss = None
        if entities is not None and entity_labels is not None and entity_positions is not None:
            hidden, entity_targets = self._gather(entities, entity_labels, entity_positions)
            entity_logits = self.entity_predictions(hidden, self.luke.entity_embeddings.entity_embeddings.weight)
            masked_entity_loss = static_cross_entropy(entity_logits, entity_targets)
        losses = [x for x in (masked_lm_loss, masked_entity_loss) if x is not None]
        return LukeForPretrainingOutput(
            torch.stack(losses).sum(),
            masked_lm_loss,
            masked_entity_loss,
            logits,
            entity_logits,
            targets,
            entity_targets,
        )

    @staticmethod
    def _gather(states: torch.Tensor, labels: torch.Tensor, positions: torch.Tensor):
        """(states at `positions` of each row, flattened; their labels, -100 where a position is padding)."""
        batch, length = labels.shape
        padding = positions.lt(0)  # (batch, size)
        flat = (positions.clamp(min=0) + torch.arange(batch, device=positions.device).unsqueeze(1) * length).flatten()
        targets = labels.flatten()[flat].masked_fill(padding.flatten(), IGNORE_INDEX)  # (batch * size,)
        return states.flatten(0, 1)[flat], targets  # (batch * size, hidden)

    @classmethod
    def from_pretrained(cls, name_or_path: str, *, load_weights: bool = True, **kwargs: Any) -> "LukeForPretraining":
        """
        Builds the model from a checkpoint directory or hub name: a LUKE checkpoint (`LukeForMaskedLM` keeps its
        heads), or RoBERTa / BERT (`RobertaForMaskedLM`'s `lm_head` and `BertForPreTraining`'s / `BertForMaskedLM`'s
        `cls.predictions` become the MLM head; the entity side and its head are new). Heads the checkpoint lacks
        are randomly initialised, with a warning. `kwargs` are those of `LukeEncoder.from_pretrained`
        (`entity_vocab_size` is required for RoBERTa / BERT).
        """
        from luke_allennlp.modeling.checkpoint_files import read_config, read_state_dict

        luke = LukeEncoder.from_pretrained(name_or_path, load_weights=load_weights, **kwargs)
        model = cls(luke.config, luke)
        heads = [name for name, _ in model.named_parameters() if not name.startswith("luke.")]
        if load_weights:
            model_type = read_config(name_or_path).get("model_type")
            heads = _load_heads(model, read_state_dict(name_or_path), model_type, name_or_path)
        # What the checkpoint had no weights for (randomly initialised): stage 1 of pretraining trains it.
        model.missing_from_checkpoint = [
            "luke." + name for name in getattr(luke, "missing_from_checkpoint", [])
        ] + heads
        return model

    def save_pretrained(self, directory: str) -> None:
        """Writes `config.json` and `model.safetensors`, loadable by `transformers.LukeForMaskedLM`."""
        from luke_allennlp.modeling.checkpoint_files import write_checkpoint

        state = dict(self.state_dict())
        # transformers 5 unties LukeForMaskedLM's word decoder from the word embeddings and takes the decoder's
        # bias as the source of `lm_head.bias`, so the file holds copies of both (transformers 4 re-ties them).
        state["lm_head.decoder.weight"] = state["luke.embeddings.word_embeddings.weight"].clone()
        state["lm_head.decoder.bias"] = state["lm_head.bias"].clone()
        write_checkpoint(directory, {**self.config.to_dict(), "architectures": ["LukeForMaskedLM"]}, state)


# Where each checkpoint family keeps its masked-LM head, as (prefix in the checkpoint, our prefix).
HEAD_PREFIXES = {
    "luke": [("lm_head.", "lm_head."), ("entity_predictions.", "entity_predictions.")],
    "bert": [
        ("cls.predictions.transform.dense.", "lm_head.dense."),
        ("cls.predictions.transform.LayerNorm.", "lm_head.layer_norm."),
        ("cls.predictions.bias", "lm_head.bias"),
        ("cls.predictions.decoder.bias", "lm_head.decoder.bias"),
    ],
}


def _load_heads(model: LukeForPretraining, state: Dict[str, torch.Tensor], model_type: str, source: str) -> List[str]:
    """Loads the heads the checkpoint has; returns the names of the head parameters it lacks."""
    from luke_allennlp.modeling.loading import rename_legacy_key, shape_mismatches

    state = {rename_legacy_key(k): v for k, v in state.items()}
    heads: Dict[str, torch.Tensor] = {}
    for theirs, ours in HEAD_PREFIXES.get(model_type, [("lm_head.", "lm_head.")]):
        heads.update({ours + k[len(theirs) :]: v for k, v in state.items() if k.startswith(theirs)})
    if "lm_head.bias" not in heads and "lm_head.decoder.bias" in heads:  # some checkpoints keep only the tied copy
        heads["lm_head.bias"] = heads["lm_head.decoder.bias"]
    own = {k: v for k, v in model.state_dict().items() if not k.startswith("luke.")}
    mismatched = shape_mismatches(heads, own)
    if mismatched:
        raise ValueError(f"{source}: head weights do not fit the configured model: {mismatched}")
    missing = sorted(k for k in own if k not in heads)
    if missing:
        logger.warning("%s has no weights for %s: they are randomly initialised", source, missing)
    model.load_state_dict({k: v for k, v in heads.items() if k in own}, strict=False)
    return missing
