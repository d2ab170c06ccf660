"""
The import hook: each repair runs when allennlp imports the module it repairs, so that nothing heavy is imported at
start-up (this module and the package's `__init__` import only the standard library).

`REPAIRS` names, for each allennlp (or cached_path) module, the repairs that run just before it executes (`before`:
given the module object, not yet executed) or just after (`after`: given the executed module), in their order, as
`"repair module:function"`; a repair module is imported when its first repair runs. `repair_dependencies` runs
repairs 1 and 3 when `allennlp` itself is first imported.
"""

import importlib
import importlib.abc
import importlib.machinery
import sys
import types
from typing import Any, Callable, Dict, List, Optional, Tuple

from luke_allennlp_compat._patch import logger

# module -> [("before" | "after", "repair module:function")]
REPAIRS: Dict[str, List[Tuple[str, str]]] = {
    "allennlp.training.optimizers": [("before", "adamw:repair_transformers")],  # 2
    "allennlp.common.push_to_hf": [("after", "push_to_hf:repair_push_to_hf")],  # 3
    "allennlp.commands.push_to_hf": [("after", "push_to_hf:repair_push_to_hf_command")],  # 3
    "allennlp.common.cached_transformers": [
        ("before", "startup:defer_names"),  # 13
        ("after", "startup:restore_names"),
        ("after", "cached_transformers:repair_cached_transformers"),  # 4
    ],
    "allennlp.data.tokenizers.pretrained_transformer_tokenizer": [
        ("before", "tokenizer_methods:repair_tokenizer_methods")
    ],  # 5
    "allennlp.data.token_indexers.pretrained_transformer_indexer": [
        ("before", "tokenizer_methods:repair_tokenizer_methods")
    ],  # 5
    "allennlp.commands.predict": [("after", "predict_errors:repair_predict")],  # 6 and 12
    "cached_path._cached_path": [("after", "archives:repair_cached_path")],  # 7
    "allennlp.commands": [
        ("after", "user_errors:repair_commands"),  # 8
        ("after", "archive_types:record_included_packages"),  # 14
    ],
    "allennlp.data.data_loaders.multiprocess_data_loader": [("after", "user_errors:repair_data_loader_workers")],  # 8
    "allennlp.evaluation.evaluator": [("after", "user_errors:repair_evaluator")],  # 8
    "allennlp.models.archival": [("after", "self_contained_archives:repair_archives")],  # 7 and 9
    "allennlp.common.plugins": [("after", "plugins:repair_plugins")],  # 10
    "allennlp.common.registrable": [("after", "archive_types:repair_registrable")],  # 14
    "allennlp.commands.train": [
        ("after", "distributed:repair_train"),  # 17
        ("after", "output_lock:repair_train_model"),  # 15 (around 17: the global primary holds the lock)
        ("after", "config_checks:repair_train"),  # 16: the config is checked before the lock is taken
        ("after", "devices:repair_train"),  # 19
    ],
    "allennlp.training.util": [
        ("after", "overwrite_guard:repair_serialization_dir"),  # 12
        ("after", "output_lock:repair_create_serialization_dir"),  # 15, around 12: only a lock is empty
    ],
    "allennlp.nn.util": [("after", "weights:repair_nn_util")],  # 11
    "allennlp.nn.initializers": [("after", "weights:repair_initializers")],  # 11
    "allennlp.training.gradient_descent_trainer": [("after", "weights:repair_trainer_loads")],  # 11
    "allennlp.training.checkpointer": [("after", "weights:repair_checkpointer_loads")],  # 11
    "allennlp.commands.evaluate": [("after", "overwrite_guard:repair_evaluate")],  # 12
    "allennlp.common.params": [
        ("after", "config_checks:repair_params"),  # 16
        ("after", "devices:repair_params"),  # 19
    ],
    "allennlp.common.from_params": [("after", "registered_types:repair_from_params")],  # 18
    "allennlp.modules.token_embedders.pretrained_transformer_embedder": [
        ("before", "startup:defer_names"),  # 13
        ("after", "startup:restore_names"),
    ],
}

_installed = False
_dependencies_repaired = False


def repair(target: str) -> Callable[[types.ModuleType], None]:
    """The function `"repair module:function"` names."""
    module, function = target.split(":")
    return getattr(importlib.import_module(f"luke_allennlp_compat.{module}"), function)


def _run(module: types.ModuleType, when: str) -> None:
    for moment, target in REPAIRS.get(module.__name__, ()):
        if moment == when:
            repair(target)(module)


def repair_dependencies() -> None:
    """Repairs 1 and 3. Runs before `allennlp` is first imported, or on demand."""
    global _dependencies_repaired
    if _dependencies_repaired:
        return
    _dependencies_repaired = True
    for target in ("optional_dependencies:repair_optional_dependencies", "push_to_hf:repair_huggingface_hub"):
        try:
            repair(target)()  # type: ignore[call-arg]
        except ImportError as e:  # that dependency is missing; allennlp will say so itself
            logger.debug("%s skipped: %s", target, e)


class _RepairingLoader(importlib.abc.Loader):
    def __init__(self, loader: Any) -> None:
        self.loader = loader

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> Optional[types.ModuleType]:
        return self.loader.create_module(spec)

    def exec_module(self, module: types.ModuleType) -> None:
        _run(module, "before")
        self.loader.exec_module(module)
        _run(module, "after")


class _AllennlpHook(importlib.abc.MetaPathFinder):
    def find_spec(
        self, fullname: str, path: Any = None, target: Any = None
    ) -> Optional[importlib.machinery.ModuleSpec]:
        if fullname == "allennlp":
            repair_dependencies()
        if fullname not in REPAIRS:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path, target)
        if spec is not None and spec.loader is not None:
            spec.loader = _RepairingLoader(spec.loader)
        return spec


def install() -> None:
    """Installs the import hooks (idempotent). Repairs modules already imported, where that still helps."""
    global _installed
    if _installed:
        return
    _installed = True
    sys.meta_path.insert(0, _AllennlpHook())
    repair("startup:install")()  # type: ignore[call-arg]
    if "allennlp" in sys.modules:
        repair_dependencies()
    for name in REPAIRS:
        if name in sys.modules:
            _run(sys.modules[name], "after")
