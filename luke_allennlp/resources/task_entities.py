"""
The special entities of fine-tuning (paper §4): task models keep only these rows of the entity table.

`[MASK]` marks an entity to be predicted or classified (NER spans, entity typing, cloze candidates);
`[HEAD]` and `[TAIL]` mark the two entities of a relation. All three start from the pretrained `[MASK]`
embedding.
"""

from typing import Dict

TASK_ENTITY_VOCAB: Dict[str, int] = {"[PAD]": 0, "[MASK]": 1, "[HEAD]": 2, "[TAIL]": 3}
# The pretrained entity each task entity is initialised from.
TASK_ENTITY_SOURCES: Dict[str, str] = {"[PAD]": "[PAD]", "[MASK]": "[MASK]", "[HEAD]": "[MASK]", "[TAIL]": "[MASK]"}
# Ids in LUKE's pretrained entity vocabularies, used when a checkpoint ships no entity_vocab.json.
LUKE_SPECIAL_ENTITY_IDS: Dict[str, int] = {"[PAD]": 0, "[UNK]": 1, "[MASK]": 2}
