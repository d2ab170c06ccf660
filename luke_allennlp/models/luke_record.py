from typing import Any, Dict, List, Optional, Tuple

import torch
import torch.nn.functional as F
from allennlp.data import Vocabulary
from allennlp.models import Model
from allennlp.modules.token_embedders import TokenEmbedder
from allennlp.nn import InitializerApplicator

from luke_allennlp.data.inputs import InputCounts
from luke_allennlp.modeling.inputs import LukeFields
from luke_allennlp.models.luke_task_model import LukeTaskModel
from luke_allennlp.training.metrics import SquadEmAndF1


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
        batch = word_ids.size(0)
        num_candidates = max(1, max(len(m["candidates"]) for m in metadata))
        # One encoder pass per window that holds at least one mention; how many, and the longest mention, the reader
        # counted on the host.
        counts = InputCounts.of(metadata)
        passes = self.nonempty_rows(entity_attention_mask[:, :, 1:], sum(c.passes for c in counts))
        query = passes[0]  # (passes,)
        candidates = self.select(entity_candidates, passes)[:, 1:]  # (passes, mentions)
        if len(query):  # (a host value where the reader counted the windows)
            fields = LukeFields.of(locals())
            states = self.encode(
                fields, passes, longest_mention=max(c.longest_mention for c in counts)
            ).entities  # (passes, entities, hidden)
            placeholder, mentions = states[:, :1], states[:, 1:]
            features = torch.cat([placeholder.expand_as(mentions), mentions], dim=-1)  # (passes, mentions, 2 * hidden)
            logits = self.scorer(self.dropout(features)).squeeze(-1)  # (passes, mentions)
        else:
            logits = self.scorer.weight.new_zeros(0, candidates.size(1))

        # A candidate's score: its best mention over all windows of its query; -inf where it has none. Padding and
        # the placeholder (candidate -1) go to one extra slot, dropped (no boolean-mask indexing: no host wait).
        slots = query[:, None] * num_candidates + candidates
        slots = slots.masked_fill(candidates < 0, batch * num_candidates)  # (passes, mentions)
        scores = logits.new_full((batch * num_candidates + 1,), float("-inf"))
        scores = scores.scatter_reduce(0, slots.flatten(), logits.flatten(), reduce="amax")
        scores = scores[:-1].view(batch, num_candidates)  # (batch, candidates)

        output: Dict[str, Any] = {
            "candidate_scores": scores.detach(),
            "id": [m["id"] for m in metadata],
            "candidates": [m["candidates"] for m in metadata],
            "candidate_spans": [m["candidate_spans"] for m in metadata],
            "gold_answers": [m["answers"] for m in metadata],
        }
        if labels is not None:
            labels = F.pad(labels, (0, num_candidates - labels.size(1)), value=-1)[:, :num_candidates]
            # The mean over the candidates with a mention in some window (0, and no gradient, where there is none).
            scored = torch.isfinite(scores) & (labels >= 0)
            losses = F.binary_cross_entropy_with_logits(
                scores.masked_fill(~scored, 0.0), labels.clamp(min=0).float(), reduction="none"
            )
            output["loss"] = (losses * scored).sum() / scored.sum().clamp(min=1)
            if not len(query):  # no mention in the batch: nothing to learn, but the trainer needs a loss with a graph
                output["loss"] = output["loss"] + self.scorer.weight.sum() * 0.0
            held, golds = output["candidate_scores"], [m["answers"] for m in metadata]
            # Read from the device when the metric is (a training step does not wait for the scores).
            self.metric.defer(
                lambda: self.metric(
                    [self._best(row, m["candidates"])[0] for row, m in zip(held.cpu(), metadata)], golds
                )
            )
        return output

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
