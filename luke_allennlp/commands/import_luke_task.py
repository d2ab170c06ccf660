"""
`allennlp import-luke-task CHECKPOINT OUT_DIR [--task ner|relation|typing|squad|sequence-classification|multiple-choice]`:
a transformers LUKE task checkpoint (`LukeForEntitySpanClassification`, `LukeForEntityPairClassification`,
`LukeForEntityClassification`, `LukeForQuestionAnswering`, `LukeForSequenceClassification`, `LukeForMultipleChoice`;
a directory or a hub name) as an AllenNLP archive `OUT_DIR/model.tar.gz` of the matching model (`luke_span_ner`,
`luke_relation_classifier`, `luke_entity_typing`, `luke_squad`, `luke_sequence_classifier`, `luke_multiple_choice`),
which `allennlp evaluate` and `allennlp predict` run directly.

- A `LukeForSequenceClassification` with `problem_type: "regression"` (or one label) becomes a regression model
  and reader; its reader reads `sentence1`/`sentence2` pairs (for single sentences add
  `-o '{"dataset_reader.sentence_fields": ["sentence"]}'` to evaluate).

- Labels come from `config.id2label`, in its order; for NER the label of "no entity" (`O`, or the original
  LUKE's `NIL`, or `--outside-label`) becomes `O`, as the reader writes it.
- The checkpoint's special entities become the readers' task entities (`task_checkpoints.TASKS`): `[MASK]` ->
  `[MASK]` (and `[HEAD]`), the pair classifier's `[MASK2]` -> `[TAIL]`. The relation and typing readers get
  LUKE's `<ent>` / `<ent2>` markers, as the checkpoints' `LukeTokenizer` modes insert them.
- The archive's embedder and reader name the checkpoint (`model_name`, `load_weights: false`), whose config and
  tokenizer files are bundled into the archive (`luke_allennlp.archival`); the weights are the archive's. The
  tokenizer's files may be the released layout or transformers 5's (`tokenizer.json`, the entity vocabulary in
  `tokenizer_config.json`).
- The archive has the `evaluation` section of the repository's configs, so it behaves as a trained archive: `allennlp
  evaluate --predictions-output-file` writes one line per example; `predict`, `export-luke` and fine-tuning further
  (a `from_archive` model, or the `pretrained` initializer on the archive) work as on one.
"""

import argparse
import json
import logging
import os
import tempfile
from typing import Any, Dict, List, Optional

import torch
from allennlp.commands.subcommand import Subcommand

from luke_allennlp.commands.task_checkpoints import BY_ARCHITECTURE, SPECIAL_ENTITY_KEYS, TASKS, TaskCheckpoint
from luke_allennlp.data.entities import TASK_ENTITY_VOCAB
from luke_allennlp.evaluation.per_instance_serializer import PER_INSTANCE_EVALUATION
from luke_allennlp.modeling.loading import checkpoint_entities, read_config, read_state_dict, read_tokenizer_config
from luke_allennlp.resources.output import lock_output

logger = logging.getLogger(__name__)

OUTSIDE_LABELS = ("O", "NIL")


@Subcommand.register("import-luke-task")
class ImportLukeTask(Subcommand):
    def add_subparser(self, parser: argparse._SubParsersAction) -> argparse.ArgumentParser:
        description = "Write a transformers LUKE task checkpoint as an AllenNLP archive of the matching model."
        subparser = parser.add_parser(self.name, description=description, help=description)
        subparser.add_argument("checkpoint", help="a transformers LukeFor* task checkpoint: directory or hub name")
        subparser.add_argument("output_dir", help="the directory to write (model.tar.gz)")
        subparser.add_argument("--task", choices=sorted(TASKS), help="default: from the config's architectures")
        subparser.add_argument("--outside-label", help="NER: the checkpoint's label for 'no entity' (default O or NIL)")
        subparser.add_argument("--batch-size", type=int, default=8, help="the archive's data loader batch size")
        subparser.set_defaults(
            func=lambda args: import_luke_task(
                args.checkpoint, args.output_dir, args.task, args.outside_label, args.batch_size
            )
        )
        return subparser


def import_luke_task(
    checkpoint: str,
    output_dir: str,
    task: Optional[str] = None,
    outside_label: Optional[str] = None,
    batch_size: int = 8,
) -> str:
    """Writes `output_dir/model.tar.gz` (see the module's docstring) and returns its path."""
    with lock_output(os.path.join(output_dir, "model.tar.gz")):  # one writer (the archive is renamed into place)
        return _import_luke_task(checkpoint, output_dir, task, outside_label, batch_size)


def _import_luke_task(checkpoint: str, output_dir: str, task: Optional[str], outside_label: Optional[str],
                      batch_size: int) -> str:  # fmt: skip
    from allennlp.common import Params
    from allennlp.common.meta import META_NAME, Meta
    from allennlp.data import Vocabulary
    from allennlp.models import Model
    from allennlp.models.archival import archive_model

    config = read_config(checkpoint)
    spec = task_of(checkpoint, config, task)
    regression = spec.task == "sequence-classification" and is_regression(config)
    labels = [] if regression else checkpoint_labels(checkpoint, config, spec, outside_label)
    source = os.path.abspath(checkpoint) if os.path.isdir(checkpoint) else checkpoint
    params: Dict[str, Any] = {
        "dataset_reader": {"type": spec.reader_type, "model_name": source, **spec.reader_options},
        "model": {
            "type": spec.model_type,
            "embedder": {
                "type": "luke",
                "model_name": source,
                "entity_vocab": "checkpoint" if spec.imported_entities is None else "task",
                "load_weights": False,
            },
            **spec.model_options,
        },
        "data_loader": {"batch_size": batch_size, "shuffle": False},
        # as in the repository's configs: `evaluate --predictions-output-file` writes one line per example
        "evaluation": PER_INSTANCE_EVALUATION,
        "imported_from": {"checkpoint": checkpoint, "architecture": spec.architecture},
    }
    if regression:
        params["dataset_reader"]["regression"] = params["model"]["regression"] = True
    vocab = Vocabulary(non_padded_namespaces=["labels"])
    vocab.add_tokens_to_namespace(labels, "labels")
    model = Model.from_params(vocab=vocab, params=Params(json.loads(json.dumps(params["model"]))))
    state = model_state(checkpoint, spec, model.state_dict())
    model.load_state_dict(state)

    os.makedirs(output_dir, exist_ok=True)
    with tempfile.TemporaryDirectory() as work:
        with open(os.path.join(work, "config.json"), "w", encoding="utf-8") as f:
            json.dump(params, f, indent=2)
        vocab.save_to_files(os.path.join(work, "vocabulary"))
        Meta.new().to_file(os.path.join(work, META_NAME))
        torch.save(model.state_dict(), os.path.join(work, "weights.th"))
        archive = os.path.join(output_dir, "model.tar.gz")
        archive_model(work, weights="weights.th", archive_path=archive)
    print(f"Wrote {archive}: {spec.model_type} from {spec.architecture} {checkpoint} ({len(labels)} labels)")
    return archive


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
    from luke_allennlp.modeling.loading import _rename_legacy

    weights = {_rename_legacy(k): v for k, v in read_state_dict(checkpoint).items()}
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
    mismatched = [
        f"{k}: {tuple(v.shape)} != {tuple(own[k].shape)}" for k, v in state.items() if v.shape != own[k].shape
    ]
    if mismatched:
        raise ValueError(f"{checkpoint}: weights do not fit the {spec.model_type} model: {mismatched}")
    return {**{k: own[k] for k in missing}, **state}
