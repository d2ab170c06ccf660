"""
Registered AllenNLP dataset readers for the LUKE tasks (one reader per module). They build their inputs with
`luke_allennlp.data`; importing this package imports `luke_allennlp` too, which registers the rest of the
plugin (`luke_allennlp` never imports this package).
"""

import luke_allennlp  # noqa: F401  (registers the models, embedder, predictors, ... the readers are used with)
from data_readers.luke_conll2003 import LukeConll2003Reader
from data_readers.luke_entity_disambiguation import LukeEntityDisambiguationReader  # noqa: F401
from data_readers.luke_open_entity import LukeOpenEntityReader
from data_readers.luke_pretraining import LukePretrainingReader
from data_readers.luke_record import LukeRecordReader
from data_readers.luke_relation_classification import LukeRelationClassificationReader
from data_readers.luke_squad import LukeSquadReader

__all__ = [
    "LukeConll2003Reader", "LukeOpenEntityReader", "LukePretrainingReader", "LukeRecordReader",
    "LukeRelationClassificationReader", "LukeSquadReader",
]  # fmt: skip
