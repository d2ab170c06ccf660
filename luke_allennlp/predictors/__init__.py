from luke_allennlp.predictors.luke_span_ner import LukeSpanNerPredictor

__all__ = ["LukeSpanNerPredictor"]
