"""
This project's plugins are found from any directory.

allennlp imports the plugins named in `.allennlp_plugins` of the working directory and in `~/.allennlp/plugins`
(`allennlp.common.plugins.discover_plugins`); run elsewhere, `allennlp` knew no `luke_*` component. Discovery here also
yields the installed plugin package, `luke_allennlp_readers` (which imports `luke_allennlp.plugin`), after those files'
plugins, so that in the repository its `data_readers` comes first and the installed name becomes an alias of it:
nothing is registered twice. Where the package is not installed nothing changes.
"""

import importlib.util
import types
from typing import Any

from luke_allennlp_compat.patch import repaired, replace

PLUGIN = "luke_allennlp_readers"


def repair_plugins(module: types.ModuleType) -> None:
    discover_plugins = module.discover_plugins
    if repaired(discover_plugins):
        return

    def patched_discover_plugins() -> Any:
        found = set()
        for plugin in discover_plugins():  # lazily: allennlp imports each while "." is on the path for the local file
            found.add(plugin)
            yield plugin
        if PLUGIN not in found and importlib.util.find_spec(PLUGIN) is not None:
            yield PLUGIN

    replace(module, "discover_plugins", patched_discover_plugins)
