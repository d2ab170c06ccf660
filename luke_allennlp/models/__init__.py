from luke_allennlp.models.luke_entity_typing import LukeEntityTyping
from luke_allennlp.models.luke_span_ner import LukeSpanNer

__all__ = ["LukeEntityTyping", "LukeSpanNer"]
