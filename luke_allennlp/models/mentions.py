"""
A mention's feature vector, from the word states of its first and last subword and its entity state; and
`MentionClassifier`, the task models whose head classifies such features.
"""

from typing import Any, Optional, Tuple

import torch
from allennlp.training.metrics import Metric

from luke_allennlp.modeling.inputs import LukeFields
from luke_allennlp.modeling.static_shapes import ROWS, Head, Padding
from luke_allennlp.models.luke_task_model import LukeTaskModel

# Mention features: the first and last subword's states ("words"), the entity's state ("entity"), or all three.
FEATURE_WIDTHS = {"all": 3, "words": 2, "entity": 1}


def check_feature(feature: str, model) -> None:
    """`feature` must be one of FEATURE_WIDTHS, and one with entity states needs a model (a `LukeTaskModel`) that
    has them."""
    if feature not in FEATURE_WIDTHS:
        raise ValueError(f"feature must be one of {tuple(FEATURE_WIDTHS)}, not {feature!r}")
    if feature != "words":
        model.require_entity_states(f'feature "{feature}"')


def mention_features(
    word_states: torch.Tensor,
    entity_states: Optional[torch.Tensor],
    starts: torch.Tensor,
    ends: torch.Tensor,
    feature: str,
) -> torch.Tensor:
    """(batch, entities, FEATURE_WIDTHS[feature] * hidden), for the mentions of `starts` and `ends` (batch, entities):
    the first of `entity_states` (batch, entities or more: a compiled step's padding, see `static_shapes.Runner`)."""
    hidden = word_states.size(-1)
    if entity_states is not None:
        entity_states = entity_states[:, : starts.size(1)]
    first = word_states.gather(1, starts[..., None].expand(-1, -1, hidden))
    last = word_states.gather(1, ends[..., None].expand(-1, -1, hidden))
    parts = {"all": [first, last, entity_states], "words": [first, last], "entity": [entity_states]}[feature]
    return torch.cat(parts, dim=-1)


class MentionClassifier(LukeTaskModel):
    """
    A `LukeTaskModel` whose head is `classifier(dropout(...))` over the `mention_features` of mentions marked by
    entities (as `classifier_input` lays them out) and whose loss is `loss`: `score` is that head's function (`head`
    says how its tensors are padded and its outputs cut, where it runs compiled with the encoder), `classify` runs it
    on examples of a fixed number of mentions each. A subclass builds the head with `build_head` (then calls its `initializer`) and
    defines `loss`. (The head is not an `__init__` argument: allennlp would read it from the subclass's config.)
    """

    feature: str
    dropout: torch.nn.Module
    classifier: torch.nn.Linear

    def build_head(
        self,
        feature: str,
        dropout: float,
        label_namespace: str,
        metric: Metric,
        mentions: int = 1,
        bias: bool = True,
    ) -> None:
        """The `metric`, and `classifier` over the `feature` of `mentions` mentions concatenated (1: each mention
        apart) to the labels of `label_namespace`, after `dropout`."""
        self.metric = metric
        check_feature(feature, self)
        self.feature = feature
        self.label_namespace = label_namespace
        self.dropout = torch.nn.Dropout(dropout)
        width = mentions * FEATURE_WIDTHS[feature] * self.embedder.get_output_dim()
        self.classifier = torch.nn.Linear(width, self.vocab.get_vocab_size(label_namespace), bias=bias)

    def classifier_input(self, features: torch.Tensor) -> torch.Tensor:
        """What the classifier reads of the features (rows, mentions, width): all of them, each mention apart."""
        return features

    def loss(self, logits: torch.Tensor, gold: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError

    def score(
        self,
        word_states: torch.Tensor,
        entity_states: Optional[torch.Tensor],
        starts: torch.Tensor,
        ends: torch.Tensor,
        gold: Optional[torch.Tensor],
    ) -> Tuple[torch.Tensor, Optional[torch.Tensor]]:
        """The head: logits from the features of the mentions over subwords starts..ends, and with `gold` the
        loss."""
        features = mention_features(word_states, entity_states, starts, ends, self.feature)
        logits = self.classifier(self.dropout(self.classifier_input(features)))
        return logits, None if gold is None else self.loss(logits, gold)

    @property
    def head(self) -> Head:
        """`score` on rows of a fixed number of mentions (their first and last subwords and gold labels: only the
        batch is padded), its logits cut to the rows."""
        return Head(self.score, (Padding(ROWS, 0),) * 3, (ROWS, None))

    def encode_mentions_with_head(self, fields: LukeFields, *tensors: Optional[torch.Tensor], **encoding: Any) -> Any:
        """`encode_with_head(fields, self.head, *tensors, **encoding)` for the mentions that the entities mark: the
        `luke` embedder encodes them with the words, a word-only embedder the words alone (its head reads the
        mentions' subwords). `score` reads no padding position (the loss ignores padded mentions), so `lengths` may be
        given (see `encode_with_head`)."""
        if not self.has_entity_states:
            fields = fields.words_only()
        return self.encode_with_head(fields, self.head, *tensors, **encoding)

    def classify(
        self,
        fields: LukeFields,
        gold: Optional[torch.Tensor],
    ) -> Tuple[torch.Tensor, Optional[torch.Tensor]]:
        """Logits (batch, ...) and loss (with `gold`, batch first) of (batch, words) inputs with (batch, mentions)
        entities (the same number in every example)."""
        return self.encode_mentions_with_head(fields, fields.entity_start_positions, fields.entity_end_positions, gold)
