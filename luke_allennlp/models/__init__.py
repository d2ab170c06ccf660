from luke_allennlp.models.luke_span_ner import LukeSpanNer

__all__ = ["LukeSpanNer"]
