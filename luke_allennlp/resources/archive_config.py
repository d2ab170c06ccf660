"""
An archive's config is data: JSON that names registered components in their places and files inside the archive.

allennlp builds what a config's `type` names; a name that is not registered but holds a dot (`subprocess.Popen`,
`os.system`, `builtins.eval`) is imported by `Registrable.resolve_class_name` and called with the config's other
values, whatever it is built as, so a shared `model.tar.gz` whose `config.json` said `"dataset_reader": {"type":
"subprocess.Popen", "args": [...]}`, or a `validation_dataset_reader` that is a `TensorBoardCallback` with a
`serialization_dir` of its choosing, ran under `allennlp predict`. And allennlp evaluated `config.json` as Jsonnet
(`importstr "/etc/hostname"`, `std.extVar("SECRET")` put a local file or a variable into the error; an exponential
function never ended), and followed the URLs and paths it names. Before anything of an archive is built,
`read_archive_config` reads its `config.json` as JSON (a bounded size and nesting), and `check_archive_config`
refuses, in one line naming the archive and the entry:

- a `type` that is not a class registered under the base class of its slot, at any depth (`archive_slots`);
- `"trust_remote_code": true` anywhere (transformers would run the Python files of a bundled checkpoint);
- a value that names a file, a directory or a URL outside the extracted archive (`archive_paths`).

While an archive loads (`loading_archive`, a stack: `from_archive` and `_pretrained` load archives inside archives),
`resolve_class_name` refuses a dotted name not registered under the class it builds
(`luke_allennlp.cli.archive_types`), `cached_path` anything outside the archive (`luke_allennlp.cli.archive_paths`), and
an archive may nest others `MAX_NESTING` deep, never itself.

The user's opt-ins, for an archive one trusts: `--include-package` (names under that package), and
`LUKE_ARCHIVE_TRUSTED_TYPES` (comma-separated module or class names, `trust_remote_code` for that key, `*` for
anything); `LUKE_ARCHIVE_TRUSTED_PATHS` for paths (`archive_paths`).
"""

import contextlib
import contextvars
import os
import re
from typing import Any, Dict, Iterator, List, NamedTuple, Optional, Set, Tuple

from luke_allennlp.resources.archive_paths import outside_paths, path_refusal

TRUSTED_TYPES_VARIABLE = "LUKE_ARCHIVE_TRUSTED_TYPES"
REMOTE_CODE_KEY = "trust_remote_code"
MAX_NESTING = 3  # archives loaded inside an archive (a `from_archive` model of a `from_archive` model, ...)
MAX_JSON_DEPTH = 100  # nesting of an archive's JSON files (Python's parser recurses; a config needs some 10)
MAX_CONFIG_BYTES = 16 << 20


class Loading(NamedTuple):
    archive: str  # as the user or the config named it
    directory: str  # where it is extracted (the directory itself for an extracted archive)
    real: str  # the archive's real path, to recognise it again


# The archives being loaded in this context, outermost first (empty: not loading one).
LOADING: contextvars.ContextVar[Tuple[Loading, ...]] = contextvars.ContextVar("luke_archive_loading", default=())
# Packages imported on purpose in this process (`--include-package`), whose names an archive may use.
INCLUDED: Set[str] = set()


class ArchiveConfigError(ValueError):
    """An archive whose config names something that loading it would import, run, read or fetch outside it."""

    user_error = True  # the `allennlp` command prints it as one line


def loading() -> Optional[Loading]:
    """The archive being loaded (the innermost), or None."""
    stack = LOADING.get()
    return stack[-1] if stack else None


def _trusted_prefixes() -> List[str]:
    setting = os.environ.get(TRUSTED_TYPES_VARIABLE, "")
    return [entry.strip() for entry in setting.split(",") if entry.strip()] + sorted(INCLUDED)


def trusted_type(name: str) -> bool:
    return any(prefix == "*" or name == prefix or name.startswith(prefix + ".") for prefix in _trusted_prefixes())


def allowed_type(name: str, base: type) -> bool:
    """Whether building `name` as a `base` builds a class registered as one (or one the user trusts)."""
    from luke_allennlp.resources.archive_slots import registered_as

    return registered_as(name, base) is not None or trusted_type(name)


def type_refusal(archive: str, where: str, name: str, base: Optional[type]) -> ArchiveConfigError:
    """The refusal of the `type` `name` at `where`, whose place takes a `base` (None: no component)."""
    from luke_allennlp.resources.archive_slots import registrations

    elsewhere = " and a ".join(sorted({b.__name__ for b in registrations(name)}))
    place = f"a {base.__name__}" if base is not None else "a value passed on as it is"
    if "." not in name:  # (never imported: allennlp looks it up in the registry of its place only)
        registered = f" (it is registered as a {elsewhere})" if elsewhere else ""
        return ArchiveConfigError(
            f"{archive}: its config names the type {name!r} (at {where}), not {place}{registered}"
        )
    module = name.rpartition(".")[0]
    if elsewhere:
        what = f"registered as a {elsewhere}, not {place}: a component is built only from the classes registered for its place"
        trusted = name
    else:
        what, trusted = "not a registered component of allennlp or of the packages loaded", module
    return ArchiveConfigError(
        f"{archive}: its config names the type {name!r} (at {where}), {what}: loading an archive imports and runs "
        f"nothing else (if you trust this archive: --include-package {module}, or {TRUSTED_TYPES_VARIABLE}={trusted})"
    )


def _remote_code_refusal(archive: str, where: str) -> ArchiveConfigError:
    return ArchiveConfigError(
        f"{archive}: its config sets {REMOTE_CODE_KEY} (at {where}): transformers would run the Python files of the "
        f"checkpoint it loads, and loading an archive runs no code (if you trust this archive: "
        f"{TRUSTED_TYPES_VARIABLE}={REMOTE_CODE_KEY})"
    )


def _remote_code(config: Any, where: str = "") -> Iterator[str]:
    if isinstance(config, dict):
        for key, value in config.items():
            path = f"{where}.{key}" if where else str(key)
            if key == REMOTE_CODE_KEY and value not in (False, None) and not trusted_type(REMOTE_CODE_KEY):
                yield path
            else:
                yield from _remote_code(value, path)
    elif isinstance(config, list):
        for i, item in enumerate(config):
            yield from _remote_code(item, f"{where}.{i}" if where else str(i))


def check_archive_config(
    config: Dict[str, Any], archive: Any, directory: Optional[Any] = None, exempt: Tuple[str, ...] = ()
) -> None:
    """
    Raises an `ArchiveConfigError` naming `archive` and the first entry of `config` (its bundled paths pointed into
    `directory`, where it is extracted) that loading would build out of its place, let run code, or follow outside
    `directory` (not checked without one); `exempt`: config keys the user overrides, whose values are the user's.
    Nothing is imported or built to check.
    """
    from luke_allennlp.resources.archive_slots import misplaced_types

    name = os.fspath(archive)

    def archives(where: str) -> bool:  # (not the user's)
        return not any(where == key or where.startswith(key + ".") for key in exempt)

    for where, value, base in misplaced_types(config, trusted_type):
        if archives(where):
            raise type_refusal(name, where, value, base)
    for where in _remote_code(config):
        if archives(where):
            raise _remote_code_refusal(name, where)
    if directory is not None:
        for where, value, why in outside_paths(config, os.fspath(directory), exempt):
            raise ArchiveConfigError(path_refusal(name, where, value, why))


def json_depth(text: str) -> int:
    """How deep arrays and objects nest in a JSON text (strings skipped), without parsing it."""
    depth = deepest = 0
    for bracket in re.findall(r"[\[\]{}]", re.sub(r'"(?:[^"\\]|\\.)*"', "", text)):
        depth += 1 if bracket in "[{" else -1
        deepest = max(deepest, depth)
    return deepest


def read_json(path: Any, archive: Any, what: str, max_bytes: int = MAX_CONFIG_BYTES) -> Any:
    """A JSON file of an archive (its member `what`), bounded in size and nesting; an `ArchiveConfigError` naming
    the archive and the member if it is not such JSON."""
    import json

    if os.path.getsize(path) > max_bytes:
        raise ArchiveConfigError(f"{os.fspath(archive)}: its {what} is larger than {max_bytes >> 20} MiB")
    with open(path, encoding="utf-8") as f:
        try:
            text = f.read()
        except UnicodeDecodeError as error:
            raise ArchiveConfigError(f"{os.fspath(archive)}: its {what} is not UTF-8 text ({error.reason})") from None
    depth = json_depth(text)
    if depth > MAX_JSON_DEPTH:
        raise ArchiveConfigError(
            f"{os.fspath(archive)}: its {what} nests arrays and objects {depth} deep, more than {MAX_JSON_DEPTH}"
        )
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise ArchiveConfigError(
            f"{os.fspath(archive)}: its {what} is not JSON (line {error.lineno}, column {error.colno}: {error.msg}); "
            "an archive's config is read as JSON, never evaluated as Jsonnet"
        ) from None


def read_archive_config(directory: Any, archive: Any) -> Dict[str, Any]:
    """The archive's `config.json` (extracted in `directory`) as JSON: never evaluated as Jsonnet."""
    path = os.path.join(os.fspath(directory), "config.json")
    if not os.path.isfile(path):
        raise ArchiveConfigError(f"{os.fspath(archive)} is not an allennlp model archive (it holds no config.json)")
    config = read_json(path, archive, "config.json")
    if not isinstance(config, dict):
        raise ArchiveConfigError(f"{os.fspath(archive)}: its config.json is not a JSON object")
    return config


def check_members(directory: Any, archive: Any) -> None:
    """Every JSON file of the extracted archive (a bundled `tokenizer.json`, an entity vocabulary) nests at most
    `MAX_JSON_DEPTH` deep (Python's and transformers' parsers failed on it with a `RecursionError`), and every
    safetensors file is whole (`check_safetensors`: a `WeightsError` naming it), before anything reads them."""
    from luke_allennlp.modeling.weights import check_safetensors

    root = os.fspath(directory)
    for folder, _, files in os.walk(root):
        for name in files:
            if name.endswith(".safetensors"):
                check_safetensors(os.path.join(folder, name))
            elif name.endswith((".json", ".jsonl")):
                path = os.path.join(folder, name)
                with open(path, "rb") as f:
                    text = f.read().decode("utf-8", "replace")
                depth = json_depth(text)
                if depth > MAX_JSON_DEPTH:
                    member = os.path.relpath(path, root)
                    raise ArchiveConfigError(
                        f"{os.fspath(archive)}: its {member} nests arrays and objects {depth} deep, more than "
                        f"{MAX_JSON_DEPTH}"
                    )


def enter_check(archive: Any) -> str:
    """The real path of `archive`, checked against the archives being loaded: a cycle (an archive naming itself,
    or one that names it) and nesting deeper than `MAX_NESTING` are refused before it is extracted."""
    name = os.fspath(archive)
    real = os.path.realpath(name) if "://" not in name else name
    stack = LOADING.get()
    for outer in stack:
        if outer.real == real or outer.directory == real:
            raise ArchiveConfigError(f"{stack[0].archive}: its config loads the archive {name} inside itself")
    if len(stack) > MAX_NESTING:
        raise ArchiveConfigError(
            f"{stack[0].archive}: it nests archives more than {MAX_NESTING} deep ({' > '.join(s.archive for s in stack)})"
        )
    return real


@contextlib.contextmanager
def loading_archive(archive: Any, directory: Optional[Any] = None, real: Optional[str] = None) -> Iterator[None]:
    """While in this context, `archive` (extracted in `directory`) is being loaded: building a dotted name that is
    not registered for its place raises an `ArchiveConfigError` naming it (`luke_allennlp.cli.archive_types`), and so
    does reading a file outside `directory` through `cached_path` (`luke_allennlp.cli.archive_paths`)."""
    name = os.fspath(archive)
    entry = Loading(name, os.path.realpath(os.fspath(directory)) if directory is not None else "", real or name)
    token = LOADING.set((*LOADING.get(), entry))
    try:
        yield
    finally:
        LOADING.reset(token)


def manifest_paths(paths: Any, directory: Any, archive: Any) -> Dict[str, str]:
    """The manifest's `{config key: path in the archive}` as absolute paths inside `directory`; a path that is
    absolute or leaves the archive is refused."""
    from luke_allennlp.resources.archive_paths import inside

    if not isinstance(paths, dict):
        raise ArchiveConfigError(f"{os.fspath(archive)}: its bundled/manifest.json has no object of paths")
    root = os.path.realpath(os.fspath(directory))
    resolved = {}
    for key, relative in paths.items():
        target = os.path.join(root, relative) if isinstance(relative, str) and not os.path.isabs(relative) else None
        if target is None or not inside(target, root):
            raise ArchiveConfigError(
                f"{os.fspath(archive)}: its bundled/manifest.json points {key} at {relative!r}, outside the archive"
            )
        resolved[str(key)] = target
    return resolved
