"""
The compatibility layer: what lets allennlp 2.10.1 run on Python 3.11-3.12 with torch 2.x, transformers 5.x and
huggingface_hub 1.x-2.x. No file of an installed package is edited. allennlp pins torch<1.13 and transformers<4.21, so it
is installed without its pinned requirements (see the Makefile), and these repairs, one module each, make up for it
(each module's docstring names the upstream change it repairs):

1. `optional_dependencies`: torchvision, spaCy, boto3, Google Cloud: placeholders where missing or broken (allennlp
   2.10.1 requires torchvision<0.14 and spacy<3.4); huggingface_hub's `HfFolder` and `Repository` (removed in 1.0).
2. `adamw`: `transformers.AdamW` (removed in transformers 4.50) for allennlp's `huggingface_adamw`.
3. `cached_transformers`: `get_tokenizer` without the `add_special_tokens` constructor argument (refused by
   transformers' tokenizers after the 4.20 that allennlp pins).
4. `startup`: allennlp's imports of spaCy, NLTK and transformers' modelling deferred to first use.
5. `tokenizer_methods`: `encode_plus` and `build_inputs_with_special_tokens`, removed in transformers 5.

What this project changes in allennlp's behaviour (one-line errors, archive safety, locks, config checks, ...) is
not here: it is `luke_allennlp.cli`, whose hooks the project hands to `install` (`luke_allennlp.plugin`, and the
start-up line `luke_allennlp.cli.PTH_LINE`). `hook` runs each repair, and each hook given to `install`, when allennlp
imports the module it repairs; `patch` is how the repairs and that project's behaviours alike replace a function of
allennlp, once. `luke_allennlp_compat.pth`, installed into site-packages, calls `install(HOOKS)` at
interpreter start-up, so the real `allennlp` command is repaired before it imports anything. This package imports
nothing of the project that uses it, even by name (import-linter's contract in pyproject.toml),
and nothing but the standard library until a repair runs: the names below are loaded from their modules on first use.
"""

import importlib
from typing import Any

from luke_allennlp_compat.hook import install, repair_dependencies

# Public name -> the module that defines it (imported on first use, so that start-up imports none of them).
_PUBLIC = {
    "OPTIONAL_DEPENDENCIES": "optional_dependencies",
    "huggingface_adamw": "adamw",
}

__all__ = ["install", "repair_dependencies", *_PUBLIC]


def __getattr__(name: str) -> Any:
    if name not in _PUBLIC:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{_PUBLIC[name]}"), name)
    globals()[name] = value
    return value
