"""
Allennlp builds what an archive's config names only in its place (`luke_allennlp.resources.archive_config`).

`Registrable.resolve_class_name` imports any dotted `type`, whatever it is built as; while an archive loads it refuses
a dotted name that is not a class registered under the base class it builds (a `TensorBoardCallback` is no
`DatasetReader`), or one the user trusts; and `allennlp.commands` records the packages that `--include-package` loads,
whose components an archive may then name by module path.
"""

import types
from typing import Any

from luke_allennlp.resources import archive_config
from luke_allennlp.resources.archive_config import allowed_type, loading, type_refusal
from luke_allennlp_compat.patch import repaired, replace


def repair_registrable(module: types.ModuleType) -> None:
    """`Registrable.resolve_class_name` refuses, while an archive loads, a dotted name not registered for its place."""
    registrable = module.Registrable
    if repaired(registrable.resolve_class_name):
        return
    original = registrable.resolve_class_name.__func__

    def resolve_class_name(cls: Any, name: str) -> Any:
        current = loading()
        if current is not None and isinstance(name, str) and name not in module.Registrable._registry[cls]:
            if "." in name and not allowed_type(name, cls):
                raise type_refusal(current.archive, f"a {cls.__name__}", name, cls)
        return original(cls, name)

    resolve_class_name.__doc__ = original.__doc__
    resolve_class_name.__luke_allennlp_compat__ = frozenset({__name__})  # type: ignore[attr-defined]
    registrable.resolve_class_name = classmethod(resolve_class_name)


def record_included_packages(module: types.ModuleType) -> None:
    """`allennlp.commands` remembers the packages that `--include-package` loads: an archive may name their
    components by module path. (Only there: plugins that allennlp finds by itself are not trusted this way.)"""
    import_module_and_submodules = module.import_module_and_submodules
    if repaired(import_module_and_submodules):
        return

    def recorded(package_name: str, *args: Any, **kwargs: Any) -> Any:
        archive_config.INCLUDED.add(package_name)
        return import_module_and_submodules(package_name, *args, **kwargs)

    replace(module, "import_module_and_submodules", recorded)
