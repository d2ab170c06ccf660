from typing import Any, Dict, List, Optional

import torch
import torch.nn.functional as F
from allennlp.data import Vocabulary
from allennlp.models import Model
from allennlp.modules.token_embedders import TokenEmbedder
from allennlp.nn import InitializerApplicator

from luke_allennlp.modeling.inputs import LukeFields
from luke_allennlp.models.mentions import MentionClassifier
from luke_allennlp.training.metrics import MultiLabelF1


@Model.register("luke_entity_typing")
class LukeEntityTyping(MentionClassifier):
    """
    Entity typing (paper §4.1): a `[MASK]` entity over the mention; a linear layer over its final state gives
    one logit per type; binary cross-entropy averaged over types; a type is predicted where its logit > 0.
    Metric: loose micro precision, recall and F1.

    # Parameters

    vocab : `Vocabulary`
    embedder : `TokenEmbedder`
        A `luke` embedder (`entity_vocab: "task"`), or a word-only embedder with `feature: "words"`.
    feature : `str`, optional (default = `"entity"`)
        `"entity"` (the paper's), `"words"` (the mention's first and last subword: the RoBERTa baseline) or `"all"`.
    dropout : `float`, optional (default = `0.1`)
    label_namespace : `str`, optional (default = `"labels"`)
    initializer : `InitializerApplicator`, optional
    """

    default_predictor = "luke_entity_typing"

    def __init__(
        self,
        vocab: Vocabulary,
        embedder: TokenEmbedder,
        feature: str = "entity",
        dropout: float = 0.1,
        label_namespace: str = "labels",
        initializer: InitializerApplicator = InitializerApplicator(),
        **kwargs,
    ) -> None:
        super().__init__(vocab, embedder, **kwargs)
        self.build_head(feature, dropout, label_namespace, MultiLabelF1())
        initializer(self)

    def forward(  # type: ignore[override]
        self,
        word_ids: torch.LongTensor,
        word_attention_mask: torch.BoolTensor,
        entity_ids: torch.LongTensor,
        entity_start_positions: torch.LongTensor,
        entity_end_positions: torch.LongTensor,
        metadata: List[Dict[str, Any]],
        labels: Optional[torch.LongTensor] = None,
    ) -> Dict[str, Any]:
        """
        # Parameters

        word_ids, word_attention_mask : (batch, words)
        entity_ids, entity_start_positions, entity_end_positions : (batch, 1): the mention's `[MASK]` entity
        labels : (batch, types), multi-hot
        """
        fields = LukeFields.of(locals())
        logits, loss = self.classify(fields, labels)  # (batch, types)
        output: Dict[str, Any] = {"logits": logits, "id": [m["id"] for m in metadata]}
        if labels is not None:
            output["loss"] = loss
            self.metric(logits > 0, labels)
        return output

    def classifier_input(self, features: torch.Tensor) -> torch.Tensor:
        return features[:, 0]  # (batch, width): the one mention

    def loss(self, logits: torch.Tensor, gold: torch.Tensor) -> torch.Tensor:
        return F.binary_cross_entropy_with_logits(logits, gold.float())

    def make_output_human_readable(self, output_dict: Dict[str, Any]) -> Dict[str, Any]:
        """Per example: `labels` (types whose logit > 0) and `probabilities` of every type."""
        names = [self.vocab.get_token_from_index(i, self.label_namespace) for i in range(self.classifier.out_features)]
        probabilities = torch.sigmoid(output_dict["logits"].detach().float()).cpu()
        output_dict["probabilities"] = [dict(zip(names, row.tolist())) for row in probabilities]
        output_dict["labels"] = [[n for n, p in zip(names, row.tolist()) if p > 0.5] for row in probabilities]
        return {key: output_dict[key] for key in ("id", "labels", "probabilities")}
