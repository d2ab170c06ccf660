"""
Repair 1: optional dependencies that allennlp imports at module level.

allennlp 2.10.1 (and cached_path, which it uses for paths) imports at module level packages that only features this
project does not use need, and `allennlp train` imports every allennlp submodule: torchvision (vision models; no
torchvision build loads beside a CPU-only torch here), spaCy (spaCy tokenizers), boto3/botocore (s3:// paths) and the
Google Cloud client (gs:// paths). allennlp 2.10.1's metadata requires `torchvision<0.14.0,>=0.8.1` and
`spacy<3.4,>=2.1.0` (cached_path requires boto3 and google-cloud-storage), and each torchvision build is tied to one
torch release. Where one of them is missing or fails to load, a placeholder package is installed
(`OPTIONAL_DEPENDENCIES`): importing it works, its attributes are classes that nothing is an instance of (allennlp's
`sanitize` checks for spaCy tokens), and using anything from it raises an error that names the feature and the
original import failure. An importable one is left alone. This lets a GPU machine run the project without these
heavy packages (see `make wheelhouse`). spaCy, when installed, is not imported here: `startup` defers it.
"""

import functools
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import types
from typing import Any, Dict, Optional

from luke_allennlp_compat.patch import logger

# Module -> what needs it. Where one cannot be imported, it (or its first missing parent) becomes a placeholder.
OPTIONAL_DEPENDENCIES: Dict[str, str] = {
    "torchvision": "AllenNLP's vision components need it; install a torchvision build that matches torch",
    "spacy": "AllenNLP's spaCy tokenizers, indexers and sentence splitter need it; install spacy",
    "boto3": "s3:// paths need it; install boto3",
    "botocore": "s3:// paths need it; install boto3",
    "google.cloud.storage": "gs:// paths need it; install google-cloud-storage",
    "google.api_core": "gs:// paths need it; install google-cloud-storage",
    "google.auth": "gs:// paths need it; install google-cloud-storage",
}


class _Unavailable(type):
    """
    Any attribute of a missing optional package: a class (so that allennlp's `isinstance(x, spacy.tokens.Token)`
    checks work, and are False) that nothing is an instance of; calling it, or any attribute of it, raises an
    error that says why.
    """

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        raise ImportError(f"{cls.__qualname__} is unavailable: {cls._reason}")

    def __getattr__(cls, attr: str) -> type:
        if attr.startswith("__"):
            raise AttributeError(attr)
        return _unavailable(f"{cls.__qualname__}.{attr}", cls._reason)


@functools.lru_cache(maxsize=None)
def _unavailable(name: str, reason: str) -> type:
    return _Unavailable(name.rsplit(".", 1)[-1], (), {"__qualname__": name, "_reason": reason})


class _PlaceholderModule(types.ModuleType):
    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__"):
            raise AttributeError(attr)
        return _unavailable(f"{self.__name__}.{attr}", self.__reason__)


class _PlaceholderFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Serves a package (`root`) and all its submodules as placeholder modules."""

    def __init__(self, root: str, reason: str):
        self.root, self.reason = root, reason

    def find_spec(
        self, fullname: str, path: Any = None, target: Any = None
    ) -> Optional[importlib.machinery.ModuleSpec]:
        if fullname == self.root or fullname.startswith(self.root + "."):
            return importlib.util.spec_from_loader(fullname, self, is_package=True)
        return None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        module = _PlaceholderModule(spec.name)
        module.__reason__ = self.reason  # type: ignore[attr-defined]
        module.__path__ = []  # a package, so that `import torchvision.ops.boxes` resolves
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        pass


def _importable(name: str) -> Optional[str]:
    """None if `name` imports, else why not."""
    try:
        importlib.import_module(name)
        return None
    except Exception as e:  # missing, or present but broken (torchvision built for another torch: "operator ...")
        return f"{type(e).__name__}: {e}"


def _replace_if_unimportable(name: str, needed_for: str) -> None:
    from luke_allennlp_compat import startup

    if name in startup.DEFERRED_MODULES and startup.enabled() and importlib.util.find_spec(name) is not None:
        return  # installed: imported on first use (`startup`), not now
    failure = _importable(name)
    if failure is None:
        return
    parts = name.split(".")
    # The first of `google`, `google.cloud`, `google.cloud.storage` that does not import stands for the rest.
    root = next(
        ".".join(parts[:i]) for i in range(1, len(parts) + 1) if i == len(parts) or _importable(".".join(parts[:i]))
    )
    for loaded in [n for n in sys.modules if n == root or n.startswith(root + ".")]:
        del sys.modules[loaded]
    sys.meta_path.insert(0, _PlaceholderFinder(root, f"{name} could not be imported ({failure}). Only {needed_for}."))
    logger.debug("%s replaced by a placeholder (%s)", root, failure)


def repair_optional_dependencies() -> None:
    for name, needed_for in OPTIONAL_DEPENDENCIES.items():
        _replace_if_unimportable(name, needed_for)


def repair_huggingface_hub() -> None:
    """`HfFolder` and `Repository`, which `allennlp.common.push_to_hf` imports and huggingface_hub 1.0 removed
    (huggingface/huggingface_hub#3344 and #3340): placeholders that raise on use (`luke_allennlp.cli.push_to_hf`
    replaces the command that used them)."""
    import huggingface_hub

    for name in ("HfFolder", "Repository"):
        if not hasattr(huggingface_hub, name):
            setattr(
                huggingface_hub,
                name,
                _unavailable(f"huggingface_hub.{name}", f"removed in huggingface_hub {huggingface_hub.__version__}"),
            )
