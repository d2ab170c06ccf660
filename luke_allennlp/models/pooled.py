"""
What transformers' `LukeForSequenceClassification` and `LukeForMultipleChoice` share: the encoder's pooler (tanh of
a dense layer over the first word's state), dropout, and a linear `classifier`, named as there so that the weights
move between the two without change.
"""

from typing import Optional

import torch

from luke_allennlp.modeling.inputs import LukeFields
from luke_allennlp.modeling.static_shapes import ROWS, Head
from luke_allennlp.models.luke_task_model import LukeTaskModel, Passes


class LukePooledHeadModel(LukeTaskModel):
    """
    A `LukeTaskModel` whose head scores each input's pooled state: `dropout` then `classifier` (hidden ->
    `num_outputs`), which a subclass builds with `build_head` (then sets `metric` and calls `initializer`). (The head
    is not an `__init__` argument: allennlp would read it from the subclass's config.)
    """

    def build_head(self, num_outputs: int, dropout: Optional[float] = None) -> None:
        """`dropout` `None`: as transformers' LUKE heads take it, the checkpoint's `classifier_dropout`, else its
        `hidden_dropout_prob`."""
        self.require_entity_states("a pooled sequence head")
        embedder = self.embedder
        config = embedder.luke.config
        if embedder.luke.pooler is None:
            raise ValueError("the luke embedder's encoder has no pooler")
        if dropout is None:
            dropout = getattr(config, "classifier_dropout", None)
            dropout = config.hidden_dropout_prob if dropout is None else dropout
        self.dropout = torch.nn.Dropout(dropout)
        self.classifier = torch.nn.Linear(embedder.get_output_dim(), num_outputs)

    def score(
        self, fields: LukeFields, passes: Optional[Passes] = None, longest_mention: Optional[int] = None
    ) -> torch.Tensor:
        """(rows, num_outputs) float scores of (rows, words) inputs (or the stacked rows `passes` selects), with
        optional entity inputs (rows, entities) over subwords start..end (inclusive): the pooler then reads a first
        word that attended to them too. `longest_mention`: see `encode`."""
        return self.encode_with_head(fields, self.head, passes=passes, longest_mention=longest_mention)

    @property
    def head(self) -> Head:
        """`pooled_scores`, its scores cut to the rows."""
        return Head(self.pooled_scores, outputs=ROWS)

    def pooled_scores(self, word_states: torch.Tensor, entity_states: Optional[torch.Tensor]) -> torch.Tensor:
        """The head: (rows, num_outputs) from the pooler over the first word's state (which was compiled with the
        encoder, where the embedder is)."""
        pooled = self.embedder.luke.pooler(word_states)  # (rows, hidden)
        return self.classifier(self.dropout(pooled)).float()
