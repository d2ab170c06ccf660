from luke_allennlp.predictors.luke_entity_typing import LukeEntityTypingPredictor
from luke_allennlp.predictors.luke_relation_classifier import LukeRelationClassifierPredictor
from luke_allennlp.predictors.luke_span_ner import LukeSpanNerPredictor

__all__ = ["LukeEntityTypingPredictor", "LukeRelationClassifierPredictor", "LukeSpanNerPredictor"]
