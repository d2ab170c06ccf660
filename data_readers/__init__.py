"""
Registered AllenNLP dataset readers for the LUKE tasks (one reader per module). They build their inputs with
`luke_allennlp.data`; importing this package imports `luke_allennlp.plugin` too, which registers the rest of the
plugin (`luke_allennlp` never imports this package).

The folder is `data_readers` in the repository, but it is installed as `luke_allennlp_readers` (setup.py), so that
the installed project cannot clash with another distribution's generic top-level `data_readers`. The same files
imported under both names would register every reader twice (an allennlp error), so whichever name comes second
becomes an alias of the first, submodules included.
"""

import sys

NAMES = ("data_readers", "luke_allennlp_readers")
MODULES = (
    "luke_conll2003",
    "luke_entity_disambiguation",
    "luke_open_entity",
    "luke_pretraining",
    "luke_record",
    "luke_relation_classification",
    "luke_squad",
    "luke_sentence_classification",
    "luke_multiple_choice",
)
_first = next((name for name in NAMES if name != __name__ and name in sys.modules), None)
if _first is not None:
    for _module in MODULES:
        sys.modules[f"{__name__}.{_module}"] = sys.modules[f"{_first}.{_module}"]
    sys.modules[__name__] = sys.modules[_first]
else:
    import luke_allennlp.plugin  # noqa: F401  (registers the models, embedder, predictors, ... the readers are used with)

    from .luke_conll2003 import LukeConll2003Reader
    from .luke_entity_disambiguation import LukeEntityDisambiguationReader  # noqa: F401
    from .luke_multiple_choice import LukeMultipleChoiceReader
    from .luke_open_entity import LukeOpenEntityReader
    from .luke_pretraining import LukePretrainingReader
    from .luke_record import LukeRecordReader
    from .luke_relation_classification import LukeRelationClassificationReader
    from .luke_sentence_classification import LukeSentenceClassificationReader
    from .luke_squad import LukeSquadReader

__all__ = [
    "LukeConll2003Reader",
    "LukeOpenEntityReader",
    "LukePretrainingReader",
    "LukeRecordReader",
    "LukeRelationClassificationReader",
    "LukeSquadReader",
    "LukeSentenceClassificationReader",
    "LukeMultipleChoiceReader",
]
