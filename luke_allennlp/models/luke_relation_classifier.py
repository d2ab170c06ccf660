from typing import Any, Dict, List, Optional

import torch
import torch.nn.functional as F
from allennlp.data import Vocabulary
from allennlp.models import Model
from allennlp.modules.token_embedders import TokenEmbedder
from allennlp.nn import InitializerApplicator

from luke_allennlp.modeling.inputs import LukeFields
from luke_allennlp.models.mentions import MentionClassifier
from luke_allennlp.training.metrics import RelationF1


@Model.register("luke_relation_classifier")
class LukeRelationClassifier(MentionClassifier):
    """
    Relation classification (paper §4.2): the concatenated final states of the `[HEAD]` and `[TAIL]` entities,
    a linear layer over the relations, cross-entropy. Metrics: micro P/R/F1 without the negative class, and
    SemEval's official macro-F1.

    # Parameters

    vocab : `Vocabulary`
    embedder : `TokenEmbedder`
        A `luke` embedder (`entity_vocab: "task"`), or a word-only embedder with `feature: "words"`.
    feature : `str`, optional (default = `"entity"`)
        Per mention: `"entity"` (the paper's), `"words"` (first and last subword: the RoBERTa baseline) or `"all"`.
    dropout : `float`, optional (default = `0.1`)
    label_namespace : `str`, optional (default = `"labels"`)
    negative_labels : `List[str]`, optional (default = `["no_relation", "Other"]`)
    bias : `bool`, optional (default = `True`)
        Whether the linear layer has a bias. The original LUKE and transformers' `LukeForEntityPairClassification`
        have none (the configs set `false`, so that `allennlp export-luke` can write the model exactly).
    initializer : `InitializerApplicator`, optional
    """

    default_predictor = "luke_relation_classifier"

    def __init__(
        self,
        vocab: Vocabulary,
        embedder: TokenEmbedder,
        feature: str = "entity",
        dropout: float = 0.1,
        label_namespace: str = "labels",
        negative_labels: List[str] = ["no_relation", "Other"],  # noqa: B006  (a config default, never mutated)
        bias: bool = True,
        initializer: InitializerApplicator = InitializerApplicator(),
        **kwargs,
    ) -> None:
        super().__init__(vocab, embedder, **kwargs)
        self.build_head(feature, dropout, label_namespace, RelationF1(negative_labels), mentions=2, bias=bias)
        initializer(self)

    def forward(  # type: ignore[override]
        self,
        word_ids: torch.LongTensor,
        word_attention_mask: torch.BoolTensor,
        entity_ids: torch.LongTensor,
        entity_start_positions: torch.LongTensor,
        entity_end_positions: torch.LongTensor,
        metadata: List[Dict[str, Any]],
        label: Optional[torch.LongTensor] = None,
    ) -> Dict[str, Any]:
        """
        # Parameters

        word_ids, word_attention_mask : (batch, words)
        entity_ids, entity_start_positions, entity_end_positions : (batch, 2): `[HEAD]`, `[TAIL]`
        label : (batch,)
        """
        fields = LukeFields.of(locals())
        logits, loss = self.classify(fields, label)  # (batch, relations)
        output: Dict[str, Any] = {"logits": logits, "id": [m["id"] for m in metadata]}
        if label is not None:
            output["loss"] = loss
            names, predicted = self._names(), logits.detach().argmax(-1)
            # Read from the device when the metric is (a training step does not wait for it).
            self.metric.defer(
                lambda: self.metric([names[i] for i in predicted.tolist()], [names[i] for i in label.tolist()])
            )
        return output

    def classifier_input(self, features: torch.Tensor) -> torch.Tensor:
        return features.flatten(1)  # (batch, 2 * width): head and tail

    def loss(self, logits: torch.Tensor, gold: torch.Tensor) -> torch.Tensor:
        return F.cross_entropy(logits, gold)

    def _names(self) -> List[str]:
        return [self.vocab.get_token_from_index(i, self.label_namespace) for i in range(self.classifier.out_features)]

    def make_output_human_readable(self, output_dict: Dict[str, Any]) -> Dict[str, Any]:
        """Per example: `label` and the `probabilities` of every relation."""
        names = self._names()
        probabilities = output_dict["logits"].detach().float().softmax(-1).cpu()
        return {
            "id": output_dict["id"],
            "label": [names[i] for i in probabilities.argmax(-1).tolist()],
            "probabilities": [dict(zip(names, row.tolist())) for row in probabilities],
        }
