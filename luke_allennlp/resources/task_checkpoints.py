"""
How this project's task models and transformers' LUKE task classes correspond, for `allennlp import-luke-task`
and `allennlp export-luke`: which model, reader and `LukeTokenizer` `task=` mode go together, where the head's
weights live, and how the special entities map.

transformers' task tokenizers give every classified mention the entity `[MASK]` (a relation's tail `[MASK2]`);
the readers here give `[MASK]`, `[HEAD]`, `[TAIL]` of `luke_allennlp.data.entities.TASK_ENTITY_VOCAB`.
"""

from dataclasses import dataclass, field
from typing import Any, Dict, Optional

# The special entities of LukeTokenizer / MLukeTokenizer (their `entity_*_token` defaults), in the order an
# exported task checkpoint numbers them.
CHECKPOINT_SPECIAL_ENTITIES = ("[PAD]", "[UNK]", "[MASK]", "[MASK2]")
# The tokenizer_config.json keys naming them.
SPECIAL_ENTITY_KEYS = {"[PAD]": "entity_pad_token", "[UNK]": "entity_unk_token", "[MASK]": "entity_mask_token",
                       "[MASK2]": "entity_mask2_token"}  # fmt: skip
# LUKE's word markers (`<ent>`, `<ent2>`), which LukeTokenizer's entity_classification and entity_pair_classification
# modes put around the mentions.
ENTITY_1_TOKEN, ENTITY_2_TOKEN = "<ent>", "<ent2>"


@dataclass(frozen=True)
class TaskCheckpoint:
    """
    One task as both sides know it.

    # Parameters

    task : `str`
        The name `import-luke-task --task` takes.
    architecture : `str`
        The transformers class (`config.architectures[0]`).
    model_type, reader_type : `str`
        The registered AllenNLP model and dataset reader.
    head : `Dict[str, str]`
        The head's parameter names, transformers' -> ours.
    imported_entities : `Optional[Dict[str, str]]`
        Each task entity of the readers -> the checkpoint's special entity whose embedding it takes; `None`:
        the model keeps the checkpoint's whole entity table (`entity_vocab: "checkpoint"`).
    exported_entities : `Optional[Dict[str, str]]`
        Each special entity of an exported checkpoint -> the task entity whose embedding it takes.
    tokenizer_task : `Optional[str]`
        LukeTokenizer's `task=` mode of an export (for relations and typing, only when the reader put LUKE's
        `<ent>` markers: these modes put them).
    model_options, reader_options : `Dict[str, Any]`
        What an imported archive's config sets so that the model and reader compute what the checkpoint does.
    """

    task: str
    architecture: str
    model_type: str
    reader_type: str
    head: Dict[str, str]
    imported_entities: Optional[Dict[str, str]]
    exported_entities: Optional[Dict[str, str]]
    tokenizer_task: Optional[str]
    model_options: Dict[str, Any] = field(default_factory=dict)
    reader_options: Dict[str, Any] = field(default_factory=dict)


_MASK_ONLY = {"[PAD]": "[PAD]", "[MASK]": "[MASK]", "[HEAD]": "[MASK]", "[TAIL]": "[MASK]"}
# [UNK] is unused by the task modes: it gets the padding row.
_MASK_EXPORT = {"[PAD]": "[PAD]", "[UNK]": "[PAD]", "[MASK]": "[MASK]", "[MASK2]": "[MASK]"}

TASKS: Dict[str, TaskCheckpoint] = {
    "ner": TaskCheckpoint(
        "ner", "LukeForEntitySpanClassification", "luke_span_ner", "luke_conll2003",
        head={"classifier.weight": "classifier.weight", "classifier.bias": "classifier.bias"},
        imported_entities=_MASK_ONLY, exported_entities=_MASK_EXPORT, tokenizer_task="entity_span_classification",
        model_options={"feature": "all"},
    ),
    "relation": TaskCheckpoint(
        "relation", "LukeForEntityPairClassification", "luke_relation_classifier", "luke_relation_classification",
        head={"classifier.weight": "classifier.weight"},
        imported_entities={"[PAD]": "[PAD]", "[MASK]": "[MASK]", "[HEAD]": "[MASK]", "[TAIL]": "[MASK2]"},
        exported_entities={"[PAD]": "[PAD]", "[UNK]": "[PAD]", "[MASK]": "[HEAD]", "[MASK2]": "[TAIL]"},
        tokenizer_task="entity_pair_classification",
        model_options={"feature": "entity", "bias": False},
        reader_options={"entity_marker_tokens": [ENTITY_1_TOKEN, ENTITY_2_TOKEN]},
    ),
    "typing": TaskCheckpoint(
        "typing", "LukeForEntityClassification", "luke_entity_typing", "luke_open_entity",
        head={"classifier.weight": "classifier.weight", "classifier.bias": "classifier.bias"},
        imported_entities=_MASK_ONLY, exported_entities=_MASK_EXPORT, tokenizer_task="entity_classification",
        model_options={"feature": "entity"}, reader_options={"entity_marker_token": ENTITY_1_TOKEN},
    ),
    "squad": TaskCheckpoint(
        "squad", "LukeForQuestionAnswering", "luke_squad", "luke_squad",
        head={"qa_outputs.weight": "qa_outputs.weight", "qa_outputs.bias": "qa_outputs.bias"},
        imported_entities=None, exported_entities=None, tokenizer_task=None,
    ),
    # Sentence-level heads over the pooler, without entity inputs: the task entities keep the special ones only.
    "sequence-classification": TaskCheckpoint(
        "sequence-classification", "LukeForSequenceClassification", "luke_sequence_classifier",
        "luke_sentence_classification", head={"classifier.weight": "classifier.weight", "classifier.bias": "classifier.bias"},
        imported_entities=_MASK_ONLY, exported_entities=_MASK_EXPORT, tokenizer_task=None,
    ),
    "multiple-choice": TaskCheckpoint(
        "multiple-choice", "LukeForMultipleChoice", "luke_multiple_choice", "luke_multiple_choice",
        head={"classifier.weight": "classifier.weight", "classifier.bias": "classifier.bias"},
        imported_entities=_MASK_ONLY, exported_entities=_MASK_EXPORT, tokenizer_task=None,
    ),
}  # fmt: skip
BY_ARCHITECTURE = {spec.architecture: spec for spec in TASKS.values()}
BY_MODEL_TYPE = {spec.model_type: spec for spec in TASKS.values()}


def uses_markers(spec: TaskCheckpoint, reader_config: Dict[str, Any]) -> bool:
    """Whether a reader config puts LUKE's `<ent>` markers as the task's LukeTokenizer mode does."""
    return all(reader_config.get(key) == value for key, value in spec.reader_options.items())
