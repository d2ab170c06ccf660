"""
A transformers LUKE task checkpoint (`LukeForEntitySpanClassification`, `LukeForEntityPairClassification`,
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

import json
import os
import tempfile
from typing import Any, Dict, Optional

import torch

from luke_allennlp.modeling.checkpoint_files import read_config
from luke_allennlp.resources.output import lock_output
from luke_allennlp.resources.task_checkpoints import checkpoint_labels, is_regression, model_state, task_of

# The `evaluation` section of the repository's configs (configs/lib/fine_tuning.libsonnet), given to imported archives:
# `allennlp evaluate --predictions-output-file` writes one line per example (`luke_per_instance`).
PER_INSTANCE_EVALUATION: Dict[str, Any] = {"type": "simple", "batch_serializer": {"type": "luke_per_instance"}}


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


def _import_luke_task(
    checkpoint: str, output_dir: str, task: Optional[str], outside_label: Optional[str], batch_size: int
) -> str:
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
