from luke_allennlp.training.metrics.accuracy import Accuracy
from luke_allennlp.training.metrics.correlation import Correlation
from luke_allennlp.training.metrics.entity_disambiguation_accuracy import EntityDisambiguationAccuracy
from luke_allennlp.training.metrics.entity_linking_f1 import EntityLinkingF1
from luke_allennlp.training.metrics.masked_prediction import MaskedPrediction
from luke_allennlp.training.metrics.multilabel_f1 import MultiLabelF1
from luke_allennlp.training.metrics.relation_f1 import RelationF1
from luke_allennlp.training.metrics.span_f1 import SpanF1
from luke_allennlp.training.metrics.squad_em_and_f1 import SquadEmAndF1

__all__ = [
    "Accuracy",
    "Correlation",
    "EntityDisambiguationAccuracy",
    "EntityLinkingF1",
    "MaskedPrediction",
    "MultiLabelF1",
    "RelationF1",
    "SpanF1",
    "SquadEmAndF1",
]
