from luke_allennlp.models.luke_bio_tagger import LukeBioTagger
from luke_allennlp.models.luke_entity_typing import LukeEntityTyping
from luke_allennlp.models.luke_relation_classifier import LukeRelationClassifier
from luke_allennlp.models.luke_span_ner import LukeSpanNer

__all__ = ["LukeBioTagger", "LukeEntityTyping", "LukeRelationClassifier", "LukeSpanNer"]
