"""
The product's behaviours on allennlp's commands: what this project changes in how `allennlp` behaves, as opposed to
the compatibility layer (`luke_allennlp_compat`), which only repairs what newer torch, transformers and
huggingface_hub broke. One module per behaviour:

- `user_errors`: an error meant for the user is one line (`ALLENNLP_DEBUG=1` for the traceback), so are a full disk
  and an interruption (also one that code caught on its way);
- `predict_errors`: `allennlp predict` names the file and line of a bad input;
- `predict_batches`: `allennlp predict` batches inputs of similar length, outputs in input order;
- `utf8_outputs`: `allennlp predict` and `evaluate`'s predictions written as UTF-8 text, not `\\u` escapes;
- `overwrite_guard`: an output that is an input is refused, `-f`/`--recover` checked against what is there;
- `archives`: safe extraction wherever allennlp extracts an archive (`luke_allennlp.resources.archives`);
- `self_contained_archives`: archives bundle the files their config names (`luke_allennlp.archival`);
- `archive_types`: an archive's config names only components registered for their places
  (`luke_allennlp.resources.archive_config`);
- `archive_paths`: while an archive loads, `cached_path` reads nothing outside it and fetches nothing;
- `weights`: allennlp's weight loads read weights only (`luke_allennlp.modeling.weights`);
- `plugins`: this project's plugins found from any directory;
- `output_lock`: one training run per serialization directory, one writer per output of `predict` and `evaluate`
  (`luke_allennlp.resources.output`);
- `config_checks`: a config's wrong types, sizes, unknown keys and `-o` refused before any work (also `evaluate -o`);
- `distributed`: `allennlp train` under torchrun and across nodes, global rank 0 the one writer;
- `input_lengths`: a reader's `max_seq_length` checked against the model's position embeddings when both are built;
- `registered_types`: a registered component accepts its own `type`;
- `devices`: a GPU the machine lacks (a config's, `--cuda-device`) is one line before any work; `NUM_GPUS` for configs;
- `push_to_hf`: `allennlp push-to-hf` over HTTP, with the files an archive bundles;
- `progress`: progress bars as lines when standard error is a file, one every `LUKE_PROGRESS_SECONDS`;
- `tracking`: `LUKE_TRACKING` (the configs' trackers) empty unless set;
- `paper_figures`: a config's top-level `paper` key (the published figures `allennlp seeds` compares with) ignored by
  training.

`HOOKS` says when each runs: for each allennlp (or cached_path) module, the behaviours that run just before it
executes (`before`: given the module object, not yet executed) or just after (`after`), in their order, as
`"luke_allennlp.cli.module:function"`. The plugin entry (`luke_allennlp.plugin`) and the start-up line (`PTH_LINE`)
hand it to the compatibility layer's installer, which runs them from its import hook as it runs its own repairs; a
behaviour module is imported only when allennlp imports the module it changes. This package imports only the standard
library until then. Each behaviour replaces allennlp's functions with the compatibility layer's
`luke_allennlp_compat.patch` (the one module of the layer the product imports: the repairs and the behaviours mark
what they replaced alike, so that a behaviour wrapping a repaired function keeps both marks).
"""

import logging
from typing import Dict, List, Tuple

logger = logging.getLogger(__name__)  # the behaviours'

# Run by every Python of the environment at start-up (`luke_allennlp_compat.pth`: shipped in the wheel by setup.py,
# written by `python -m luke_allennlp.cli` for an editable install), so that `allennlp`'s `main` is wrapped before it
# runs: the plugins are imported only inside it.
PTH_LINE = "import luke_allennlp_compat, luke_allennlp.cli as c; luke_allennlp_compat.install(c.HOOKS)\n"


# allennlp module -> [("before" | "after", "behaviour module:function")]
_TABLE: Dict[str, List[Tuple[str, str]]] = {
    "allennlp.common.push_to_hf": [("after", "push_to_hf:repair_push_to_hf")],
    "allennlp.commands.push_to_hf": [("after", "push_to_hf:repair_push_to_hf_command")],
    "allennlp.commands.predict": [
        ("after", "predict_batches:repair_predict_batches"),
        ("after", "predict_errors:repair_predict"),  # (around predict_batches' loop) with the overwrite guard's
        ("after", "utf8_outputs:repair_predict_output"),
        ("after", "output_lock:repair_predict"),  # around the guard: the output checked and locked
        ("after", "devices:repair_predict"),  # first of all: --cuda-device
    ],
    "allennlp.predictors.predictor": [("after", "utf8_outputs:repair_dump_line")],
    "allennlp.evaluation.serializers.serializers": [("after", "utf8_outputs:repair_serializer")],
    "cached_path._cached_path": [("after", "archives:repair_cached_path")],
    "allennlp.commands": [
        ("after", "user_errors:repair_commands"),
        ("after", "archive_types:record_included_packages"),
    ],
    "allennlp.data.data_loaders.multiprocess_data_loader": [("after", "user_errors:repair_data_loader_workers")],
    "allennlp.evaluation.evaluator": [("after", "user_errors:repair_evaluator")],  # its predictions file closed
    "allennlp.models.archival": [
        ("after", "self_contained_archives:repair_archives"),  # extraction, bundles, the archive as data
        ("after", "input_lengths:repair_load_archive"),  # around it: the readers' max_seq_length against the model
    ],
    "allennlp.common.plugins": [("after", "plugins:repair_plugins")],
    "allennlp.common.registrable": [("after", "archive_types:repair_registrable")],
    "allennlp.common.file_utils": [
        ("after", "archive_paths:repair_file_utils"),  # before any other module imports its cached_path
        ("after", "weights:repair_weights_only_calls"),
    ],
    "allennlp.common.cached_transformers": [("after", "weights:repair_weights_only_calls")],
    "allennlp.nn.parallel.fairscale_fsdp_accelerator": [("after", "weights:repair_weights_only_calls")],
    "allennlp.commands.train": [
        ("after", "distributed:repair_train"),
        ("after", "output_lock:repair_train_model"),  # around distributed's: the global primary holds the lock
        ("after", "config_checks:repair_train"),  # the config is checked before the lock is taken
        ("after", "devices:repair_train"),
        ("after", "input_lengths:repair_train"),
    ],
    "allennlp.training.util": [
        ("after", "overwrite_guard:repair_serialization_dir"),
        ("after", "output_lock:repair_create_serialization_dir"),  # around the guard: only a lock is empty
    ],
    "allennlp.nn.util": [("after", "weights:repair_nn_util")],
    "allennlp.nn.initializers": [("after", "weights:repair_initializers")],
    "allennlp.training.gradient_descent_trainer": [
        ("after", "weights:repair_trainer_loads"),
        ("after", "user_errors:repair_trainer_interruptions"),
    ],
    "allennlp.training.checkpointer": [("after", "weights:repair_checkpointer_loads")],
    "allennlp.commands.evaluate": [
        ("after", "overwrite_guard:repair_evaluate"),
        ("after", "output_lock:repair_evaluate"),
        ("after", "devices:repair_evaluate"),
    ],
    "allennlp.common.params": [
        ("after", "config_checks:repair_params"),
        ("after", "devices:repair_params"),
        ("after", "tracking:repair_params"),
    ],
    "allennlp.common.tqdm": [("after", "progress:repair_tqdm")],
    "allennlp.common.from_params": [("after", "registered_types:repair_from_params")],
    "allennlp.common.util": [("after", "paper_figures:repair_prepare_environment")],
}

HOOKS: Dict[str, List[Tuple[str, str]]] = {
    module: [(when, f"{__name__}.{target}") for when, target in hooks] for module, hooks in _TABLE.items()
}
