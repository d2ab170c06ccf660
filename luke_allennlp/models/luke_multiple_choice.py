from typing import Any, Dict, List, Optional

import torch
import torch.nn.functional as F
from allennlp.data import Vocabulary
from allennlp.models import Model
from allennlp.modules.token_embedders import TokenEmbedder
from allennlp.nn import InitializerApplicator

from luke_allennlp.data.inputs import InputCounts
from luke_allennlp.modeling.inputs import LukeFields
from luke_allennlp.models.pooled import LukePooledHeadModel
from luke_allennlp.training.metrics.accuracy import Accuracy


@Model.register("luke_multiple_choice")
class LukeMultipleChoice(LukePooledHeadModel):
    """
    Multiple-choice QA (JCommonsenseQA, SWAG-style data) with the head of transformers' `LukeForMultipleChoice`:
    each (question, choice) input is encoded on its own; the encoder's pooler over its first word, dropout and
    `classifier` (hidden -> 1) score it; a softmax over the question's choices. Loss: cross-entropy over the
    choices. Metric: `accuracy`. Questions of a batch may have different numbers of choices (the missing ones are
    padding, never chosen).

    # Parameters

    vocab : `Vocabulary`
    embedder : `TokenEmbedder`
        The `luke` embedder (its pooler gives each input's state).
    dropout : `float`, optional (default = `None`)
        `None`: the checkpoint's `classifier_dropout`, else its `hidden_dropout_prob` (transformers' choice).
    initializer : `InitializerApplicator`, optional
    """

    default_predictor = "luke_multiple_choice"

    def __init__(
        self,
        vocab: Vocabulary,
        embedder: TokenEmbedder,
        dropout: Optional[float] = None,
        initializer: InitializerApplicator = InitializerApplicator(),
        **kwargs,
    ) -> None:
        super().__init__(vocab, embedder, **kwargs)
        self.build_head(1, dropout)
        self.metric = {"accuracy": Accuracy()}
        initializer(self)

    def forward(  # type: ignore[override]
        self,
        word_ids: torch.LongTensor,
        word_attention_mask: torch.BoolTensor,
        metadata: List[Dict[str, Any]],
        word_type_ids: Optional[torch.LongTensor] = None,
        label: Optional[torch.LongTensor] = None,
        entity_ids: Optional[torch.LongTensor] = None,
        entity_attention_mask: Optional[torch.BoolTensor] = None,
        entity_type_ids: Optional[torch.LongTensor] = None,
        entity_start_positions: Optional[torch.LongTensor] = None,
        entity_end_positions: Optional[torch.LongTensor] = None,
    ) -> Dict[str, Any]:
        """
        # Parameters

        word_ids, word_attention_mask, word_type_ids : (batch, choices, words)
        label : (batch,), the index of the correct choice
        entity_* : (batch, choices, entities), optional entity inputs (the reader's `mention_dictionary`)
        """
        counts = InputCounts.of(metadata)  # (counted on the host by the reader)
        passes = self.nonempty_rows(word_attention_mask, sum(c.passes for c in counts))  # the real choices
        longest_mention = max(c.longest_mention for c in counts)
        scores = self.score(LukeFields.of(locals()), passes, longest_mention).squeeze(-1)  # (passes,)
        logits = scores.new_full(word_ids.shape[:2], float("-inf"))  # (batch, choices)
        logits[passes] = scores
        output: Dict[str, Any] = {"logits": logits, "id": [m["id"] for m in metadata]}
        if label is not None:
            output["loss"] = F.cross_entropy(logits, label)
            self.metric["accuracy"](logits, label)
        return output

    def make_output_human_readable(self, output_dict: Dict[str, Any]) -> Dict[str, Any]:
        """Per question: `id`, `label` (the chosen choice's index) and `probabilities` (one per choice)."""
        logits = output_dict["logits"].detach().float().cpu()
        probabilities = torch.softmax(logits, dim=-1)
        counts = torch.isfinite(logits).sum(-1).tolist()
        return {
            "id": output_dict["id"],
            "label": probabilities.argmax(-1).tolist(),
            "probabilities": [row[:count] for row, count in zip(probabilities.tolist(), counts)],
        }
