"""
While an archive loads, allennlp's `cached_path` reads nothing outside it and fetches nothing.

`from_archive` and `_pretrained` load the archive they name through `cached_path`, which fetched an `http://` URL and
loaded the archive's own path again; so do the `embedding` embedder's `pretrained_file`, ELMo's files, the
`pretrained_transformer` embedder's `override_weights_file`. `check_archive_config` refuses such values before
anything is built (`luke_allennlp.resources.archive_paths`); `cached_path` also refuses, while an archive is being
built (`luke_allennlp.resources.archive_config.loading`), a URL or a path outside that archive's directory, so that a
parameter the check does not know of cannot reach outside either.
"""

import os
import types
from typing import Any

from luke_allennlp.resources.archive_config import ArchiveConfigError, loading
from luke_allennlp.resources.archive_paths import URL, inside, path_refusal, trusted_path
from luke_allennlp_compat.patch import repaired, replace


def repair_file_utils(module: types.ModuleType) -> None:
    cached_path = module.cached_path
    if repaired(cached_path):
        return

    def checked_cached_path(url_or_filename: Any, *args: Any, **kwargs: Any) -> Any:
        current = loading()
        if current is not None and current.directory:
            name = os.fspath(url_or_filename) if isinstance(url_or_filename, (str, os.PathLike)) else None
            if name is not None and not trusted_path(name):
                if URL.match(name):
                    raise ArchiveConfigError(path_refusal(current.archive, "a file it reads", name, "a URL"))
                if not inside(os.path.expanduser(name), current.directory):
                    raise ArchiveConfigError(
                        path_refusal(current.archive, "a file it reads", name, "outside the archive")
                    )
        return cached_path(url_or_filename, *args, **kwargs)

    replace(module, "cached_path", checked_cached_path)
