"""
The compatibility layer: what lets allennlp 2.10.1 run on Python 3.11-3.12 with torch 2.x, transformers 5.x and
huggingface_hub 1.x-2.x. No file of an installed package is edited. allennlp pins torch<1.13 and transformers<4.21, so it
is installed without its pinned requirements (see the Makefile), and these repairs, one module each, make up for it:

1. `optional_dependencies`: torchvision, spaCy, boto3, Google Cloud: placeholders where missing or broken.
2. `adamw`: `transformers.AdamW` (removed in transformers 4.50) for allennlp's `huggingface_adamw`.
3. `push_to_hf`: `allennlp push-to-hf` over HTTP (huggingface_hub 1.0 removed `HfFolder` and `Repository`).
4. `cached_transformers`: `get_tokenizer` without the `add_special_tokens` constructor argument.
5. `tokenizer_methods`: `encode_plus` and `build_inputs_with_special_tokens`, removed in transformers 5.
6. `predict_errors`: `allennlp predict` names the file and line of a bad input.
7. `archives`: safe extraction of model archives (path traversal, links, bombs, corruption).
8. `user_errors`: an error meant for the user is one line, not a traceback.
9. `self_contained_archives`: archives bundle the files their config names.
10. `plugins`: this project's plugins found from any directory.
11. `weights`: weights loaded with `weights_only=True`, an unreadable file named.
12. `overwrite_guard`: an output that is an input is refused.
13. `startup`: allennlp's imports of spaCy, NLTK and transformers' modelling deferred to first use.
14. `archive_types`: an archive's config names only registered components (nothing else imported or run).
15. `output_lock`: one owner per output (a serialization directory, a builder's output).
16. `config_checks`: a config's wrong types, sizes and unknown keys refused before any work; `-o` checked.
17. `distributed`: `allennlp train` under torchrun and across nodes, global rank 0 the one writer.
18. `registered_types`: a registered component accepts its own `type` where a parameter names its class.
19. `devices`: a GPU the machine lacks is one line before any work; `NUM_GPUS` for configs.

Each module's docstring says what changed upstream and which test proves the repair. `hook` runs each repair when
allennlp imports the module it repairs. `luke_allennlp_compat.pth`, installed into site-packages (by the wheel, or by
`python -m luke_allennlp_compat` for an editable install), calls `install()` at interpreter start-up, so the real
`allennlp` command is repaired before it imports anything; importing `luke_allennlp` calls it too. This package
imports nothing of `luke_allennlp` at import time (import-linter's contract in pyproject.toml), and nothing but the
standard library until a repair runs: the names below are loaded from their modules on first use.
"""

import importlib
from typing import Any

from luke_allennlp_compat.hook import install, repair_dependencies

PTH_LINE = "import luke_allennlp_compat; luke_allennlp_compat.install()\n"

# Public name -> the module that defines it (imported on first use, so that start-up imports none of them).
_PUBLIC = {
    "OPTIONAL_DEPENDENCIES": "optional_dependencies",
    "huggingface_adamw": "adamw",
    "HubUploadError": "push_to_hf",
    "PUSH_TO_HF_HELP": "push_to_hf",
    "ArchiveError": "archives",
    "extract_archive": "archives",
    "ARCHIVE_MAX_RATIO": "archives",
    "ARCHIVE_RATIO_FLOOR": "archives",
    "ARCHIVE_MAX_BYTES": "archives",
    "user_error": "user_errors",
    "one_line": "user_errors",
    "ARCHIVAL_MODULE": "self_contained_archives",
    "PLUGIN": "plugins",
    "WeightsError": "weights",
    "load_weights": "weights",
    "CommandLineError": "overwrite_guard",
    "refuse_overwriting_inputs": "overwrite_guard",
    "ArchiveConfigError": "archive_types",
    "check_archive_config": "archive_types",
    "loading_archive": "archive_types",
    "TRUSTED_TYPES_VARIABLE": "archive_types",
    "OutputInUseError": "output_lock",
    "OutputLock": "output_lock",
    "lock_output": "output_lock",
    "writing_output": "output_lock",
    "replaced_output": "output_lock",
    "is_global_primary": "output_lock",
    "ConfigError": "config_checks",
    "check_config": "config_checks",
    "DistributedSetupError": "distributed",
    "missing_gpu": "devices",
}

__all__ = ["PTH_LINE", "install", "repair_dependencies", *_PUBLIC]


def __getattr__(name: str) -> Any:
    if name not in _PUBLIC:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{_PUBLIC[name]}"), name)
    globals()[name] = value
    return value
