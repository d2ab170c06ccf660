"""
What an archive's config names on disk or on the network stays inside the archive.

A config's values are followed by what loading builds: `from_archive` and `_pretrained` load the archive they name
(an `http://` URL was fetched; the archive's own path loaded it again, 88 times over), the `pretrained_transformer`
embedder reads `override_weights_file`, readers open their `mention_dictionary`, transformers loads `model_name`
(a directory before a hub name), a `serialization_dir` is created. An archive written by `allennlp train` names only
its own files (`luke_allennlp.archival` bundles them and `bundled/manifest.json` points the config at them), so
`outside_paths` walks what loading follows (the readers, the model but its `pretrained_file` and `initializer`, which
allennlp drops before building it, the data loaders, the evaluator) and yields every value that names something
outside the extracted archive:

- a URL (`scheme://...`);
- an existing file or directory outside the archive: an absolute path (`~` expanded), a relative one with a `/`
  (relative paths resolve against the working directory, never the archive's), or a bare name under a key that
  names a file (`..._file`, `..._path`, `..._dir`, `archive_file`, `model_name`, `..._vocab`, `..._dictionary`, ...);
- under such a key, an absolute or `~` path, or a relative path with a `/` or `..`, that does not exist (it would
  be created, or looked for elsewhere); but a hub name (`org/name`, no `..`) where a `model_name` is expected.

Bare names that exist nowhere (`"checkpoint"`, `"roberta-base"`) and values under other keys that name nothing on
disk (labels such as `"/person/artist"`) pass. `LUKE_ARCHIVE_TRUSTED_PATHS` (comma-separated directories or URL
prefixes, `*` for any) lets an archive one trusts name them.
"""

import os
import re
from typing import Any, Dict, Iterator, Optional, Tuple

TRUSTED_PATHS_VARIABLE = "LUKE_ARCHIVE_TRUSTED_PATHS"
# The sections an archive's loading builds (`load_archive`, `allennlp evaluate`'s data loader and evaluator).
FOLLOWED = (
    "dataset_reader",
    "validation_dataset_reader",
    "model",
    "data_loader",
    "validation_data_loader",
    "evaluation",
)
DROPPED_FROM_MODEL = ("pretrained_file", "initializer")  # allennlp's `remove_keys_from_params` before building
URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
# Words of a key that names a file, a directory or a checkpoint (`override_weights_file`, `cache_dir`, ...).
PATH_WORDS = {
    "path", "paths", "file", "files", "filename", "dir", "dirs", "directory", "folder", "archive", "url", "uri",
    "dictionary", "weights", "cache", "checkpoint", "location", "root",
}  # fmt: skip
RELATIVE = "a path outside the archive (relative paths are read from the working directory)"
HUB_NAME = re.compile(r"^[A-Za-z0-9][\w.-]*(/[A-Za-z0-9][\w.-]*)?$")


def names_a_file(key: str) -> bool:
    """Whether a config key names a file, a directory or a checkpoint: `model_name`, `archive_file`, `cache_dir`,
    `entity_vocab`, `mention_dictionary`, ... (not `vocab_namespace`, `label_namespace`)."""
    words = key.lower().split("_")
    return bool(PATH_WORDS.intersection(words)) or key.endswith("model_name") or words[-1] in ("vocab", "vocabulary")


def _model_name_key(key: str) -> bool:
    return key.endswith("model_name") or "name_or_path" in key


def inside(path: str, directory: str) -> bool:
    """Whether `path` (after resolving links) lies strictly inside `directory`."""
    if "\0" in path:
        return False
    root = os.path.realpath(directory)
    return os.path.realpath(path).startswith(root.rstrip(os.sep) + os.sep)


def trusted_path(value: str) -> bool:
    setting = os.environ.get(TRUSTED_PATHS_VARIABLE, "")
    prefixes = [entry.strip() for entry in setting.split(",") if entry.strip()]
    if "*" in prefixes:
        return True
    if "\0" in value:
        return False
    if URL.match(value):
        return any(value.startswith(prefix) for prefix in prefixes if URL.match(prefix))
    real = os.path.realpath(os.path.expanduser(value))
    return any(real == os.path.realpath(p) or inside(real, p) for p in prefixes if not URL.match(p))


def outside(value: str, key: str, directory: str) -> Optional[str]:
    """Why the config value `value` (under `key`) names something outside the archive extracted in `directory`,
    or None if it does not (see the module's doc)."""
    if URL.match(value):
        return "a URL: loading an archive fetches nothing"
    path_key = names_a_file(key)
    if "\0" in value:  # (names no file: os.path would raise)
        return "not a path (it holds a NUL character)" if path_key else None
    expanded = os.path.expanduser(value) if value.startswith("~") else value
    if os.path.isabs(expanded):
        if inside(expanded, directory):
            return None
        if path_key or os.path.lexists(expanded):
            return "outside the archive"
        return None
    parts = value.replace("\\", "/").split("/")
    if "/" in value or "\\" in value or path_key:
        if os.path.lexists(value):
            return None if inside(value, directory) else RELATIVE
    if not path_key or len(parts) == 1 and ".." not in parts:
        return None
    if _model_name_key(key) and HUB_NAME.match(value) and ".." not in parts:
        return None  # a Hugging Face Hub name
    return RELATIVE


def outside_paths(
    config: Dict[str, Any], directory: str, exempt: Tuple[str, ...] = ()
) -> Iterator[Tuple[str, str, str]]:
    """`(where, value, why)` of every value in what loading `config` follows that names something outside
    `directory` (see the module's doc), but under the keys `exempt` (the user's overrides) and those trusted."""

    def walk(node: Any, where: str, key: str) -> Iterator[Tuple[str, str, str]]:
        if any(where == e or where.startswith(e + ".") for e in exempt):
            return
        if isinstance(node, dict):
            for name, value in node.items():
                if (where == "model" or where.startswith("model.")) and name in DROPPED_FROM_MODEL:
                    continue
                child_key = str(name) if not names_a_file(key) or names_a_file(str(name)) else key
                yield from walk(value, f"{where}.{name}", child_key)
        elif isinstance(node, list):
            for i, item in enumerate(node):
                yield from walk(item, f"{where}.{i}", key)
        elif isinstance(node, str):
            why = outside(node, key, directory)
            if why is not None and not trusted_path(node):
                yield where, node, why

    for section in FOLLOWED:
        if section in config:
            yield from walk(config[section], section, section)


def path_refusal(archive: str, where: str, value: str, why: str) -> str:
    # A training run's serialization directory holds the config as written; its model.tar.gz bundles what it names.
    bundled = os.path.join(archive, "model.tar.gz")
    instead = f"; {bundled} bundles the files it names: load that" if os.path.isfile(bundled) else ""
    return (
        f"{archive}: its config names {value!r} (at {where}), {why}: everything an archive's config names must be "
        f"inside the archive (if you trust this archive: {TRUSTED_PATHS_VARIABLE}={_suggested(value)}){instead}"
    )


def _suggested(value: str) -> str:
    if URL.match(value):
        return value
    expanded = os.path.abspath(os.path.expanduser(value))
    return expanded if os.path.isdir(expanded) else os.path.dirname(expanded)
