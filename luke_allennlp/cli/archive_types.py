"""
Allennlp builds what an archive's config names only if it is allowed (`luke_allennlp.resources.archive_config`).

`Registrable.resolve_class_name` imports any dotted `type`; while an archive loads it refuses a dotted name that is not
a registered component of allennlp, this project or a package loaded on purpose; and `allennlp.commands` records the
packages that `--include-package` loads, whose components an archive may then name by module path.
"""

import types
from typing import Any

from luke_allennlp.cli._patch import repaired, replace
from luke_allennlp.resources import archive_config
from luke_allennlp.resources.archive_config import LOADING, allowed_type, type_refusal


def repair_registrable(module: types.ModuleType) -> None:
    """`Registrable.resolve_class_name` refuses a dotted name that is not allowed while an archive loads."""
    registrable = module.Registrable
    if repaired(registrable.resolve_class_name):
        return
    original = registrable.resolve_class_name.__func__

    def resolve_class_name(cls: Any, name: str) -> Any:
        archive = LOADING.get()
        if archive is not None and isinstance(name, str) and name not in module.Registrable._registry[cls]:
            if not allowed_type(name):
                raise type_refusal(archive, f"a {cls.__name__}", name)
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
