from luke_allennlp.predictors.luke_entity_cloze import EntityCloze, LukeEntityClozePredictor
from luke_allennlp.predictors.luke_entity_typing import LukeEntityTypingPredictor
from luke_allennlp.predictors.luke_multiple_choice import LukeMultipleChoicePredictor
from luke_allennlp.predictors.luke_predictor import LukePredictor
from luke_allennlp.predictors.luke_record import LukeRecordPredictor
from luke_allennlp.predictors.luke_relation_classifier import LukeRelationClassifierPredictor
from luke_allennlp.predictors.luke_sequence_classifier import LukeSequenceClassifierPredictor
from luke_allennlp.predictors.luke_span_ner import LukeSpanNerPredictor
from luke_allennlp.predictors.luke_squad import LukeSquadPredictor

__all__ = [
    "EntityCloze",
    "LukeEntityClozePredictor",
    "LukeEntityTypingPredictor",
    "LukePredictor",
    "LukeRecordPredictor",
    "LukeRelationClassifierPredictor",
    "LukeSpanNerPredictor",
    "LukeSquadPredictor",
    "LukeSequenceClassifierPredictor",
    "LukeMultipleChoicePredictor",
]
