from luke_allennlp.models.luke_bio_tagger import LukeBioTagger
from luke_allennlp.models.luke_entity_typing import LukeEntityTyping
from luke_allennlp.models.luke_multiple_choice import LukeMultipleChoice
from luke_allennlp.models.luke_pretraining import LukePretraining
from luke_allennlp.models.luke_record import LukeRecord
from luke_allennlp.models.luke_relation_classifier import LukeRelationClassifier
from luke_allennlp.models.luke_sequence_classifier import LukeSequenceClassifier
from luke_allennlp.models.luke_span_ner import LukeSpanNer
from luke_allennlp.models.luke_squad import LukeSquad
from luke_allennlp.models.luke_task_model import LukeTaskModel, ReportsMetrics

__all__ = [
    "LukeBioTagger",
    "LukeEntityTyping",
    "LukePretraining",
    "LukeRecord",
    "LukeRelationClassifier",
    "LukeSpanNer",
    "LukeSquad",
    "LukeTaskModel",
    "ReportsMetrics",
    "LukeSequenceClassifier",
    "LukeMultipleChoice",
]
