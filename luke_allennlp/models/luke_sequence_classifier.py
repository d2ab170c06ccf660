from typing import Any, Dict, List, Optional

import torch
import torch.nn.functional as F
from allennlp.data import Vocabulary
from allennlp.models import Model
from allennlp.modules.token_embedders import TokenEmbedder
from allennlp.nn import InitializerApplicator

from luke_allennlp.modeling.inputs import LukeFields
from luke_allennlp.models.pooled import LukePooledHeadModel
from luke_allennlp.training.metrics.accuracy import Accuracy
from luke_allennlp.training.metrics.correlation import Correlation


@Model.register("luke_sequence_classifier")
class LukeSequenceClassifier(LukePooledHeadModel):
    """
    Sentence and sentence-pair classification or regression (GLUE, JGLUE's MARC-ja, JNLI, JSTS) with the head of
    transformers' `LukeForSequenceClassification`: the encoder's pooler over the first word (`<s>`), dropout, and
    `classifier` (hidden -> labels, or -> 1 score for regression, its `problem_type: "regression"`), so that the
    weights move between the two without change. Loss: cross-entropy, or the mean squared error for regression.
    Metrics: `accuracy`, or `pearson` and `spearman` over the whole split (all processes).

    # Parameters

    vocab : `Vocabulary`
    embedder : `TokenEmbedder`
        The `luke` embedder (its pooler gives the sequence's state).
    regression : `bool`, optional (default = `False`)
        One score per input instead of classes (the reader's `regression` too).
    dropout : `float`, optional (default = `None`)
        `None`: the checkpoint's `classifier_dropout`, else its `hidden_dropout_prob` (transformers' choice).
    label_namespace : `str`, optional (default = `"labels"`)
    initializer : `InitializerApplicator`, optional
    """

    default_predictor = "luke_sequence_classifier"

    def __init__(
        self,
        vocab: Vocabulary,
        embedder: TokenEmbedder,
        regression: bool = False,
        dropout: Optional[float] = None,
        label_namespace: str = "labels",
        initializer: InitializerApplicator = InitializerApplicator(),
        **kwargs,
    ) -> None:
        super().__init__(vocab, embedder, **kwargs)
        self.build_head(1 if regression else vocab.get_vocab_size(label_namespace), dropout)
        self.regression = regression
        self.label_namespace = label_namespace
        self.metric = Correlation() if regression else {"accuracy": Accuracy()}
        initializer(self)

    def forward(  # type: ignore[override]
        self,
        word_ids: torch.LongTensor,
        word_attention_mask: torch.BoolTensor,
        metadata: List[Dict[str, Any]],
        word_type_ids: Optional[torch.LongTensor] = None,
        label: Optional[torch.Tensor] = None,
        entity_ids: Optional[torch.LongTensor] = None,
        entity_attention_mask: Optional[torch.BoolTensor] = None,
        entity_type_ids: Optional[torch.LongTensor] = None,
        entity_start_positions: Optional[torch.LongTensor] = None,
        entity_end_positions: Optional[torch.LongTensor] = None,
    ) -> Dict[str, Any]:
        """
        # Parameters

        word_ids, word_attention_mask, word_type_ids : (batch, words)
        label : (batch,), class indices, or gold scores (float) for regression
        entity_* : (batch, entities), optional entity inputs (the reader's `mention_dictionary`)
        """
        fields = LukeFields.of(locals())
        logits = self.score(fields)  # (batch, labels) or (batch, 1)
        output: Dict[str, Any] = {"logits": logits, "id": [m["id"] for m in metadata]}
        if label is not None:
            if self.regression:
                scores = logits.squeeze(-1)  # (batch,)
                output["loss"] = F.mse_loss(scores, label.float())
                self.metric(scores, label)
            else:
                output["loss"] = F.cross_entropy(logits, label.long())
                self.metric["accuracy"](logits, label)
        return output

    def make_output_human_readable(self, output_dict: Dict[str, Any]) -> Dict[str, Any]:
        """Per input: `id` and `score` (regression), or `label` and the `probabilities` of every label."""
        logits = output_dict["logits"].detach().float().cpu()
        if self.regression:
            return {"id": output_dict["id"], "score": logits[:, 0].tolist()}
        names = [self.vocab.get_token_from_index(i, self.label_namespace) for i in range(logits.size(-1))]
        probabilities = torch.softmax(logits, dim=-1)
        return {
            "id": output_dict["id"],
            "label": [names[i] for i in probabilities.argmax(-1).tolist()],
            "probabilities": [dict(zip(names, row)) for row in probabilities.tolist()],
        }
