from luke_allennlp.training.metrics.multilabel_f1 import MultiLabelF1
from luke_allennlp.training.metrics.relation_f1 import RelationF1
from luke_allennlp.training.metrics.span_f1 import SpanF1

__all__ = ["MultiLabelF1", "RelationF1", "SpanF1"]
