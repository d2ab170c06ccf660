"""
Self-contained model archives: a `model.tar.gz` that loads, predicts and exports with nothing beside it.

allennlp's archive holds the training config, the weights and the vocabulary; loading it rebuilds the model and
the dataset readers from the config, whose paths (the base checkpoint of `model_name`, an entity vocabulary, the
stage-1 archive of `from_archive`) had to exist where they were at training time. `archive_model` (what `allennlp
train` calls, through `luke_allennlp.cli.self_contained_archives`) also writes into the archive, under `bundled/`, what
rebuilding needs, and rewrites the archived config to point there:

- a local checkpoint directory named by `model_name` (readers, the `luke` and `pretrained_transformer` embedders,
  `luke_pretraining`): its files without the weights (config, tokenizer, entity vocabulary), since the archive's
  own weights replace them. For a component of another type under `model`, which may need them, the weights are
  bundled too. The embedders, `luke_pretraining` and `luke_entity_disambiguation` get `load_weights: false` (hub
  names too);
- a pretraining corpus directory (`entity_vocab` of `luke_pretraining`, `train_data_path`, the first of several
  joined by commas): its metadata, tokenizer and entity vocabulary, not its rows (what `allennlp export-luke` reads);
- any other local file the readers or the model name (e.g. `luke_squad`'s `mention_dictionary`);
- a `from_archive` model (stage 2 of pretraining): replaced by the model config of that archive, its bundled
  files copied into this one.

`bundled/manifest.json` lists the config keys that hold archive-relative paths (`{"paths": {"model.embedder.
model_name": "bundled/0-tiny-luke"}, "sources": {... the original paths}}`). `load_archive` turns them into
absolute paths (as overrides) wherever the archive is extracted; the bundled files stay on disk until the process
exits, since export-luke reads them after loading. Hub names are kept as they are.
"""

import atexit
import json
import logging
import os
import shutil
import tarfile
import tempfile
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple, Union

from luke_allennlp.resources.output import DiskFullError, disk_full

logger = logging.getLogger(__name__)

BUNDLE_DIR = "bundled"
MANIFEST = "manifest.json"
SECTIONS = ("dataset_reader", "validation_dataset_reader", "model")
# Components under `model` that take `model_name` and `load_weights`: the archive's weights replace the checkpoint's
# (`luke_entity_disambiguation`'s entity prediction head too).
WEIGHTLESS_TYPES = (
    "luke",
    "luke_pretraining",
    "luke_entity_disambiguation",
    "pretrained_transformer",
    "pretrained_transformer_mismatched",
)
PATH_KEY_WORDS = ("model_name", "path", "file", "dir", "vocab", "dictionary")
WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".ckpt", ".h5", ".msgpack", ".th", ".onnx", ".gguf")


class _Bundler:
    """Copies what a config names into `root/bundled/` and rewrites the config; one copy per source."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.paths: Dict[str, str] = {}  # config key -> path relative to the archive root
        self.sources: Dict[str, str] = {}  # config key -> the original value
        self.copies: Dict[Tuple[str, str], str] = {}  # (real source path, kind) -> relative path

    def _target(self, source: str, kind: str) -> Tuple[str, bool]:
        key = (os.path.realpath(source), kind)
        if key in self.copies:
            return self.copies[key], False
        relative = f"{BUNDLE_DIR}/{len(self.copies)}-{Path(key[0]).name or 'root'}"
        self.copies[key] = relative
        return relative, True

    def bundle(self, key: str, value: str, kind: str) -> str:
        relative, new = self._target(value, kind)
        if new:
            destination = self.root / relative
            destination.parent.mkdir(parents=True, exist_ok=True)
            if kind == "file":
                shutil.copyfile(value, destination)
            elif kind == "corpus":
                _copy_corpus_skeleton(Path(value), destination)
            else:
                destination.mkdir()
                for path in sorted(Path(value).iterdir()):
                    if path.is_file() and (kind == "checkpoint" or not _is_weights(path.name)):
                        shutil.copyfile(path, destination / path.name)
        self.paths[key] = relative
        self.sources[key] = value
        return relative

    def manifest(self) -> Dict[str, Any]:
        return {"paths": self.paths, "sources": self.sources}


def _names_a_path(key: str, value: str) -> bool:
    """Whether a config value is a local path: it exists, and its key says so or it looks like one (not `labels`)."""
    looks_like_path = any(word in key for word in PATH_KEY_WORDS) or "/" in value or "." in value
    return key != "type" and looks_like_path and os.path.exists(value)


def _is_weights(name: str) -> bool:
    return name.endswith(WEIGHT_SUFFIXES) or name.endswith(".index.json")


def _is_corpus(path: str) -> bool:
    """A corpus directory, or the skeleton of one that an archive bundles (stage 1's, seen when stage 2 is archived:
    metadata.json and tokenizer/, no rows)."""
    if not os.path.isfile(os.path.join(path, "metadata.json")):
        return False
    return os.path.isfile(os.path.join(path, "state.json")) or os.path.isdir(os.path.join(path, "tokenizer"))


def _copy_corpus_skeleton(corpus: Path, destination: Path) -> None:
    """A pretraining corpus without its rows: metadata.json, the tokenizer and the entity vocabulary."""
    from luke_allennlp.resources.pretraining_corpus import METADATA_FILE, PretrainingCorpus

    found = PretrainingCorpus(corpus)
    destination.mkdir()
    metadata = dict(found.metadata)
    shutil.copytree(found.tokenizer_path, destination / "tokenizer")
    metadata["tokenizer"] = {**metadata["tokenizer"], "path": "tokenizer"}
    entity_vocab = Path(found.entity_vocab_path)
    shutil.copyfile(entity_vocab, destination / entity_vocab.name)
    metadata["entity_vocab"] = entity_vocab.name
    (destination / METADATA_FILE).write_text(json.dumps(metadata, indent=2), encoding="utf-8")


def bundle_config(config: Dict[str, Any], root: Union[str, os.PathLike]) -> Dict[str, Any]:
    """The config rewritten to point into `root/bundled/`, where what it names is copied (see the module's doc)."""
    bundler = _Bundler(Path(root))
    config = json.loads(json.dumps(config))  # a copy
    for section in SECTIONS:
        if section in config:
            config[section] = _walk(config[section], section, bundler, in_model=section == "model")
    corpus = config.get("train_data_path")
    if isinstance(corpus, str):
        from luke_allennlp.resources.pretraining_corpus import corpus_directories

        # (several corpora, one per language for mLUKE, share their tokenizer and entity vocabulary, which the reader
        # checks: the first one's skeleton is what the archive needs)
        corpora = corpus_directories(corpus)
        if all(os.path.isdir(path) and _is_corpus(path) for path in corpora):
            config["train_data_path"] = bundler.bundle("train_data_path", corpora[0], "corpus")
    if bundler.paths:
        (Path(root) / BUNDLE_DIR / MANIFEST).write_text(json.dumps(bundler.manifest(), indent=2), encoding="utf-8")
        logger.info("bundled into the archive: %s", bundler.sources)
    return config


def _walk(node: Any, key: str, bundler: _Bundler, in_model: bool) -> Any:
    if isinstance(node, list):
        return [_walk(item, f"{key}.{i}", bundler, in_model) for i, item in enumerate(node)]
    if not isinstance(node, dict):
        return node
    if node.get("type") == "from_archive" and isinstance(node.get("archive_file"), str):
        return _walk(_archived_model(node["archive_file"]), key, bundler, in_model)
    node = dict(node)
    kind_of_type = node.get("type")
    for name, value in list(node.items()):
        child = f"{key}.{name}"
        if isinstance(value, (dict, list)):
            node[name] = _walk(value, child, bundler, in_model)
        elif isinstance(value, str) and _names_a_path(name, value):
            if os.path.isdir(value) and _is_corpus(value):
                node[name] = bundler.bundle(child, value, "corpus")
            elif os.path.isdir(value) and name == "model_name":
                weightless = not in_model or kind_of_type in WEIGHTLESS_TYPES
                node[name] = bundler.bundle(child, value, "tokenizer" if weightless else "checkpoint")
            elif os.path.isfile(value):
                node[name] = bundler.bundle(child, value, "file")
            else:
                logger.warning("%s = %s is a directory that is not bundled: the archive needs it to load", child, value)
    if in_model and kind_of_type in WEIGHTLESS_TYPES and "model_name" in node:
        # The archive's weights replace the checkpoint's (hub names too: nothing to download); for
        # `luke_pretraining` this also means that nothing is frozen when stage 2 rebuilds stage 1's model.
        node["load_weights"] = False
    return node


def _archived_model(archive_file: str) -> Dict[str, Any]:
    """The `model` config of an archive (for `from_archive`), its bundled paths made absolute."""
    directory, source = _extract(archive_file)
    try:
        # The model section becomes part of the config being trained: checked as any archive's.
        config = _checked_config(directory, archive_file, {})
    finally:
        if source == "temporary":
            _keep_only_bundle(directory)  # until the files are copied into the new archive
    if not isinstance(config.get("model"), dict):
        raise ValueError(f"{archive_file}: its config has no model section")
    return config["model"]


def load_overrides(directory: Union[str, os.PathLike], archive_file: Any = None) -> Dict[str, str]:
    """Overrides that point the config keys of `directory/bundled/manifest.json` at the bundled files (or none);
    a manifest that points outside the archive is refused (`archive_file` named)."""
    from luke_allennlp.resources.archive_config import manifest_paths, read_json

    manifest = Path(directory) / BUNDLE_DIR / MANIFEST
    if not manifest.is_file():
        return {}
    archive = archive_file if archive_file is not None else directory
    found = read_json(manifest, archive, f"{BUNDLE_DIR}/{MANIFEST}")
    return manifest_paths(found.get("paths") if isinstance(found, dict) else None, directory, archive)


def bundle_serialization_dir(serialization_dir: Union[str, os.PathLike], destination: Union[str, os.PathLike]) -> None:
    """Writes into `destination` the serialization directory's config.json rewritten and what it bundles."""
    config = json.loads((Path(serialization_dir) / "config.json").read_text(encoding="utf-8"))
    bundled = bundle_config(config, destination)
    (Path(destination) / "config.json").write_text(json.dumps(bundled, indent=4), encoding="utf-8")


def archive_model(
    serialization_dir: Union[str, os.PathLike],
    weights: str = "best.th",
    archive_path: Optional[Union[str, os.PathLike]] = None,
    include_in_archive: Optional[List[str]] = None,
) -> str:
    """
    allennlp's `archive_model` (same parameters, same archive layout: `config.json`, `weights.th`, `vocabulary/`,
    `meta.json`, the `include_in_archive` globs) with the config bundled (see the module's doc), written atomically;
    then logged to the MLflow run of the directory's `mlflow` callback, where there is one.
    """
    serialization_dir = Path(serialization_dir)
    weights_file = Path(weights) if Path(weights).is_absolute() else serialization_dir / weights
    if not weights_file.exists():
        raise RuntimeError(f"weights file '{weights_file}' does not exist, unable to archive model")
    if not (serialization_dir / "config.json").exists():
        raise RuntimeError(f"config file '{serialization_dir / 'config.json'}' does not exist, unable to archive model")
    archive_file = Path(archive_path) if archive_path is not None else serialization_dir / "model.tar.gz"
    if archive_file.is_dir():
        archive_file = archive_file / "model.tar.gz"
    logger.info("archiving weights, vocabulary and bundled files to %s", archive_file)
    # Written under a temporary name in the same directory, then renamed: a crash while archiving leaves the
    # previous archive (or none), never a broken one.
    temporary = archive_file.with_name(f".{archive_file.name}.tmp-{os.getpid()}")
    try:
        _write_archive(temporary, serialization_dir, weights_file, include_in_archive)
        os.replace(temporary, archive_file)
    except OSError as error:
        full = disk_full(error)
        if full is None:
            raise
        raise DiskFullError(full.errno, full.strerror, str(archive_file)) from error
    finally:
        if temporary.exists():
            temporary.unlink()
    from luke_allennlp.training.callbacks.mlflow import log_archive

    log_archive(str(serialization_dir), str(archive_file))  # to the run's MLflow run, where it has one
    return str(archive_file)


def _write_archive(
    archive_file: Path, serialization_dir: Path, weights_file: Path, include_in_archive: Optional[List[str]]
) -> None:
    import glob

    with tempfile.TemporaryDirectory() as staging, tarfile.open(archive_file, "w:gz") as archive:
        bundle_serialization_dir(serialization_dir, staging)
        archive.add(os.path.join(staging, "config.json"), arcname="config.json")
        archive.add(weights_file, arcname="weights.th")
        archive.add(serialization_dir / "vocabulary", arcname="vocabulary")
        if (serialization_dir / "meta.json").exists():
            archive.add(serialization_dir / "meta.json", arcname="meta.json")
        if os.path.isdir(os.path.join(staging, BUNDLE_DIR)):
            archive.add(os.path.join(staging, BUNDLE_DIR), arcname=BUNDLE_DIR)
        for target in include_in_archive or []:
            for path in glob.glob(str(serialization_dir / target)):
                archive.add(path, arcname=os.path.relpath(path, serialization_dir))
    with open(archive_file, "rb") as written:
        os.fsync(written.fileno())  # on disk before it is renamed over the previous archive


def _extract(archive_file: Union[str, os.PathLike]) -> Tuple[Path, str]:
    """The archive's directory, and where it comes from: `"directory"` (the archive is one, used as it is),
    `"cached"` (its entry in the extraction cache, `resources.archive_cache`) or `"temporary"` (extracted here)."""
    from allennlp.common.file_utils import cached_path

    resolved = cached_path(archive_file)
    if os.path.isdir(resolved):
        return Path(resolved), "directory"
    from luke_allennlp.resources.archive_cache import cached_extraction
    from luke_allennlp.resources.archives import extract_archive

    cached = cached_extraction(resolved, extract_archive)
    if cached is not None:
        return cached, "cached"
    directory = tempfile.mkdtemp(prefix="luke-archive-")
    try:
        extract_archive(resolved, directory)  # unsafe members refused, corruption detected
    except BaseException:
        shutil.rmtree(directory, ignore_errors=True)
        raise
    return Path(directory), "temporary"


def _keep_only_bundle(directory: Path) -> None:
    """Removes an extracted archive but its bundled files, which stay until the process exits."""
    if not (directory / BUNDLE_DIR).is_dir():
        shutil.rmtree(directory, ignore_errors=True)
        return
    for path in directory.iterdir():
        if path.name != BUNDLE_DIR:
            shutil.rmtree(path, ignore_errors=True) if path.is_dir() else path.unlink()
    atexit.register(shutil.rmtree, str(directory), True)


def load_archive(
    archive_file: Any,
    cuda_device: int = -1,
    overrides: Union[str, Dict[str, Any]] = "",
    weights_file: Optional[str] = None,
    *,
    name: Optional[str] = None,
) -> Any:
    """
    allennlp's `load_archive` (same parameters, same `Archive`; errors name the archive `name`, default
    `archive_file`) for an archive that is data: extracted safely, its
    `config.json` read as JSON (never evaluated as Jsonnet), its bundled paths pointed at where it is extracted, and
    checked before anything is built (`luke_allennlp.resources.archive_config`: components registered for their
    places, nothing outside the archive, its JSON files, and a vocabulary that fits its weights); while it is built,
    nothing else can be imported or read (`luke_allennlp.cli.archive_types`, `archive_paths`).
    """
    from allennlp.common.params import Params, parse_overrides

    from luke_allennlp.archival.fit import check_vocabulary_fits, state_dict_mismatch
    from luke_allennlp.modeling.weights import WeightsError
    from luke_allennlp.resources.archive_config import enter_check, loading_archive

    real = enter_check(archive_file)  # a cycle or too deep a nesting, before extracting it again
    logger.info("loading archive file %s", archive_file)
    directory, source = _extract(archive_file)  # (a cached extraction is checked as a new one, at every load)
    archive_file = name if name is not None else archive_file
    try:
        user = dict(overrides) if isinstance(overrides, dict) else parse_overrides(overrides)  # (the user's: Jsonnet)
        config = _checked_config(directory, archive_file, user)
        weights_path = weights_file or _weights_path(directory)
        check_vocabulary_fits(directory, weights_path, archive_file)
        with loading_archive(archive_file, directory, real):
            try:
                return _build(Params(config), str(directory), weights_path, cuda_device, archive_file)
            except RuntimeError as error:
                mismatch = state_dict_mismatch(error, directory, archive_file)
                if mismatch is None:
                    raise
                raise mismatch from error
    except WeightsError as error:
        named = source != "directory" or name is not None
        if not named or not os.path.realpath(error.path).startswith(str(directory.resolve())):
            raise
        raise error.inside(archive_file, directory) from error  # the archive named, not its temporary directory
    finally:
        if source == "temporary":
            _keep_only_bundle(directory)


def _checked_config(directory: Path, archive_file: Any, user: Dict[str, Any]) -> Dict[str, Any]:
    """The archive's config as JSON, with its bundled paths and then the user's overrides, checked."""
    from allennlp.common.params import with_overrides

    from luke_allennlp.resources.archive_config import check_archive_config, check_members, read_archive_config

    check_members(directory, archive_file)  # (a bundled tokenizer.json nested 100,000 deep, a damaged safetensors)
    config = read_archive_config(directory, archive_file)
    for key, path in load_overrides(directory, archive_file).items():
        if not _under(key, user):
            _point(config, key, path, archive_file)
    config = with_overrides(config, user) if user else config
    check_archive_config(config, archive_file, directory, exempt=tuple(user))
    return config


def _point(config: Dict[str, Any], key: str, path: str, archive_file: Any) -> None:
    """Sets the config's `key` (dotted, list items by index) to `path`, the bundled file the manifest names for it."""
    from luke_allennlp.resources.archive_config import ArchiveConfigError

    *parents, last = key.split(".")
    node: Any = config
    for part in parents:
        if isinstance(node, dict) and isinstance(node.get(part), (dict, list)):
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            node = None
            break
    if isinstance(node, dict):
        node[last] = path
    elif isinstance(node, list) and last.isdigit() and int(last) < len(node):
        node[int(last)] = path
    else:
        raise ArchiveConfigError(
            f"{os.fspath(archive_file)}: its bundled/manifest.json points {key}, which its config does not have, into "
            "the archive"
        )


def _under(key: str, keys: Any) -> bool:
    return any(key == k or key.startswith(k + ".") for k in keys)


def _weights_path(directory: Path) -> str:
    from allennlp.models.archival import get_weights_path

    return get_weights_path(str(directory))


def _build(config: Any, directory: str, weights_path: str, cuda_device: int, archive_file: Any) -> Any:
    """allennlp's `load_archive` after it read the config: the meta, the readers, the model with its weights."""
    from allennlp.models import archival

    meta = _read_meta(directory, archive_file)
    dataset_reader, validation_dataset_reader = archival._load_dataset_readers(config.duplicate(), directory)
    model = archival._load_model(config.duplicate(), weights_path, directory, cuda_device)
    if meta is not None:
        archival._check_version_compatibility(archive_file, meta)
    return archival.Archive(
        model=model,
        config=config,
        dataset_reader=dataset_reader,
        validation_dataset_reader=validation_dataset_reader,
        meta=meta,
    )


def _read_meta(directory: str, archive_file: Any) -> Any:
    """The archive's `meta.json` (allennlp's `Meta`: the version that trained it), or None if it has none."""
    from allennlp.common.meta import META_NAME, Meta

    from luke_allennlp.resources.archive_config import ArchiveConfigError, read_json

    path = os.path.join(directory, META_NAME)
    if not os.path.exists(path):
        return None
    found = read_json(path, archive_file, META_NAME)
    if not isinstance(found, dict) or not isinstance(found.get("version"), str):
        raise ArchiveConfigError(f"{os.fspath(archive_file)}: its {META_NAME} holds no version string")
    return Meta(version=found["version"])
