import logging
from typing import Any, Dict, List, NamedTuple, Optional, Tuple

import torch
import torch.nn.functional as F
from allennlp.data import Vocabulary
from allennlp.models import Model
from allennlp.modules.token_embedders import TokenEmbedder

from luke_allennlp.modeling.checkpoint_files import read_config, read_state_dict
from luke_allennlp.modeling.inputs import LukeInputs
from luke_allennlp.modeling.loading import shape_mismatches
from luke_allennlp.modeling.pretraining import IGNORE_INDEX, EntityPredictionHead, masked_cross_entropy
from luke_allennlp.modeling.static_shapes import ENTITIES, MENTIONS, Head, Like, Padding
from luke_allennlp.modules.token_embedders.luke_embedder import LukeEmbedder
from luke_allennlp.resources.checkpoint_tokenizer import special_entity_ids
from luke_allennlp.resources.task_entities import LUKE_SPECIAL_ENTITY_IDS
from luke_allennlp.training.metrics import EntityDisambiguationAccuracy, EntityLinkingF1

logger = logging.getLogger(__name__)

INFERENCE = ("global", "local")
NO_GOLD = -2  # (as the reader writes it) a mention without a gold entity


class EdInputs(NamedTuple):
    """What every encoder pass of an instance reads besides the entity inputs."""

    word_ids: torch.Tensor  # (batch, words)
    word_attention_mask: torch.Tensor  # (batch, words)
    entity_position_ids: torch.Tensor  # (batch, mentions, mention length), -1 padded
    entity_attention_mask: torch.Tensor  # (batch, mentions)
    candidate_ids: torch.Tensor  # (batch, mentions, candidates), -1 padded
    candidate_mask: torch.Tensor  # (batch, mentions, candidates)

    def rows(self, rows: torch.Tensor) -> "EdInputs":
        return EdInputs(*(x[rows] for x in self))


@Model.register("luke_entity_disambiguation")
class LukeEntityDisambiguation(Model):
    """
    Entity disambiguation with LUKE's masked-entity prediction, as in Yamada et al. (NAACL 2022), "Global Entity
    Disambiguation with BERT", and its released code (studio-ousia/luke, `examples/entity_disambiguation`):

    - Input: the words, and one entity per mention over the mention's subwords (`[MASK]`, or an entity already
      known). The pretrained entity prediction head (dense, activation, layer norm, then the entity table's transpose
      plus a bias, `LukeForMaskedLM`'s `entity_predictions`) scores the mention's candidates only: the other entities'
      logits are masked out, so computing the candidates' logits alone gives the same softmax.
    - Training (paper §3: predicting randomly masked entities): in each instance `masked_entity_prob` (90%, the
      released `train.py`'s default) of the mentions with a gold entity in the vocabulary, at least one, are
      `[MASK]`; the others get their gold entity as input, so that the model learns to use resolved entities. The
      loss is the cross-entropy over the candidates of the masked mentions whose gold entity is a candidate. (The
      released code meant the same: its line that keeps the unmasked 10% out of the loss slices an already cut
      permutation and does nothing, so it also predicts the visible entities; we follow the paper.) Mentions whose
      gold entity is unknown or outside the vocabulary stay `[MASK]`, without a label (the released code drops them
      from training inputs). As there, the entity embeddings and the head's bias stay frozen
      (`freeze_entity_embeddings`).
    - Inference from all mentions `[MASK]`: `"local"` predicts every mention in one pass; `"global"` (the paper's
      confidence order) predicts all, resolves the mention whose best candidate is the most probable, puts that
      entity in as its input, and repeats until every mention with candidates is resolved (one encoder pass per
      mention). A mention without candidates gets no entity.

    Metrics (validation): in-KB micro `accuracy` over the gold mentions, with `prior_accuracy` (the most probable
    candidate by p(entity | mention)) and `candidate_recall` on the same mentions, and mention counts
    (`EntityDisambiguationAccuracy`). During training, `accuracy` is that of the masked mentions. With end-to-end
    linking data (`mention_detection` in the reader): `linking_precision`, `linking_recall`, `linking_f1`
    (`EntityLinkingF1`: a link is right if its span and its entity are).

    # Parameters

    vocab : `Vocabulary`
        Unused (use `vocabulary: {type: "empty"}`): entities are ids of the checkpoint's entity vocabulary.
    embedder : `TokenEmbedder`
        A `luke` embedder keeping the checkpoint's entity table (`entity_vocab: "checkpoint"`).
    model_name : `str`
        The checkpoint of the embedder: a LUKE checkpoint with its entity prediction head (`LukeForMaskedLM`, e.g.
        `allennlp export-luke` output); a checkpoint without one gets a random head, with a warning.
    inference : `str`, optional (default = `"global"`)
    masked_entity_prob : `float`, optional (default = `0.9`)
    freeze_entity_embeddings : `bool`, optional (default = `True`)
        Keep the entity table and the head's bias as pretrained (false only to train a model from scratch).
    load_weights : `bool`, optional (default = `True`)
        If false the head is not read from `model_name` (its weights come from an archive).
    """

    default_predictor = "luke_entity_disambiguation"

    def __init__(
        self,
        vocab: Vocabulary,
        embedder: TokenEmbedder,
        model_name: str,
        inference: str = "global",
        masked_entity_prob: float = 0.9,
        freeze_entity_embeddings: bool = True,
        load_weights: bool = True,
        **kwargs,
    ) -> None:
        super().__init__(vocab, **kwargs)
        if not isinstance(embedder, LukeEmbedder):
            raise ValueError("luke_entity_disambiguation needs the luke embedder (with entity_vocab: 'checkpoint')")
        if inference not in INFERENCE:
            raise ValueError(f"inference must be one of {INFERENCE}, not {inference!r}")
        if not 0.0 < masked_entity_prob <= 1.0:
            raise ValueError(f"masked_entity_prob must be in (0, 1], not {masked_entity_prob}")
        self.embedder = embedder
        self.inference = inference
        self.masked_entity_prob = masked_entity_prob
        luke = embedder.luke
        self.mask_entity_id = special_entity_ids(model_name, LUKE_SPECIAL_ENTITY_IDS)["[MASK]"]
        rows = read_config(model_name).get("entity_vocab_size")
        if luke.config.entity_vocab_size != rows:
            raise ValueError(
                f"the embedder's entity table has {luke.config.entity_vocab_size} rows, {model_name}'s {rows}: "
                "keep the checkpoint's (entity_vocab: 'checkpoint'), whose ids the candidates are"
            )
        self.entity_predictions = EntityPredictionHead(luke.config)
        self.entity_predictions.apply(luke._init_weights)
        if load_weights:
            _load_entity_head(self.entity_predictions, model_name)
        if freeze_entity_embeddings:
            luke.entity_embeddings.entity_embeddings.weight.requires_grad_(False)
            self.entity_predictions.bias.requires_grad_(False)
        self.accuracy = EntityDisambiguationAccuracy()
        self.linking = EntityLinkingF1()
        self._linking_seen = False

    def forward(  # type: ignore[override]
        self,
        word_ids: torch.LongTensor,
        word_attention_mask: torch.BoolTensor,
        entity_position_ids: torch.LongTensor,
        entity_attention_mask: torch.BoolTensor,
        gold_entity_ids: torch.LongTensor,
        candidate_ids: torch.LongTensor,
        candidate_priors: torch.Tensor,
        metadata: List[Dict[str, Any]],
    ) -> Dict[str, Any]:
        """
        # Parameters

        word_ids, word_attention_mask : (batch, words)
        entity_position_ids : (batch, mentions, mention length), -1 padded
        entity_attention_mask : (batch, mentions)
        gold_entity_ids : (batch, mentions): entity ids; -1 outside the vocabulary; -2 unknown
        candidate_ids, candidate_priors : (batch, mentions, candidates): entity ids (-1 padded) and p(e|m)
        metadata : per instance its `id` and per mention what the output reports (`start`, `end`, `text`,
            `gold`, `candidates` titles); with end-to-end linking data, `gold_links` ([start, end, title])
        """
        candidate_mask = candidate_ids.ge(0)  # (batch, mentions, candidates)
        inputs = EdInputs(
            word_ids, word_attention_mask, entity_position_ids, entity_attention_mask, candidate_ids, candidate_mask
        )
        output: Dict[str, Any] = {"metadata": metadata}
        if entity_position_ids.size(1) == 0:  # no mention in the batch (raw text without names)
            empty = gold_entity_ids.new_zeros(gold_entity_ids.shape)
            output.update(
                loss=candidate_priors.new_zeros((), requires_grad=self.training),
                predicted_candidates=empty - 1,
                scores=empty.float(),
            )
        elif self.training:
            entity_ids, labels = self._training_inputs(
                gold_entity_ids, candidate_ids, candidate_mask, entity_attention_mask
            )
            logits, output["loss"] = self._candidate_scores(entity_ids, inputs, labels)  # (batch, mentions, candidates)
            masked = entity_ids.eq(self.mask_entity_id) & gold_entity_ids.ge(0)
            predicted = logits.argmax(-1).masked_fill(~candidate_mask.any(-1), -1)
            self._update_accuracy(predicted, masked, gold_entity_ids, candidate_ids, candidate_mask, candidate_priors)
        else:
            predicted, scores, first_logits = self._infer(inputs)
            labels = self._candidate_labels(gold_entity_ids, candidate_ids, candidate_mask)
            labelled = labels.ne(IGNORE_INDEX) & entity_attention_mask
            output["loss"] = masked_cross_entropy(first_logits[labelled], labels[labelled])  # all mentions [MASK]
            output.update(predicted_candidates=predicted, scores=scores)
            evaluated = entity_attention_mask & gold_entity_ids.ne(NO_GOLD)
            self._update_accuracy(
                predicted, evaluated, gold_entity_ids, candidate_ids, candidate_mask, candidate_priors
            )
            if any("gold_links" in m for m in metadata):
                self._linking_seen = True
                self.linking(
                    self._links(predicted, metadata),
                    [[tuple(link) for link in m.get("gold_links", ())] for m in metadata],
                )
        return output

    # --- scoring -------------------------------------------------------------------------------------------------

    def _candidate_logits(self, entity_ids: torch.Tensor, inputs: EdInputs) -> torch.Tensor:
        """The entity head's logits of each mention's candidates, others masked: (batch, mentions, candidates)."""
        return self._candidate_scores(entity_ids, inputs)[0]

    def _candidate_scores(
        self, entity_ids: torch.Tensor, inputs: EdInputs, labels: Optional[torch.Tensor] = None
    ) -> Tuple[torch.Tensor, Optional[torch.Tensor]]:
        """`_candidate_logits`, and with `labels` (batch, mentions) their `_labelled_cross_entropy`: encoder, head
        and loss, one compiled graph where the embedder is compiled."""
        luke_inputs = LukeInputs(
            inputs.word_ids,
            inputs.word_attention_mask,
            entity_ids=entity_ids,
            entity_position_ids=inputs.entity_position_ids,
            entity_attention_mask=inputs.entity_attention_mask,
        )
        return self.embedder.runner(luke_inputs, self.head, inputs.candidate_ids, labels)

    @property
    def head(self) -> Head:
        """`_score_candidates` on each mention's candidates (padded as mention positions are: along the mentions, and
        to 2 at least, with -1) and labels, its logits cut to the candidates'."""
        return Head(self._score_candidates, (Padding(MENTIONS, -1), Padding(ENTITIES, IGNORE_INDEX)), (Like(0), None))

    def _score_candidates(
        self,
        word_states: torch.Tensor,
        entity_states: torch.Tensor,
        candidate_ids: torch.Tensor,
        labels: Optional[torch.Tensor],
    ) -> Tuple[torch.Tensor, Optional[torch.Tensor]]:
        """The head: the candidates' logits (batch, mentions, candidates; the others, -1, masked), and with `labels`
        the loss."""
        states = self.entity_predictions.transform(entity_states)  # (batch, mentions, entity_emb_size)
        candidates = candidate_ids.clamp(min=0)
        table = self.embedder.luke.entity_embeddings.entity_embeddings.weight
        embedded = F.embedding(candidates, table)  # (batch, mentions, candidates, entity_emb_size)
        logits = torch.einsum("bmd,bmcd->bmc", states, embedded) + self.entity_predictions.bias[candidates]
        logits = logits.float().masked_fill(candidate_ids.lt(0), torch.finfo(torch.float32).min)
        return logits, None if labels is None else self._labelled_cross_entropy(logits, labels)

    def _candidate_labels(
        self, gold: torch.Tensor, candidate_ids: torch.Tensor, candidate_mask: torch.Tensor
    ) -> torch.Tensor:
        """(batch, mentions): the gold entity's index among the candidates; -100 where it is none of them."""
        matches = candidate_ids.eq(gold.unsqueeze(-1)) & candidate_mask & gold.ge(0).unsqueeze(-1)
        return matches.float().argmax(-1).masked_fill(~matches.any(-1), IGNORE_INDEX)

    def _training_inputs(
        self,
        gold: torch.Tensor,
        candidate_ids: torch.Tensor,
        candidate_mask: torch.Tensor,
        entity_attention_mask: torch.Tensor,
    ) -> Tuple[torch.Tensor, torch.Tensor]:
        """Entity inputs with `masked_entity_prob` of the known gold entities masked per instance, and their labels."""
        known = gold.ge(0) & entity_attention_mask  # (batch, mentions)
        count = known.sum(-1)
        to_mask = torch.where(count > 0, torch.round(count * self.masked_entity_prob).clamp(min=1), count)
        draw = torch.rand(known.shape, device=gold.device).masked_fill(~known, 2.0)  # unknown golds rank last
        rank = draw.argsort(-1).argsort(-1)
        masked = known & rank.lt(to_mask.unsqueeze(-1))
        entity_ids = torch.where(masked | ~known, self.mask_entity_id, gold.clamp(min=0))
        entity_ids = entity_ids.masked_fill(~entity_attention_mask, 0)
        labels = self._candidate_labels(gold, candidate_ids, candidate_mask).masked_fill(~masked, IGNORE_INDEX)
        return entity_ids, labels

    def _infer(self, inputs: EdInputs) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """
        (predicted candidate index, -1 for none; its probability among the candidates when it was resolved), both
        (batch, mentions), and the logits of the first pass, every mention `[MASK]`.
        """
        entity_ids = torch.full_like(inputs.entity_attention_mask, self.mask_entity_id, dtype=torch.long)
        entity_ids = entity_ids.masked_fill(~inputs.entity_attention_mask, 0)
        # (A copy: under CUDA graphs the compiled head's outputs are overwritten by its next run, and these are read
        # after the global loop's passes.)
        first_logits = self._candidate_logits(entity_ids, inputs).clone()
        unresolved = inputs.entity_attention_mask & inputs.candidate_mask.any(-1)  # (batch, mentions)
        predicted = torch.full_like(entity_ids, -1)
        scores = torch.zeros_like(first_logits[..., 0])
        if self.inference == "local":
            probabilities, best = first_logits.softmax(-1).max(-1)
            return best.masked_fill(~unresolved, -1), probabilities.masked_fill(~unresolved, 0.0), first_logits
        rows = unresolved.any(-1).nonzero().squeeze(-1)  # the instances with mentions left to resolve
        logits = first_logits[rows]
        while len(rows):
            # One mention per instance: the most confident of those not resolved yet.
            probabilities, best = logits.softmax(-1).max(-1)  # (rows, mentions)
            probabilities = probabilities.masked_fill(~unresolved[rows], -1.0)
            target = probabilities.argmax(-1)  # (rows,)
            at = torch.arange(len(rows), device=rows.device)
            candidate = best[at, target]
            predicted[rows, target] = candidate
            scores[rows, target] = probabilities[at, target]
            entity_ids[rows, target] = inputs.candidate_ids[rows, target, candidate]
            unresolved[rows, target] = False
            rows = unresolved.any(-1).nonzero().squeeze(-1)
            if len(rows):
                logits = self._candidate_logits(entity_ids[rows], inputs.rows(rows))
        return predicted, scores, first_logits

    # --- metrics and output --------------------------------------------------------------------------------------

    def _update_accuracy(
        self,
        predicted: torch.Tensor,
        evaluated: torch.Tensor,
        gold: torch.Tensor,
        candidate_ids: torch.Tensor,
        candidate_mask: torch.Tensor,
        priors: torch.Tensor,
    ) -> None:
        """Scores the `evaluated` mentions; `predicted` are candidate indices (-1: none)."""
        has_candidates = candidate_mask.any(-1)
        predicted_ids = candidate_ids.gather(-1, predicted.clamp(min=0).unsqueeze(-1)).squeeze(-1)
        predicted_ids = predicted_ids.masked_fill(predicted.lt(0), -1)
        prior = priors.masked_fill(~candidate_mask, -1.0).argmax(-1)  # the first of equal priors
        prior_ids = candidate_ids.gather(-1, prior.unsqueeze(-1)).squeeze(-1).masked_fill(~has_candidates, -1)
        gold_in_candidates = self._candidate_labels(gold, candidate_ids, candidate_mask).ne(IGNORE_INDEX)
        self.accuracy(predicted_ids, gold, prior_ids, candidate_mask.sum(-1), gold_in_candidates, mask=evaluated)

    @staticmethod
    def _labelled_cross_entropy(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        """`masked_cross_entropy` at the labelled mentions (labels not `IGNORE_INDEX`), without selecting them by a
        boolean mask (their number would be read from the device): every mention's loss, those unlabelled zeroed."""
        labelled = labels.ne(IGNORE_INDEX)  # (batch, mentions)
        losses = F.cross_entropy(logits.float().flatten(0, -2), labels.clamp(min=0).flatten(), reduction="none")
        return torch.where(labelled.flatten(), losses, 0.0).sum() / labelled.sum().clamp(min=1)

    @staticmethod
    def _links(predicted: torch.Tensor, metadata: List[Dict[str, Any]]) -> List[List[Tuple[int, int, str]]]:
        """Per instance, its predicted links: (start, end, entity title) of each mention given an entity."""
        links = []
        for row, meta in zip(predicted.tolist(), metadata):
            links.append([(m["start"], m["end"], m["candidates"][k]) for m, k in zip(meta["mentions"], row) if k >= 0])
        return links

    def make_output_human_readable(self, output_dict: Dict[str, Any]) -> Dict[str, Any]:
        """
        Per instance: `id`, and `mentions`, each with `start`, `end` (characters, end exclusive) and `text` where the
        input had text, the predicted `entity` (a title; no `entity` for a mention without candidates), its `score`
        (the probability of that entity among the mention's candidates when it was resolved: given the words and,
        in global inference, the entities resolved before it; 0 without an entity), and `gold` where known.
        """
        mentions_out = []
        rows, scores = output_dict["predicted_candidates"].tolist(), output_dict["scores"].tolist()
        for meta, row, row_scores in zip(output_dict["metadata"], rows, scores):
            mentions = []
            for m, k, score in zip(meta["mentions"], row, row_scores):
                mention = {key: m[key] for key in ("start", "end", "text") if key in m}
                if k >= 0:
                    mention["entity"] = m["candidates"][k]
                mention["score"] = score if k >= 0 else 0.0
                if m.get("gold") is not None:
                    mention["gold"] = m["gold"]
                mentions.append(mention)
            mentions_out.append(mentions)
        return {"id": [m["id"] for m in output_dict["metadata"]], "mentions": mentions_out}

    def get_metrics(self, reset: bool = False) -> Dict[str, float]:
        metrics = self.accuracy.get_metric(reset)
        if self._linking_seen:
            metrics.update({f"linking_{k}": v for k, v in self.linking.get_metric(reset).items()})
        return metrics


def _load_entity_head(head: EntityPredictionHead, model_name: str) -> None:
    """The checkpoint's `entity_predictions.*` (transformers' `LukeForMaskedLM` names) into `head`."""
    prefix = "entity_predictions."
    weights = {k[len(prefix) :]: v for k, v in read_state_dict(model_name).items() if k.startswith(prefix)}
    if not weights:
        logger.warning(
            "%s has no entity prediction head (not a LukeForMaskedLM checkpoint): it is randomly initialised",
            model_name,
        )
        return
    own = head.state_dict()
    mismatched = shape_mismatches(weights, own)
    missing = [k for k in own if k not in weights]
    if mismatched or missing:
        raise ValueError(f"{model_name}: the entity prediction head does not fit: {mismatched or missing}")
    head.load_state_dict({k: weights[k] for k in own})
