"""
Repair 4, start-up: what allennlp imports at module level and no command here needs is imported on first use.

The upstream change: what allennlp 2.10.1 imports for every command grew heavier than the versions it pins
(transformers 5's `AutoModel` import loads torch 2's distributed tensors and dynamo, which torch 1.12 and
transformers 4.20 did not have). It is installed with the import hook at interpreter start-up, before allennlp's
first import, and knows nothing of the project.

Every `allennlp` command spent some 7 CPU-seconds importing before it did anything, ~3% of it this project's plugins.
Most of the rest is allennlp 2.10.1 importing, for every command, packages that only a few components use, inside
their functions: spaCy and thinc (`allennlp/__init__.py` imports it "to prevent static TLS" errors of 2019, and
`allennlp.common.util` for `get_spacy_model` and an `isinstance` check), NLTK with scipy and scikit-learn (the EVALB
metric's `nltk.Tree`), transformers' BERT (`ACT2FN`, for the ViLBERT backbone's activation layer), and transformers'
`AutoModel` (`allennlp.common.cached_transformers`), whose import loads transformers' whole modelling stack with
torch's distributed tensors and dynamo. These are deferred:

- `DEFERRED_MODULES`: when an allennlp module (and only allennlp: the importing frame's module is `allennlp` or below)
  imports one of them (or a submodule) and it is not loaded yet, it gets a stand-in module, and what it takes from it
  a stand-in object (`_Deferred`). The first real use (a call, an attribute read from anywhere else, `[...]`, a
  subclass) imports the real package, puts it in place of the stand-ins in `sys.modules`, and forwards to it; from
  then on every import gets the real module. `isinstance(x, stand_in)` is False while the package is not loaded (no
  instance of its classes can exist yet) and asks the real class afterwards, so allennlp's `sanitize` (spaCy tokens)
  works without loading spaCy. Anyone else who imports such a module gets the real one.
- `DEFERRED_NAMES`: names that an allennlp module takes from transformers' lazy top-level module at import and uses
  only inside functions: while that module executes, `transformers.NAME` is a stand-in; afterwards transformers'
  own lazy attribute is back.

What is not deferred, and why: torch, numpy and transformers' top level (allennlp and this project use them at
import: base classes, tensors, tokenizers); allennlp's own modules (every `allennlp` command imports all of them
through `allennlp.commands`, and their import registers the components that configs name: deferring them would need
the registry itself to be deferred); boto3 and the Google Cloud client (cached_path catches their exception classes
in `except` clauses, which a stand-in cannot be); this project's plugins (they define the components).

LUKE_ALLENNLP_EAGER_IMPORTS=1 turns the deferral off (benchmarks/startup.py measures with and without it).
"""

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
import threading
import types
from typing import Any, Dict, Optional, Set, Tuple

EAGER = "LUKE_ALLENNLP_EAGER_IMPORTS"

# Module -> the allennlp modules that import it at module level, and what they use it for (only inside functions).
DEFERRED_MODULES: Dict[str, str] = {
    "spacy": "allennlp/__init__, allennlp.common.util (spacy.load, sanitize's isinstance), the spaCy tokenizer, "
    "indexer and sentence splitter, TextField (isinstance)",
    "nltk": "allennlp.training.metrics.evalb_bracketing_scorer (nltk.Tree), Registrable's suggestions",
    "transformers.models.bert.modeling_bert": "allennlp.modules.transformer.activation_layer (ACT2FN)",
    "scipy.stats": "the spearman_correlation metric (stats.spearmanr), the fairness metrics",
    "sklearn": "the auc metric (metrics.roc_auc_score), the fairness bias direction (sklearn.decomposition)",
}

# allennlp module -> names it takes from `transformers` at import and uses only inside functions.
DEFERRED_NAMES: Dict[str, Tuple[str, ...]] = {
    # AutoModel.from_pretrained / from_config; PreTrainedModel in annotations (its `_model_cache` and `get`)
    "allennlp.common.cached_transformers": ("AutoModel", "PreTrainedModel"),
    "allennlp.modules.token_embedders.pretrained_transformer_embedder": ("XLNetConfig",),  # an isinstance check
}

# Attributes that `typing` probes on what appears in an annotation (`Dict[str, SpacyModelType]`): answered "absent"
# while the package is not loaded, as for a plain class, instead of loading it.
_TYPING_PROBES = frozenset(
    {
        "__origin__",
        "__args__",
        "__parameters__",
        "__typing_subst__",
        "__typing_unpacked_tuple_args__",
        "__typing_is_unpacked_typevartuple__",
        "__typing_is_unpacked__",
        "__supertype__",
    }
)

# A stand-in module's own attributes that load the real module when read; other dunders are absent until then.
_MODULE_DATA = frozenset({"__version__", "__all__"})

_loaded: Set[str] = set()  # deferred roots imported for real (or being imported)
_lock = threading.RLock()


def enabled() -> bool:
    return os.environ.get(EAGER, "").strip() in ("", "0")


def _root(name: str) -> Optional[str]:
    for root in DEFERRED_MODULES:
        if name == root or name.startswith(root + "."):
            return root
    return None


def _is_loaded(name: str) -> bool:
    root = _root(name)
    if root is None or root in _loaded:
        return True
    module = sys.modules.get(root)
    return module is not None and not isinstance(module, _DeferredModule)


def _called_from_allennlp(depth: int = 2) -> bool:
    """Whether the code asking (past the import system's and this module's frames) is allennlp's."""
    frame: Optional[types.FrameType] = sys._getframe(depth)
    while frame is not None:
        name = frame.f_globals.get("__name__") or ""
        if frame.f_code.co_filename.startswith("<frozen importlib") or name in (__name__, "importlib"):
            frame = frame.f_back
            continue
        return name == "allennlp" or name.startswith("allennlp.")
    return False


def load(name: str) -> types.ModuleType:
    """The real module `name` (imported now if it is not yet), its deferred root's stand-ins removed first."""
    root = _root(name)
    if root is not None and root not in _loaded:
        with _lock:
            if root not in _loaded:
                _loaded.add(root)
                for stand_in in [n for n in sys.modules if n == root or n.startswith(root + ".")]:
                    if isinstance(sys.modules[stand_in], _DeferredModule):
                        del sys.modules[stand_in]
    return importlib.import_module(name)


class _Deferred:
    """Something an allennlp module took from a deferred module: `path` is (module, attribute, ...)."""

    __slots__ = ("_path",)

    def __init__(self, path: Tuple[str, ...]) -> None:
        object.__setattr__(self, "_path", path)

    def _resolve(self) -> Any:
        module, *attributes = self._path
        value: Any = load(module)
        for attribute in attributes:
            try:
                owner, value = value, getattr(value, attribute)
            except AttributeError:  # a submodule not imported yet (`spacy.tokens`)
                module = f"{module}.{attribute}"
                value = importlib.import_module(module)
                continue
            if isinstance(value, _Deferred):  # `transformers.NAME` while its module executes: transformers' own
                value = type(owner).__getattr__(owner, attribute)
            if isinstance(value, types.ModuleType):
                module = value.__name__
        return value

    def __getattr__(self, name: str) -> Any:
        loaded = _is_loaded(self._path[0])
        if name in _TYPING_PROBES and (not loaded or _root(self._path[0]) is None):
            raise AttributeError(name)  # (what DEFERRED_NAMES stands for are plain classes)
        if name.startswith("__") or loaded or not _called_from_allennlp():
            return getattr(self._resolve(), name)
        return _Deferred((*self._path, name))  # `spacy.tokens.Token` in allennlp: still nothing loaded

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._resolve()(*args, **kwargs)

    def __getitem__(self, key: Any) -> Any:
        return self._resolve()[key]

    def __contains__(self, key: Any) -> bool:
        return key in self._resolve()

    def __iter__(self) -> Any:
        return iter(self._resolve())

    def __len__(self) -> int:
        return len(self._resolve())

    def __instancecheck__(self, instance: Any) -> bool:
        return _is_loaded(self._path[0]) and isinstance(instance, self._resolve())

    def __subclasscheck__(self, subclass: type) -> bool:
        return _is_loaded(self._path[0]) and issubclass(subclass, self._resolve())

    def __mro_entries__(self, bases: Tuple[Any, ...]) -> Tuple[Any, ...]:
        return (self._resolve(),)

    def __repr__(self) -> str:
        return f"<deferred {'.'.join(self._path)}>"


class _DeferredModule(types.ModuleType):
    """A deferred module as allennlp sees it until the real one is needed."""

    def __getattr__(self, name: str) -> Any:
        loaded = _is_loaded(self.__name__)
        if name.startswith("__") and name not in _MODULE_DATA and not loaded:
            raise AttributeError(name)  # `__file__` (inspect.getmodule asks every module): a stand-in has none
        if name.startswith("__") or loaded or not _called_from_allennlp():
            return getattr(load(self.__name__), name)
        return _Deferred((self.__name__, name))


class DeferringFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Gives allennlp's modules stand-ins for `DEFERRED_MODULES`; anyone else the real modules."""

    def find_spec(
        self, fullname: str, path: Any = None, target: Any = None
    ) -> Optional[importlib.machinery.ModuleSpec]:
        root = _root(fullname)
        if root is None or _is_loaded(root):
            return None
        if not _called_from_allennlp():
            if root not in sys.modules:
                return None  # the first import, not allennlp's: the real package
            load(root)  # a submodule of a stand-in's: the real package, and the submodule imported under it
            return importlib.util.spec_from_loader(fullname, _Imported(importlib.import_module(fullname)))
        if fullname == root and importlib.machinery.PathFinder.find_spec(fullname, path) is None:
            return None  # not installed: the usual ImportError (or repair 1's placeholder)
        return importlib.util.spec_from_loader(fullname, self, is_package=True)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        module = _DeferredModule(spec.name)
        module.__path__ = []  # a package: `import spacy.tokens` makes another stand-in
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        pass


class _Imported(importlib.abc.Loader):
    """Hands the import system a module imported already (under its real parent, which the import system, holding
    the stand-in parent, would not set the attribute of)."""

    def __init__(self, module: types.ModuleType) -> None:
        self.module, self.spec = module, module.__spec__

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        return self.module

    def exec_module(self, module: types.ModuleType) -> None:
        module.__spec__ = self.spec  # (the import system set it to the spec of this loader)


def defer_names(module: types.ModuleType) -> None:
    """Before `module` executes: the names it takes from transformers are stand-ins."""
    transformers = sys.modules.get("transformers")
    if transformers is None or not enabled():
        return
    for name in DEFERRED_NAMES.get(module.__name__, ()):
        if name not in vars(transformers):
            setattr(transformers, name, _Deferred(("transformers", name)))


def restore_names(module: types.ModuleType) -> None:
    """After `module` executed: transformers' own lazy attributes again."""
    transformers = sys.modules.get("transformers")
    if transformers is None:
        return
    for name in DEFERRED_NAMES.get(module.__name__, ()):
        if isinstance(vars(transformers).get(name), _Deferred):
            delattr(transformers, name)


def install() -> None:
    """Puts the finder in front of the import system (unless LUKE_ALLENNLP_EAGER_IMPORTS=1)."""
    if enabled() and not any(isinstance(finder, DeferringFinder) for finder in sys.meta_path):
        sys.meta_path.insert(0, DeferringFinder())
