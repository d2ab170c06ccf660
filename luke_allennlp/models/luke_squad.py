from typing import Any, Dict, List, Optional, Tuple

import numpy as np
import torch
import torch.nn.functional as F
from allennlp.data import Vocabulary
from allennlp.models import Model
from allennlp.modules.token_embedders import TokenEmbedder
from allennlp.nn import InitializerApplicator

from luke_allennlp.data.inputs import InputCounts
from luke_allennlp.modeling.inputs import LukeFields
from luke_allennlp.modeling.static_shapes import ROWS, WORDS, Head, Padding
from luke_allennlp.models.luke_task_model import LukeTaskModel
from luke_allennlp.training.metrics.squad_em_and_f1 import SquadEmAndF1, exact_match_score, f1_score, max_over_golds


def best_span(
    start_logits: torch.Tensor,
    end_logits: torch.Tensor,
    passage_subwords: torch.Tensor,
    max_context: torch.Tensor,
    top_k: int = 20,
    max_answer_length: int = 30,
) -> Optional[Tuple[int, int, float]]:
    """
    The best answer of one question across its windows, as BERT's and LUKE's SQuAD code decode: in each window
    the `top_k` start and `top_k` end positions, pairs with end >= start and at most `max_answer_length`
    subwords, both inside the passage, the start in the window where its subword has the most context;
    score = start logit + end logit. Returns (first passage subword, last passage subword, score), or None
    when no window has a passage subword.

    All inputs are (windows, words); `passage_subwords` is the passage subword at each input position (-1
    outside the passage), `max_context` whether that subword has the most context in this window. If no
    top-k pair is valid (rare), the best valid pair over all positions is taken.
    """
    best: Optional[Tuple[int, int, float]] = None
    in_passage = passage_subwords >= 0
    for exhaustive in (False, True):
        for window in range(start_logits.size(0)):
            starts = start_logits[window].masked_fill(~max_context[window], -np.inf)
            ends = end_logits[window].masked_fill(~in_passage[window], -np.inf)
            num_starts, num_ends = int(max_context[window].sum()), int(in_passage[window].sum())
            if not num_starts:
                continue
            k_starts = num_starts if exhaustive else min(top_k, num_starts)
            k_ends = num_ends if exhaustive else min(top_k, num_ends)
            start_scores, start_at = starts.topk(k_starts)  # (k_starts,)
            end_scores, end_at = ends.topk(k_ends)  # (k_ends,)
            length = end_at[None, :] - start_at[:, None] + 1  # (k_starts, k_ends)
            scores = (start_scores[:, None] + end_scores[None, :]).masked_fill(
                (length < 1) | (length > max_answer_length), -np.inf
            )
            flat = int(scores.argmax())
            score = float(scores.view(-1)[flat])
            if score > -np.inf and (best is None or score > best[2]):
                start, end = int(start_at[flat // k_ends]), int(end_at[flat % k_ends])
                best = (int(passage_subwords[window, start]), int(passage_subwords[window, end]), score)
        if best is not None:
            break
    return best


@Model.register("luke_squad")
class LukeSquad(LukeTaskModel):
    """
    Extractive QA (SQuAD 1.1; paper §4.5): a linear layer over the word states gives each position a start and
    an end logit; the loss is the mean of the start and end cross-entropies over the positions of each window.
    A window without the answer has its CLS position as target (see `luke_squad` reader).

    Instances come from `luke_squad`: one question each, its windows stacked; each window is one encoder pass.
    The answer is decoded across all windows of the question (`best_span`) and returned as the passage text
    between its subwords' character offsets.

    # Parameters

    vocab : `Vocabulary`
    embedder : `TokenEmbedder`
        A `luke` embedder (with entity inputs when the reader has a mention dictionary; `entity_vocab:
        "checkpoint"` keeps the pretrained entity table their ids index), or any word embedder such as
        `pretrained_transformer` (RoBERTa, BERT, XLNet; then the reader must not produce entity inputs).
    top_k : `int`, optional (default = `20`)
        Start and end positions considered per window.
    max_answer_length : `int`, optional (default = `30`)
        Longest answer, in subwords.
    freeze_entity_embeddings : `bool`, optional (default = `True`)
        Keep a `luke` embedder's entity table fixed, as the original SQuAD fine-tuning does (the entity
        inputs are real Wikipedia entities; the table is large and most rows never occur in SQuAD).
    answer_scoring : `str`, optional (default = `"squad"`)
        How EM and F1 compare answers: `"squad"` (the official SQuAD v1.1 script), `"jglue"` (JGLUE's JSQuAD
        scorer: characters for F1, since Japanese has no spaces) or `"mlqa"` (MLQA's official script, whose
        normalisation depends on `answer_language`); see `luke_allennlp.training.metrics.squad_em_and_f1`. Both are
        read when an archive is loaded, so `allennlp evaluate ... -o '{"model.answer_scoring": "mlqa",
        "model.answer_language": "de"}'` rescores a model trained with SQuAD scoring.
    answer_language : `str`, optional (default = `None`)
        The language of the answers (the context's), for `"mlqa"` scoring only: one of MLQA's `ar`, `de`, `en`,
        `es`, `hi`, `vi`, `zh`.
    initializer : `InitializerApplicator`, optional
    """

    default_predictor = "luke_squad"

    def __init__(
        self,
        vocab: Vocabulary,
        embedder: TokenEmbedder,
        top_k: int = 20,
        max_answer_length: int = 30,
        freeze_entity_embeddings: bool = True,
        answer_scoring: str = "squad",
        answer_language: Optional[str] = None,
        initializer: InitializerApplicator = InitializerApplicator(),
        **kwargs,
    ) -> None:
        super().__init__(vocab, embedder, **kwargs)
        self.set_answer_scoring(answer_scoring, answer_language)
        self.top_k = top_k
        self.max_answer_length = max_answer_length
        if freeze_entity_embeddings and self.has_entity_states:
            embedder.luke.entity_embeddings.entity_embeddings.weight.requires_grad_(False)
        self.qa_outputs = torch.nn.Linear(embedder.get_output_dim(), 2)
        initializer(self)

    def set_answer_scoring(self, scoring: str, language: Optional[str] = None) -> None:
        """Scores the answers from now on with `scoring` (and `language`, for MLQA's); the metric starts afresh."""
        self.metric = SquadEmAndF1(scoring, language)
        self.answer_scoring, self.answer_language = scoring, language

    def forward(  # type: ignore[override]
        self,
        word_ids: torch.LongTensor,
        word_attention_mask: torch.BoolTensor,
        word_type_ids: torch.LongTensor,
        passage_subwords: torch.LongTensor,
        max_context: torch.BoolTensor,
        metadata: List[Dict[str, Any]],
        start_positions: Optional[torch.LongTensor] = None,
        end_positions: Optional[torch.LongTensor] = None,
        entity_ids: Optional[torch.LongTensor] = None,
        entity_attention_mask: Optional[torch.BoolTensor] = None,
        entity_type_ids: Optional[torch.LongTensor] = None,
        entity_start_positions: Optional[torch.LongTensor] = None,
        entity_end_positions: Optional[torch.LongTensor] = None,
    ) -> Dict[str, Any]:
        """
        # Parameters

        word_ids, word_attention_mask, word_type_ids, passage_subwords, max_context : (batch, windows, words)
        start_positions, end_positions : (batch, windows), the gold answer's input positions in each window
            (its CLS position where the window does not hold the answer), -1 for padding windows
        entity_* : (batch, windows, entities), entity inputs over the words' positions (optional)
        """
        # One encoder pass per real (question, window).
        counts = InputCounts.of(metadata)
        passes = self.nonempty_rows(word_attention_mask, sum(c.passes for c in counts))
        gold = [
            None if positions is None else positions[passes] for positions in (start_positions, end_positions)
        ]  # (passes,) each
        start_logits, end_logits, loss = self.encode_with_head(
            LukeFields.of(locals()),
            self.head,
            self.select(word_attention_mask, passes),
            *gold,
            passes=passes,
            longest_mention=max(c.longest_mention for c in counts),
        )  # (passes, words) each
        output: Dict[str, Any] = {}
        for name, values in (("start_logits", start_logits), ("end_logits", end_logits)):
            full = values.new_full(word_ids.shape, -np.inf)
            full[passes] = values
            output[name] = full  # (batch, windows, words), -inf at padding
        output.update(passage_subwords=passage_subwords, max_context=max_context, metadata=metadata)
        if loss is not None:
            output["loss"] = loss
        if all(meta["answers"] for meta in metadata):
            golds = [meta["answers"] for meta in metadata]
            if self.training:  # decoded on the host when the metric is read: the step does not wait for the logits
                held = {**output, **{k: output[k].detach() for k in ("start_logits", "end_logits")}}
                self.metric.defer(lambda: self.metric([p["answer"] for p in self.decode(held)], golds))
            else:
                output["predictions"] = self.decode(output)
                self.metric([p["answer"] for p in output["predictions"]], golds)
        return output

    @property
    def head(self) -> Head:
        """`score` on each pass's word mask (padded with False: -inf logits) and gold positions, its logits cut to the
        words."""
        return Head(self.score, (Padding(WORDS, False), Padding(ROWS, 0), Padding(ROWS, 0)), (WORDS, WORDS, None))

    def score(
        self,
        word_states: torch.Tensor,
        entity_states: Optional[torch.Tensor],
        mask: torch.Tensor,
        start_positions: Optional[torch.Tensor],
        end_positions: Optional[torch.Tensor],
    ) -> Tuple[torch.Tensor, torch.Tensor, Optional[torch.Tensor]]:
        """The head: start and end logits (passes, words), the lowest fp32 value at padding, and with the gold
        positions (passes,) the loss, the mean of the start and end cross-entropies."""
        # In fp32: under bf16/fp16 autocast the head's output is half precision while the states are fp32, and fp32's
        # lowest value does not fit in half precision.
        logits = self.qa_outputs(word_states).float().masked_fill(~mask[..., None], torch.finfo(torch.float32).min)
        start_logits, end_logits = logits.unbind(-1)  # (passes, words)
        if start_positions is None or end_positions is None:
            return start_logits, end_logits, None
        loss = (F.cross_entropy(start_logits, start_positions) + F.cross_entropy(end_logits, end_positions)) / 2
        return start_logits, end_logits, loss

    def decode(self, output_dict: Dict[str, Any]) -> List[Dict[str, Any]]:
        """Per question: `id`, `answer` (the passage text of the best span), its character `start` and `end`
        (exclusive) in the passage, and `score` (start + end logit)."""
        tensors = [
            output_dict[k].detach().cpu() for k in ("start_logits", "end_logits", "passage_subwords", "max_context")
        ]
        predictions = []
        for meta, *question in zip(output_dict["metadata"], *tensors):
            span = best_span(*question, top_k=self.top_k, max_answer_length=self.max_answer_length)
            prediction: Dict[str, Any] = {"id": meta["id"], "answer": "", "start": 0, "end": 0, "score": None}
            if span is not None:
                first, last, score = span
                start, end = int(meta["offsets"][first, 0]), int(meta["offsets"][last, 1])
                text = meta["context"][start:end]
                start, end = (
                    start + len(text) - len(text.lstrip()),
                    start + len(text.rstrip()),
                )  # offsets may hold a space
                prediction.update(answer=meta["context"][start:end], start=start, end=end, score=score)
            predictions.append(prediction)
        return predictions

    def make_output_human_readable(self, output_dict: Dict[str, Any]) -> Dict[str, Any]:
        """Per question: `id`, `answer`, `start`, `end`, `score`, and with gold answers `gold_answers`, `em` and `f1`."""
        predictions = output_dict.get("predictions") or self.decode(output_dict)
        result: Dict[str, List[Any]] = {
            key: [p[key] for p in predictions] for key in ("id", "answer", "start", "end", "score")
        }
        golds = [meta["answers"] for meta in output_dict["metadata"]]
        if all(golds):
            result["gold_answers"] = golds
            scoring = (self.answer_scoring, self.answer_language)
            result["em"] = [
                max_over_golds(exact_match_score, p["answer"], g, *scoring) for p, g in zip(predictions, golds)
            ]
            result["f1"] = [max_over_golds(f1_score, p["answer"], g, *scoring) for p, g in zip(predictions, golds)]
        return result
