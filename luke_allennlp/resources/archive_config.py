"""
An archive's config names only registered components.

allennlp builds what a config's `type` names; a name that is not registered but holds a dot (`subprocess.Popen`,
`os.system`, `builtins.eval`) is imported by `Registrable.resolve_class_name` and called with the config's other
values. So a shared `model.tar.gz` whose `config.json` says `"dataset_reader": {"type": "subprocess.Popen", "args":
[...]}` ran a command under `allennlp predict`, `evaluate`, `export-luke`, a `from_archive` model, ... however safely
its weights are loaded (`luke_allennlp.cli.weights`). An archive is data: before anything of it is built, `check_archive_config` walks its
whole config (every `type` at any depth, in lists, `Lazy` parameters, the vocabulary) and refuses, in one line naming
the archive and the type, any dotted name that is not a registered component of allennlp, this project or a package
loaded on purpose. Names without a dot are never imported (allennlp says itself when one is not registered).
`"trust_remote_code": true` anywhere (transformers would run the Python files of a bundled checkpoint) is refused the
same way. While an archive loads (`loading_archive`), `resolve_class_name` refuses such names too
(`luke_allennlp.cli.archive_types`), so nothing reaches an import whatever builds it.

Allowed, besides registered names: a dotted name of a registered class whose module is already loaded (nothing is
imported to find out); a name under a package given to `--include-package` in this run; a name under a prefix of `LUKE_ARCHIVE_TRUSTED_TYPES` (comma-separated module or
class names, `trust_remote_code` for that key, `*` for anything): the opt-in for an archive one trusts.
"""

import contextlib
import contextvars
import os
from typing import Any, Iterator, List, Optional, Set, Tuple

TRUSTED_TYPES_VARIABLE = "LUKE_ARCHIVE_TRUSTED_TYPES"
REMOTE_CODE_KEY = "trust_remote_code"

# The archive being loaded in this context (None: not loading one): `resolve_class_name` refuses then.
LOADING: contextvars.ContextVar[Optional[str]] = contextvars.ContextVar("luke_archive_loading", default=None)
# Packages imported on purpose in this process (`--include-package`), whose names an archive may use.
INCLUDED: Set[str] = set()


class ArchiveConfigError(ValueError):
    """An archive whose config names something that loading it would import or run: not a registered component."""

    user_error = True  # the `allennlp` command prints it as one line


def _trusted_prefixes() -> List[str]:
    setting = os.environ.get(TRUSTED_TYPES_VARIABLE, "")
    return [entry.strip() for entry in setting.split(",") if entry.strip()] + sorted(INCLUDED)


def _trusted(name: str) -> bool:
    return any(prefix == "*" or name == prefix or name.startswith(prefix + ".") for prefix in _trusted_prefixes())


def _registry() -> Any:
    from allennlp.common.registrable import Registrable

    return Registrable._registry


def _registered_class(name: str) -> bool:
    """Whether a dotted `name` is a registered component's class in a module already loaded (nothing imported)."""
    import sys

    module_name, _, attribute = name.rpartition(".")
    module = sys.modules.get(module_name)
    found = vars(module).get(attribute) if module is not None else None  # (no module __getattr__: it may import)
    if not isinstance(found, type):
        return False
    return any(found is subclass for registry in _registry().values() for subclass, _ in registry.values())


def allowed_type(name: str, registered_names: Optional[Set[str]] = None) -> bool:
    """Whether building a config `type` of this name imports nothing unwanted (see the module's doc)."""
    if "." not in name:
        return True
    if registered_names is None:
        registered_names = {n for registry in _registry().values() for n in registry}
    return name in registered_names or _registered_class(name) or _trusted(name)


def type_refusal(archive: str, where: str, name: str) -> ArchiveConfigError:
    module = name.rpartition(".")[0]
    return ArchiveConfigError(
        f"{archive}: its config names the type {name!r} (at {where}), not a registered component of allennlp or of "
        f"the packages loaded: loading an archive imports and runs nothing else (if you trust this archive: "
        f"--include-package {module}, or {TRUSTED_TYPES_VARIABLE}={module})"
    )


def _remote_code_refusal(archive: str, where: str) -> ArchiveConfigError:
    return ArchiveConfigError(
        f"{archive}: its config sets {REMOTE_CODE_KEY} (at {where}): transformers would run the Python files of the "
        f"checkpoint it loads, and loading an archive runs no code (if you trust this archive: "
        f"{TRUSTED_TYPES_VARIABLE}={REMOTE_CODE_KEY})"
    )


def unsafe_entries(config: Any) -> Iterator[Tuple[str, str, Any]]:
    """`(where, key, value)` of every `type` naming what loading would import, and every `trust_remote_code: true`,
    in a config tree (dicts and lists at any depth)."""
    registered_names = {n for registry in _registry().values() for n in registry}

    def walk(node: Any, where: str) -> Iterator[Tuple[str, str, Any]]:
        if isinstance(node, dict):
            for key, value in node.items():
                path = f"{where}.{key}" if where else str(key)
                if key == "type" and isinstance(value, str) and not allowed_type(value, registered_names):
                    yield path, key, value
                elif key == REMOTE_CODE_KEY and value not in (False, None) and not _trusted(REMOTE_CODE_KEY):
                    yield path, key, value
                else:
                    yield from walk(value, path)
        elif isinstance(node, (list, tuple)):
            for i, item in enumerate(node):
                yield from walk(item, f"{where}.{i}" if where else str(i))

    yield from walk(config, "")


def check_archive_config(config: Any, archive: Any) -> None:
    """
    Raises an `ArchiveConfigError` naming `archive` and the first `type` of `config` (a dict, or the path of a
    config file, evaluated as allennlp does) that loading would import without it being a registered component, or a
    `trust_remote_code: true`. Nothing is imported or built to check.
    """
    if isinstance(config, (str, os.PathLike)):
        from allennlp.common.params import Params

        config = Params.from_file(os.fspath(config)).as_dict(quiet=True)
    for where, key, value in unsafe_entries(config):
        if key == "type":
            raise type_refusal(os.fspath(archive), where, value)
        raise _remote_code_refusal(os.fspath(archive), where)


@contextlib.contextmanager
def loading_archive(archive: Any) -> Iterator[None]:
    """While in this context, building a component by a dotted name that is not allowed raises an
    `ArchiveConfigError` naming `archive` (`luke_allennlp.cli.archive_types` refuses it in `resolve_class_name`)."""
    token = LOADING.set(os.fspath(archive))
    try:
        yield
    finally:
        LOADING.reset(token)
