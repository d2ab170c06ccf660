"""
How this project's task models and transformers' LUKE task classes correspond, for `allennlp import-luke-task`
and `allennlp export-luke`: which model, reader and `LukeTokenizer` `task=` mode go together, where the head's
weights live, and how the special entities map; and a task checkpoint read as those specs say (its task, labels,
special entities and weights in the AllenNLP model's names).

transformers' task tokenizers give every classified mention the entity `[MASK]` (a relation's tail `[MASK2]`);
the readers here give `[MASK]`, `[HEAD]`, `[TAIL]` of `luke_allennlp.resources.task_entities.TASK_ENTITY_VOCAB`.
"""

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

import torch

from luke_allennlp.modeling.checkpoint_files import read_state_dict
from luke_allennlp.modeling.loading import rename_legacy_key, shape_mismatches
from luke_allennlp.resources.checkpoint_tokenizer import checkpoint_entities, read_tokenizer_config
from luke_allennlp.resources.task_entities import TASK_ENTITY_VOCAB

# The special entities of LukeTokenizer / MLukeTokenizer (their `entity_*_token` defaults), in the order an
# exported task checkpoint numbers them.
CHECKPOINT_SPECIAL_ENTITIES = ("[PAD]", "[UNK]", "[MASK]", "[MASK2]")
# The tokenizer_config.json keys naming them.
SPECIAL_ENTITY_KEYS = {
    "[PAD]": "entity_pad_token",
    "[UNK]": "entity_unk_token",
    "[MASK]": "entity_mask_token",
    "[MASK2]": "entity_mask2_token",
}
# LUKE's word markers (`<ent>`, `<ent2>`), which LukeTokenizer's entity_classification and entity_pair_classification
# modes put around the mentions.
ENTITY_1_TOKEN, ENTITY_2_TOKEN = "<ent>", "<ent2>"
# A NER checkpoint's label of "no entity" (`O`, or the original LUKE's `NIL`) unless named.
OUTSIDE_LABELS = ("O", "NIL")


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
        "ner",
        "LukeForEntitySpanClassification",
        "luke_span_ner",
        "luke_conll2003",
        head={"classifier.weight": "classifier.weight", "classifier.bias": "classifier.bias"},
        imported_entities=_MASK_ONLY,
        exported_entities=_MASK_EXPORT,
        tokenizer_task="entity_span_classification",
        model_options={"feature": "all"},
    ),
    "relation": TaskCheckpoint(
        "relation",
        "LukeForEntityPairClassification",
        "luke_relation_classifier",
        "luke_relation_classification",
        head={"classifier.weight": "classifier.weight"},
        imported_entities={"[PAD]": "[PAD]", "[MASK]": "[MASK]", "[HEAD]": "[MASK]", "[TAIL]": "[MASK2]"},
        exported_entities={"[PAD]": "[PAD]", "[UNK]": "[PAD]", "[MASK]": "[HEAD]", "[MASK2]": "[TAIL]"},
        tokenizer_task="entity_pair_classification",
        model_options={"feature": "entity", "bias": False},
        reader_options={"entity_marker_tokens": [ENTITY_1_TOKEN, ENTITY_2_TOKEN]},
    ),
    "typing": TaskCheckpoint(
        "typing",
        "LukeForEntityClassification",
        "luke_entity_typing",
        "luke_open_entity",
        head={"classifier.weight": "classifier.weight", "classifier.bias": "classifier.bias"},
        imported_entities=_MASK_ONLY,
        exported_entities=_MASK_EXPORT,
        tokenizer_task="entity_classification",
        model_options={"feature": "entity"},
        reader_options={"entity_marker_token": ENTITY_1_TOKEN},
    ),
    "squad": TaskCheckpoint(
        "squad",
        "LukeForQuestionAnswering",
        "luke_squad",
        "luke_squad",
        head={"qa_outputs.weight": "qa_outputs.weight", "qa_outputs.bias": "qa_outputs.bias"},
        imported_entities=None,
        exported_entities=None,
        tokenizer_task=None,
    ),
    # Sentence-level heads over the pooler, without entity inputs: the task entities keep the special ones only.
    "sequence-classification": TaskCheckpoint(
        "sequence-classification",
        "LukeForSequenceClassification",
        "luke_sequence_classifier",
        "luke_sentence_classification",
        head={"classifier.weight": "classifier.weight", "classifier.bias": "classifier.bias"},
        imported_entities=_MASK_ONLY,
        exported_entities=_MASK_EXPORT,
        tokenizer_task=None,
    ),
    "multiple-choice": TaskCheckpoint(
        "multiple-choice",
        "LukeForMultipleChoice",
        "luke_multiple_choice",
        "luke_multiple_choice",
        head={"classifier.weight": "classifier.weight", "classifier.bias": "classifier.bias"},
        imported_entities=_MASK_ONLY,
        exported_entities=_MASK_EXPORT,
        tokenizer_task=None,
    ),
}
BY_ARCHITECTURE = {spec.architecture: spec for spec in TASKS.values()}
BY_MODEL_TYPE = {spec.model_type: spec for spec in TASKS.values()}


def uses_markers(spec: TaskCheckpoint, reader_config: Dict[str, Any]) -> bool:
    """Whether a reader config puts LUKE's `<ent>` markers as the task's LukeTokenizer mode does."""
    return all(reader_config.get(key) == value for key, value in spec.reader_options.items())


def task_of(checkpoint: str, config: Dict[str, Any], task: Optional[str]) -> TaskCheckpoint:
    """The task of the checkpoint: `task` if given (it must agree with the config's architecture)."""
    if config.get("model_type") != "luke":
        raise ValueError(f"{checkpoint}: model_type {config.get('model_type')!r} is not a LUKE checkpoint")
    architecture = (config.get("architectures") or [None])[0]
    if task is not None:
        spec = TASKS[task]
        if architecture in BY_ARCHITECTURE and architecture != spec.architecture:
            raise ValueError(f"{checkpoint} is a {architecture}, not a {spec.architecture} (--task {task})")
        return spec
    if architecture not in BY_ARCHITECTURE:
        raise ValueError(
            f"{checkpoint}: its config names {architecture!r}, not one of {sorted(BY_ARCHITECTURE)}: "
            f"pass --task ({'|'.join(sorted(TASKS))}) if it holds one of those heads"
        )
    return BY_ARCHITECTURE[architecture]


def checkpoint_labels(
    checkpoint: str, config: Dict[str, Any], spec: TaskCheckpoint, outside_label: Optional[str]
) -> List[str]:
    """The labels of `config.id2label` in id order; NER's outside label renamed `O`."""
    if spec.task in ("squad", "multiple-choice"):  # no labels: spans, or the index of a choice
        return []
    id2label = {int(i): str(label) for i, label in (config.get("id2label") or {}).items()}
    if not id2label or sorted(id2label) != list(range(len(id2label))):
        raise ValueError(f"{checkpoint}: config.json has no id2label with ids 0..n-1")
    labels = [id2label[i] for i in range(len(id2label))]
    if all(label == f"LABEL_{i}" for i, label in enumerate(labels)):
        raise ValueError(f"{checkpoint}: config.json names no labels (id2label is LABEL_0, LABEL_1, ...)")
    if len(set(labels)) != len(labels):
        raise ValueError(f"{checkpoint}: id2label repeats a label: {labels}")
    if spec.task == "ner":
        outside = outside_label or next((name for name in OUTSIDE_LABELS if name in labels), None)
        if outside not in labels:
            raise ValueError(
                f"{checkpoint}: no 'no entity' label among {labels} (looked for {outside or OUTSIDE_LABELS}): "
                f"pass --outside-label"
            )
        if outside != "O" and "O" in labels:
            raise ValueError(f"{checkpoint}: both {outside!r} and 'O' are labels")
        labels = ["O" if label == outside else label for label in labels]
    return labels


def is_regression(config: Dict[str, Any]) -> bool:
    """Whether a LukeForSequenceClassification config is a regression head (as transformers decides: its problem_type,
    else a single label)."""
    if config.get("problem_type") is not None:
        return config["problem_type"] == "regression"
    return len(config.get("id2label") or {}) == 1 or config.get("num_labels") == 1


def checkpoint_special_entities(checkpoint: str) -> Dict[str, int]:
    """The checkpoint's `[PAD]`, `[UNK]`, `[MASK]`, `[MASK2]` ids (whatever its tokenizer_config.json names them),
    as far as its entity vocabulary (`entity_vocab.json`, or transformers 5's tokenizer_config.json) has them."""
    tokenizer_config = read_tokenizer_config(checkpoint)
    names = {name: str(tokenizer_config.get(key) or name) for name, key in SPECIAL_ENTITY_KEYS.items()}
    found = checkpoint_entities(checkpoint)
    if found is None:
        raise ValueError(
            f"{checkpoint}: no entity vocabulary (the LukeTokenizer's): neither entity_vocab.json nor an entity_vocab "
            "in tokenizer_config.json; save the checkpoint's tokenizer with it (tokenizer.save_pretrained)"
        )
    vocab = found[0]
    return {name: vocab[names[name]] for name in names if names[name] in vocab}


def model_state(checkpoint: str, spec: TaskCheckpoint, own: Dict[str, torch.Tensor]) -> Dict[str, torch.Tensor]:
    """The AllenNLP model's state dict from the checkpoint's weights: the encoder (task entities picked from the
    entity table), the head; the pooler the checkpoint may lack (LukeForQuestionAnswering) keeps its values."""
    weights = {rename_legacy_key(k): v for k, v in read_state_dict(checkpoint).items()}
    state = {"embedder.luke." + k[len("luke.") :]: v for k, v in weights.items() if k.startswith("luke.")}
    for theirs, ours in spec.head.items():
        if theirs not in weights:
            raise ValueError(f"{checkpoint}: no {theirs} (a {spec.architecture} head)")
        state[ours] = weights[theirs]
    if "classifier.bias" in own and "classifier.bias" not in spec.head:  # a model with a bias the head lacks
        state["classifier.bias"] = torch.zeros_like(own["classifier.bias"])
    table = "embedder.luke.entity_embeddings.entity_embeddings.weight"
    if spec.imported_entities is not None:
        ids = checkpoint_special_entities(checkpoint)
        rows = []
        for name in TASK_ENTITY_VOCAB:
            source = spec.imported_entities[name]
            if source not in ids:
                raise ValueError(f"{checkpoint}: its entity vocabulary has no {source} (for the task entity {name})")
            if ids[source] >= state[table].size(0):
                raise ValueError(
                    f"{checkpoint}: {source} has id {ids[source]}, beyond its {state[table].size(0)} entity rows"
                )
            rows.append(ids[source])
        state[table] = state[table][rows]
    unexpected = sorted(k for k in state if k not in own)
    if unexpected:
        raise ValueError(f"{checkpoint}: weights the {spec.model_type} model has no place for: {unexpected[:8]}")
    missing = sorted(k for k in own if k not in state)
    if any(".pooler." not in k for k in missing):
        raise ValueError(f"{checkpoint}: the checkpoint lacks {missing[:8]}")
    mismatched = shape_mismatches(state, own)
    if mismatched:
        raise ValueError(f"{checkpoint}: weights do not fit the {spec.model_type} model: {mismatched}")
    return {**{k: own[k] for k in missing}, **state}
