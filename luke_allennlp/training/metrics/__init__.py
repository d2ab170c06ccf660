from luke_allennlp.training.metrics.span_f1 import SpanF1

__all__ = ["SpanF1"]
