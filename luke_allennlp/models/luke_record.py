from typing import Any, Dict, List, NamedTuple, Optional, Tuple

import torch
import torch.nn.functional as F
from allennlp.data import Vocabulary
from allennlp.models import Model
from allennlp.modules.token_embedders import TokenEmbedder
from allennlp.nn import InitializerApplicator

from luke_allennlp.data.inputs import InputCounts
from luke_allennlp.modeling.inputs import LukeFields
from luke_allennlp.modeling.static_shapes import ENTITIES, Head, Like, Padding
from luke_allennlp.models.luke_task_model import LukeTaskModel
from luke_allennlp.training.metrics import SquadEmAndF1


def queries(metadata: List[Dict[str, Any]]) -> Dict[str, List[Any]]:
    """What the output keeps of each query: `id`, `candidates` (texts), `candidate_spans`, `gold_answers`."""
    return {
        "id": [m["id"] for m in metadata],
        "candidates": [m["candidates"] for m in metadata],
        "candidate_spans": [m["candidate_spans"] for m in metadata],
        "gold_answers": [m["answers"] for m in metadata],
    }


class CandidateSlots(NamedTuple):
    """
    Where each encoded mention's candidate lies among the batch's queries and candidates: `slots` (passes, mentions),
    query x `width` + candidate, and `size` (batch x width) where there is none (the placeholder, padding); `width` the
    most candidates of a query. Computed on the device, without making the host wait.
    """

    slots: torch.Tensor  # (passes, mentions)
    batch: int
    width: int

    @classmethod
    def of(cls, query: torch.Tensor, candidates: torch.Tensor, metadata: List[Dict[str, Any]]) -> "CandidateSlots":
        """`query` (passes,): each pass's query; `candidates` (passes, mentions): each mention's candidate, -1 for
        none."""
        batch, width = len(metadata), max(1, max(len(m["candidates"]) for m in metadata))
        slots = (query[:, None] * width + candidates).masked_fill(candidates < 0, batch * width)
        return cls(slots, batch, width)

    @property
    def size(self) -> int:
        return self.batch * self.width

    def scores(self, logits: torch.Tensor) -> torch.Tensor:
        """(batch, width) each candidate's score, that of its best mention over all windows of its query (`logits`:
        (passes, mentions)); -inf where it has none. (No boolean-mask indexing: no host wait.)"""
        scores = logits.new_full((self.size + 1,), float("-inf"))
        scores = scores.scatter_reduce(0, self.slots.flatten(), logits.flatten(), reduce="amax")
        return scores[:-1].view(self.batch, self.width)

    def groups(self, labels: Optional[torch.Tensor]) -> Tuple[torch.Tensor, Optional[torch.Tensor]]:
        """The head's tensors (passes, mentions): each mention's group, the index (passes x mentions) of its
        candidate's first mention, -1 where it has none; and with `labels` (batch, candidates, -1 padding) the
        candidate's label at that first mention, -1 elsewhere."""
        first = torch.arange(self.slots.numel(), device=self.slots.device).view(self.slots.shape)
        by_slot = first.new_full((self.size + 1,), self.slots.numel())
        by_slot = by_slot.scatter_reduce(0, self.slots.flatten(), first.flatten(), reduce="amin")
        group = by_slot[self.slots].masked_fill(self.slots == self.size, -1)
        if labels is None:
            return group, None
        labels = F.pad(labels, (0, self.width - labels.size(1)), value=-1)[:, : self.width]
        gold = torch.cat([labels.flatten(), labels.new_full((1,), -1)])[self.slots]
        return group, gold.masked_fill(group != first, -1)


@Model.register("luke_record")
class LukeRecord(LukeTaskModel):
    """
    Cloze-style QA on ReCoRD (paper §4.4): which passage entity fills the query's `@placeholder`.

    The placeholder and every candidate mention are `[MASK]` entities (from `luke_record`). A mention's score
    is a linear layer over the concatenation of the placeholder's and the mention's final entity states; a
    candidate's score is that of its best mention in any window of the query. Training is binary
    cross-entropy averaged over the candidates (those with a mention in some window; the gradient reaches
    each candidate's best mention), and the prediction is the best candidate. (The original LUKE code
    averages the loss over mentions instead, so a candidate named five times weighs five times as much.) Windows without any mention are not
    encoded. Metric: exact match and F1 of the predicted text against the gold answers, as the official
    ReCoRD evaluation computes them (its normalisation and token F1 are SQuAD v1.1's; a query without a
    prediction scores 0), as fractions.

    # Parameters

    vocab : `Vocabulary`
    embedder : `TokenEmbedder`
        A `luke` embedder with `entity_vocab: "task"`.
    dropout : `float`, optional (default = `0.1`)
    initializer : `InitializerApplicator`, optional
    """

    default_predictor = "luke_record"

    def __init__(
        self,
        vocab: Vocabulary,
        embedder: TokenEmbedder,
        dropout: float = 0.1,
        initializer: InitializerApplicator = InitializerApplicator(),
        **kwargs,
    ) -> None:
        super().__init__(vocab, embedder, **kwargs)
        self.metric = SquadEmAndF1()
        self.require_entity_states("luke_record")
        self.dropout = torch.nn.Dropout(dropout)
        self.scorer = torch.nn.Linear(2 * embedder.get_output_dim(), 1)
        initializer(self)

    def forward(  # type: ignore[override]
        self,
        word_ids: torch.LongTensor,
        word_attention_mask: torch.BoolTensor,
        word_type_ids: torch.LongTensor,
        entity_ids: torch.LongTensor,
        entity_attention_mask: torch.BoolTensor,
        entity_type_ids: torch.LongTensor,
        entity_start_positions: torch.LongTensor,
        entity_end_positions: torch.LongTensor,
        entity_candidates: torch.LongTensor,
        metadata: List[Dict[str, Any]],
        labels: Optional[torch.LongTensor] = None,
    ) -> Dict[str, Any]:
        """
        # Parameters

        word_ids, word_attention_mask, word_type_ids : (batch, windows, words)
        entity_ids, entity_attention_mask, entity_type_ids, entity_start_positions, entity_end_positions :
            (batch, windows, entities): the placeholder first, then the mentions inside the window; start and
            end are the input positions of each one's first and last subword.
        entity_candidates : (batch, windows, entities), the candidate of each mention, -1 for the placeholder and padding
        labels : (batch, candidates), 1 for a correct candidate, 0 otherwise, -1 padding
        """
        # One encoder pass per window that holds at least one mention; how many, and the longest mention, the reader
        # counted on the host.
        counts = InputCounts.of(metadata)
        passes = self.nonempty_rows(entity_attention_mask[:, :, 1:], sum(c.passes for c in counts))
        slots = CandidateSlots.of(passes[0], self.select(entity_candidates, passes)[:, 1:], metadata)
        if len(passes[0]):  # (a host value where the reader counted the windows)
            logits, loss = self.encode_with_head(
                LukeFields.of(locals()),
                self.head,
                *slots.groups(labels),
                passes=passes,
                longest_mention=max(c.longest_mention for c in counts),
            )  # (passes, mentions)
        else:  # no mention in the batch: nothing to learn, but the trainer needs a loss with a graph
            logits, loss = self.scorer.weight.new_zeros(slots.slots.shape), self.scorer.weight.sum() * 0.0
        output: Dict[str, Any] = {"candidate_scores": slots.scores(logits).detach(), **queries(metadata)}
        if labels is not None:
            output["loss"] = loss
            self.defer_metric(output)
        return output

    @property
    def head(self) -> Head:
        """`score` on each pass's mentions (their candidate's group and gold label: padded along the entities with
        -1, which the loss ignores), its logits cut to the mentions."""
        return Head(self.score, (Padding(ENTITIES, -1), Padding(ENTITIES, -1)), (Like(0), None))

    def score(
        self,
        word_states: torch.Tensor,
        entity_states: Optional[torch.Tensor],
        group: torch.Tensor,
        gold: Optional[torch.Tensor],
    ) -> Tuple[torch.Tensor, Optional[torch.Tensor]]:
        """The head: each mention's logit (passes, mentions) from the placeholder's and its entity state, and with
        `gold` the loss, the mean binary cross-entropy of the candidates, each scored by its best mention. `group`
        (passes, mentions): the candidate's group, an index of the mentions unique to it (-1: no candidate); `gold`:
        the candidate's label at one mention of each group, -1 elsewhere (`CandidateSlots.groups`)."""
        assert entity_states is not None
        placeholder, mentions = entity_states[:, :1], entity_states[:, 1:]  # (passes, 1 and mentions, hidden)
        features = torch.cat([placeholder.expand_as(mentions), mentions], dim=-1)  # (passes, mentions, 2 * hidden)
        logits = self.scorer(self.dropout(features)).squeeze(-1)  # (passes, mentions)
        if gold is None:
            return logits, None
        index = group.masked_fill(group < 0, logits.numel())  # (no candidate: one extra slot, dropped)
        best = logits.new_full((logits.numel() + 1,), float("-inf"))
        best = best.scatter_reduce(0, index.flatten(), logits.flatten(), reduce="amax")[index]  # (passes, mentions)
        scored = gold >= 0  # one mention of each candidate with a mention in some window
        losses = F.binary_cross_entropy_with_logits(
            best.masked_fill(~scored, 0.0), gold.clamp(min=0).float(), reduction="none"
        )
        return logits, (losses * scored).sum() / scored.sum().clamp(min=1)

    def defer_metric(self, output: Dict[str, Any]) -> None:
        """The metric of the batch's best candidates, read from the device when the metric is (a training step does
        not wait for the scores)."""
        held, candidates, golds = output["candidate_scores"], output["candidates"], output["gold_answers"]
        self.metric.defer(lambda: self.metric([self._best(row, c)[0] for row, c in zip(held.cpu(), candidates)], golds))

    @staticmethod
    def _best(scores: torch.Tensor, candidates: List[str]) -> Tuple[str, Optional[int]]:
        """(text, candidate index) of the best-scoring candidate; ("", None) if no candidate was scored."""
        if not candidates or not torch.isfinite(scores[: len(candidates)]).any():
            return "", None
        best = int(scores[: len(candidates)].argmax())
        return candidates[best], best

    def make_output_human_readable(self, output_dict: Dict[str, Any]) -> Dict[str, Any]:
        """
        Per query: `answer` (the best candidate's text, "" if no candidate mention fitted in a window),
        `score` (its probability of being correct), `answer_spans` (its mentions, character spans with inclusive
        ends), `candidates` (`{"text", "score"}` by descending score; `score` is None for a candidate none of
        whose mentions fitted in a window) and `gold_answers` (None without gold).
        """
        result: Dict[str, List] = {key: [] for key in ("answer", "score", "answer_spans", "candidates")}
        for scores, candidates, spans in zip(
            output_dict["candidate_scores"], output_dict["candidates"], output_dict["candidate_spans"]
        ):
            probabilities = torch.sigmoid(scores[: len(candidates)].detach().float()).cpu()
            finite = torch.isfinite(scores[: len(candidates)].detach()).cpu()
            answer, best = self._best(scores, candidates)
            result["answer"].append(answer)
            result["score"].append(float(probabilities[best]) if best is not None else None)
            result["answer_spans"].append([list(span) for span in spans[best]] if best is not None else [])
            ranked = sorted(range(len(candidates)), key=lambda i: -float(probabilities[i]) if finite[i] else 1.0)
            result["candidates"].append(
                [{"text": candidates[i], "score": float(probabilities[i]) if finite[i] else None} for i in ranked]
            )
        return {"id": output_dict["id"], **result, "gold_answers": output_dict["gold_answers"]}
