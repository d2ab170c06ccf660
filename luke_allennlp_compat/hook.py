"""
The import hook: each repair runs when allennlp imports the module it repairs, so that nothing heavy is imported at
start-up (this module and the package's `__init__` import only the standard library).

`REPAIRS` names, for each allennlp module, the repairs that run just before it executes (`before`: given the module
object, not yet executed) or just after (`after`: given the executed module), in their order, as
`"repair module:function"`; a repair module is imported when its first repair runs. `repair_dependencies` runs the
placeholder repairs when `allennlp` itself is first imported. `install(hooks)` also takes the hooks of the project
that uses this layer (its behaviours on allennlp's commands, in the same form: module -> [(moment, "module:function"
or a callable)], the module named in full), run after this layer's own for the same module, each imported on its first
run as the repairs are; this layer knows nothing of that project.
"""

import importlib
import importlib.abc
import importlib.machinery
import sys
import types
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from luke_allennlp_compat.patch import logger

Hook = Callable[[types.ModuleType], None]
# A hook as `install` keeps it: the callable, or `"module:function"`, imported when it first runs.
LazyHook = Union[str, Hook]

# module -> [("before" | "after", "repair module:function")]
REPAIRS: Dict[str, List[Tuple[str, str]]] = {
    "allennlp.training.optimizers": [("before", "adamw:repair_transformers")],  # 2
    "allennlp.common.cached_transformers": [
        ("before", "startup:defer_names"),  # 4
        ("after", "startup:restore_names"),
        ("after", "cached_transformers:repair_cached_transformers"),  # 3
    ],
    "allennlp.data.tokenizers.pretrained_transformer_tokenizer": [
        ("before", "tokenizer_methods:repair_tokenizer_methods")
    ],  # 5
    "allennlp.data.token_indexers.pretrained_transformer_indexer": [
        ("before", "tokenizer_methods:repair_tokenizer_methods")
    ],  # 5
    "allennlp.modules.token_embedders.pretrained_transformer_embedder": [
        ("before", "startup:defer_names"),  # 4
        ("after", "startup:restore_names"),
    ],
}

# module -> [(moment, hook)]: this layer's repairs, then the hooks given to `install`.
_HOOKS: Dict[str, List[Tuple[str, LazyHook]]] = {
    name: [(moment, f"{__package__}.{target}") for moment, target in repairs] for name, repairs in REPAIRS.items()
}
_installed = False
_dependencies_repaired = False


def load(target: str) -> Callable[..., Any]:
    """The function `"module:function"` names, its module imported now."""
    module, function = target.split(":")
    return getattr(importlib.import_module(module), function)


def _call(hook: LazyHook, module: types.ModuleType) -> None:
    (load(hook) if isinstance(hook, str) else hook)(module)


def _run(module: types.ModuleType, when: str) -> None:
    for moment, hook in list(_HOOKS.get(module.__name__, ())):
        if moment == when:
            _call(hook, module)


def repair_dependencies() -> None:
    """Repair 1 and huggingface_hub's removed names. Runs before `allennlp` is first imported, or on demand."""
    global _dependencies_repaired
    if _dependencies_repaired:
        return
    _dependencies_repaired = True
    for target in (
        "optional_dependencies:repair_optional_dependencies",
        "optional_dependencies:repair_huggingface_hub",
    ):
        try:
            load(f"{__package__}.{target}")()
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
        if fullname not in _HOOKS:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path, target)
        if spec is not None and spec.loader is not None:
            spec.loader = _RepairingLoader(spec.loader)
        return spec


def install(hooks: Optional[Mapping[str, Sequence[Tuple[str, LazyHook]]]] = None) -> None:
    """
    Installs the import hooks, with `hooks` (module -> [("before" | "after", "module:function" or a callable)], run
    after this layer's own repairs of that module). Idempotent: a hook already given is not added again, and each
    repair and hook marks what it replaced (`luke_allennlp_compat.patch`), so that running one again changes nothing.
    Repairs modules already imported, where that still helps.
    """
    global _installed
    added: List[Tuple[str, str, LazyHook]] = []
    for name, module_hooks in (hooks or {}).items():
        known = _HOOKS.setdefault(name, [])
        for moment, hook in module_hooks:
            if hook not in [other for _, other in known]:
                known.append((moment, hook))
                added.append((name, moment, hook))
    if not _installed:
        _installed = True
        sys.meta_path.insert(0, _AllennlpHook())
        load(f"{__package__}.startup:install")()
        if "allennlp" in sys.modules:
            repair_dependencies()
        for name in _HOOKS:
            if name in sys.modules:
                _run(sys.modules[name], "after")
        return
    for name, moment, hook in added:  # given after the first install: for what is imported already
        if moment == "after" and name in sys.modules:
            _call(hook, sys.modules[name])
