from luke_allennlp.predictors.luke_entity_typing import LukeEntityTypingPredictor
from luke_allennlp.predictors.luke_span_ner import LukeSpanNerPredictor

__all__ = ["LukeEntityTypingPredictor", "LukeSpanNerPredictor"]
