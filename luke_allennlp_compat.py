"""
Every workaround that lets allennlp 2.10.1 run on Python 3.11-3.12 with torch 2.x, transformers 5.x and
huggingface_hub 1.x-2.x, in one place (the repairs for transformers 4.x are kept where harmless, untested). No file of an installed package is edited.

allennlp 2.10.1 pins torch<1.13 and transformers<4.21, so it is installed without its pinned requirements
(see the Makefile) and breaks on a modern stack in these ways, each repaired here:

1. allennlp (and cached_path, which it uses for paths) imports at module level packages that only features this
   project does not use need, and `allennlp train` imports every allennlp submodule: torchvision (vision
   models; no torchvision build loads beside a CPU-only torch here), spaCy (spaCy tokenizers), boto3/botocore
   (s3:// paths) and the Google Cloud client (gs:// paths). Where one of them is missing or fails to load, a
   placeholder package is installed (`OPTIONAL_DEPENDENCIES`): importing it works, its attributes are classes
   that nothing is an instance of (allennlp's `sanitize` checks for spaCy tokens), and using anything from it
   raises an error that names the feature and the original import failure. An importable one is left alone.
   This lets a GPU machine run the project without these heavy packages (see `make wheelhouse`).
2. `allennlp.training.optimizers` subclasses `transformers.AdamW`, removed in transformers 4.50. Where it
   is missing, `transformers.AdamW` is set to `HuggingfaceAdamW` below, the same algorithm (decoupled
   weight decay, optional bias correction).
3. `allennlp.common.push_to_hf` imports `HfFolder` and `Repository` from huggingface_hub, removed in 1.0, and
   calls `HfApi.create_repo(name=..., organization=...)`, which huggingface_hub 1.x rejects. Where missing, the
   two names become placeholders that raise on use, and `push_to_hf` (hence `allennlp push-to-hf`) is replaced
   by one that uploads over HTTP, without git: `HfApi.create_repo(repo_id, exist_ok=True)`, then one
   `upload_folder` commit of the files allennlp's own version pushed (`_repair_push_to_hf`).
4. `allennlp.common.cached_transformers.get_tokenizer` passes `add_special_tokens` to
   `AutoTokenizer.from_pretrained`, which recent tokenizers reject as a constructor argument (allennlp
   adds special tokens itself). The keyword is dropped there.
5. transformers 5 removed the tokenizer methods `encode_plus` and `build_inputs_with_special_tokens`, which
   allennlp's `pretrained_transformer` tokenizer and indexer call. Where missing, they are added to
   `PreTrainedTokenizerBase`: `encode_plus` is the tokenizer's `__call__` on one example (as it was in 4.x),
   and `build_inputs_with_special_tokens` puts the special tokens where the tokenizer's own post-processor
   does (`special_tokens_template`). Existing methods are never replaced.
6. `allennlp predict` stopped at a bad input line (malformed JSON, an input the predictor refuses, bytes that are
   not UTF-8) without naming it: its input reading and batch prediction are wrapped so that the error names the
   file and line (`_repair_predict`).
7. `allennlp.models.archival` extracts `model.tar.gz` with `tarfile.extractall` and no filter, which before
   Python 3.14 trusts every member: `../` names, absolute paths and links write outside the extraction
   directory. And tarfile stops reading before gzip's trailer, so a corrupted archive (flipped bytes) loads
   with garbage weights. `extract_archive` below refuses unsafe members before writing them (and extracts
   through tarfile's `data` filter where it exists) and reads the stream to its end so that gzip checks its
   CRC; an `ArchiveError` names the archive and what is wrong. It replaces allennlp's `extracted_archive`
   (used by `load_archive`: `predict`, `evaluate`, `from_archive` models, the pretrained initializer) and
   `cached_path`'s tar check (`extract_archive=True`), and makes `data` the default filter of any other
   extraction in the process (`allennlp.tools.archive_surgery`).
8. An error meant for the user (a bad input line, a damaged archive, a missing file, a hub name without a network,
   ...) was printed under a traceback of some 40-200 lines: the `allennlp` command prints its one-line message
   instead, the traceback with ALLENNLP_DEBUG=1 (`_repair_commands`).
9. An archive needed the files its config names (the base checkpoint, the stage-1 archive, ...) where they were at
   training time: archives now bundle them (`_repair_self_contained_archives`, `luke_allennlp.archival`).
10. allennlp finds plugins only in `.allennlp_plugins` of the working directory (or `~/.allennlp/plugins`), so
   `allennlp train/predict/export-luke ...` run from anywhere but the repository root knew none of this project's
   components. Plugin discovery (`allennlp.common.plugins.discover_plugins`) also yields this project's installed
   plugin package, `luke_allennlp_readers` (which imports `luke_allennlp`), where it is importable and not yet
   listed: installing the package is enough, whatever the directory (`_repair_plugins`).
11. allennlp loads weights with `torch.load` without `weights_only`, so TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD=1 let a
   crafted `weights.th` run code: every path passes `weights_only=True` (`load_weights`), and an unreadable file is
   named. Also silenced: the FutureWarning of allennlp's `torch.cuda.amp.autocast` on every training run.
12. `allennlp predict` / `evaluate` wrote over an input given as an output (`--output-file IN`): refused before
   anything is opened (`refuse_overwriting_inputs`); evaluate logs the data's path, not its stem.

`install()` puts a meta-path hook in front of the import system. It imports nothing heavy: the repairs
run when `allennlp` (or the named submodule) is first imported. `luke_allennlp_compat.pth`, installed
into site-packages, calls `install()` at interpreter start-up so the real `allennlp` command is repaired
before it imports anything; importing `luke_allennlp` calls it too.
"""

import functools
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import logging
import math
import sys
import types
from typing import Any, Callable, Dict, List, Optional, Tuple

logger = logging.getLogger("luke_allennlp_compat")

_installed = False
_dependencies_repaired = False


# --- 1. optional dependencies ------------------------------------------------------------------------

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


def _repair_optional_dependencies() -> None:
    for name, needed_for in OPTIONAL_DEPENDENCIES.items():
        _replace_if_unimportable(name, needed_for)


# --- 2. transformers.AdamW -------------------------------------------------------------------------


@functools.lru_cache(maxsize=None)
def huggingface_adamw() -> type:
    """The class (built once, on first use, so that importing this module does not import torch)."""
    import torch

    class HuggingfaceAdamW(torch.optim.Optimizer):
        """
        The AdamW that transformers shipped until 4.49 (`transformers.AdamW`): Adam with weight decay
        decoupled from the gradient and applied after the Adam step, and optional bias correction
        (`correct_bias=False` reproduces the original BERT optimiser).
        """

        def __init__(
            self,
            params: Any,
            lr: float = 1e-3,
            betas: tuple = (0.9, 0.999),
            eps: float = 1e-6,
            weight_decay: float = 0.0,
            correct_bias: bool = True,
            no_deprecation_warning: bool = False,
        ):
            if lr < 0.0:
                raise ValueError(f"Invalid learning rate: {lr} - should be >= 0.0")
            if not 0.0 <= betas[0] < 1.0 or not 0.0 <= betas[1] < 1.0:
                raise ValueError(f"Invalid beta parameters: {betas} - should be in [0.0, 1.0)")
            if eps < 0.0:
                raise ValueError(f"Invalid epsilon value: {eps} - should be >= 0.0")
            defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, correct_bias=correct_bias)
            super().__init__(params, defaults)

        @torch.no_grad()
        def step(self, closure: Optional[Callable] = None) -> Optional[float]:
            loss = None
            if closure is not None:
                with torch.enable_grad():
                    loss = closure()
            for group in self.param_groups:
                beta1, beta2 = group["betas"]
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    if p.grad.is_sparse:
                        raise RuntimeError("AdamW does not support sparse gradients, use SparseAdam instead")
                    state = self.state[p]
                    if not state:
                        state["step"] = 0  # a plain int keeps checkpoints loadable with weights_only=True
                        state["exp_avg"] = torch.zeros_like(p)
                        state["exp_avg_sq"] = torch.zeros_like(p)
                    state["step"] += 1
                    exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
                    exp_avg.mul_(beta1).add_(p.grad, alpha=1.0 - beta1)
                    exp_avg_sq.mul_(beta2).addcmul_(p.grad, p.grad, value=1.0 - beta2)
                    step_size = group["lr"]
                    if group["correct_bias"]:
                        step_size *= math.sqrt(1.0 - beta2 ** state["step"]) / (1.0 - beta1 ** state["step"])
                    p.addcdiv_(exp_avg, exp_avg_sq.sqrt().add_(group["eps"]), value=-step_size)
                    if group["weight_decay"] > 0.0:
                        p.add_(p, alpha=-group["lr"] * group["weight_decay"])
            return loss

    return HuggingfaceAdamW


def _repair_transformers() -> None:
    import transformers

    try:
        transformers.AdamW  # noqa: B018  (a lazy module: the name may be listed yet fail to import)
    except (AttributeError, ImportError):
        transformers.AdamW = huggingface_adamw()


# --- 3. huggingface_hub names used by allennlp.common.push_to_hf ---------------------------------


def _repair_huggingface_hub() -> None:
    import huggingface_hub

    for name in ("HfFolder", "Repository"):
        if not hasattr(huggingface_hub, name):
            setattr(
                huggingface_hub,
                name,
                _unavailable(f"huggingface_hub.{name}", f"removed in huggingface_hub {huggingface_hub.__version__}"),
            )


def _repair_push_to_hf(module: types.ModuleType) -> None:
    """
    Replaces `push_to_hf` (same parameters and result) by an upload without git. The files are those allennlp's
    version pushed: from the serialization directory or the extracted archive, the ones its allow-list names
    (`config.json`, the best weights as `weights.th`, `vocabulary/`, `metrics.json`, `log/`), plus what an
    archive holds besides them (`luke_allennlp.archival`: the files it bundles), and a model card where the
    repository has none. `local_repo_path` is unused (no local clone is made). The token is `use_auth_token`
    if it is a string, else huggingface_hub's own (`hf auth login`, or HF_TOKEN).
    """
    if getattr(module.push_to_hf, "__luke_allennlp_compat__", False):
        return
    import os
    import shutil
    import tarfile
    import tempfile
    import zipfile
    from pathlib import Path

    def push_to_hf(
        repo_name: str,
        serialization_dir: Any = None,
        archive_path: Any = None,
        organization: Optional[str] = None,
        commit_message: str = "Update repository",
        local_repo_path: Any = "hub",
        use_auth_token: Any = True,
    ) -> str:
        if (serialization_dir is None) == (archive_path is None):
            raise ValueError("give either serialization_dir or archive_path (not both)")
        if serialization_dir is not None and not os.path.isdir(serialization_dir):
            raise ValueError(f"{serialization_dir}: not a directory (the serialization directory of a training run)")
        if archive_path is not None and not (
            os.path.isfile(archive_path) and (tarfile.is_tarfile(archive_path) or zipfile.is_zipfile(archive_path))
        ):
            raise ValueError(f"{archive_path}: not a .tar.gz or .zip archive of a trained model")
        repo_id = f"{organization}/{repo_name}" if organization else repo_name
        try:
            return _push(repo_id, serialization_dir, archive_path, commit_message, use_auth_token)
        except Exception as error:
            unreachable = _unreachable(error)
            if unreachable is None:
                raise
            raise HubUploadError(f"cannot push to {repo_id} on the Hugging Face Hub: {unreachable}") from error

    def _unreachable(error: BaseException) -> Optional[str]:
        """What to do when `error` (or its cause) says that the hub cannot be reached; None for other errors."""
        import httpx
        from huggingface_hub.errors import OfflineModeIsEnabled

        while error is not None:
            if isinstance(error, OfflineModeIsEnabled):
                return "offline mode is enabled (HF_HUB_OFFLINE): unset HF_HUB_OFFLINE to upload"
            if isinstance(error, (httpx.TransportError, ConnectionError)):
                return f"the hub cannot be reached ({type(error).__name__}: {error}): check the network, then run again"
            error = error.__cause__ or error.__context__
        return None

    def _push(repo_id: str, serialization_dir: Any, archive_path: Any, commit_message: str, use_auth_token: Any) -> str:
        token = use_auth_token if isinstance(use_auth_token, str) else (None if use_auth_token else False)
        api = module.HfApi(token=token)
        with tempfile.TemporaryDirectory() as work:
            staging = Path(work) / "upload"
            staging.mkdir()
            if serialization_dir is not None:
                source, bundled = Path(serialization_dir), False
            else:
                source = Path(module.cached_path(archive_path, work, extract_archive=True))
                bundled = True
            for path in sorted(source.iterdir()):
                module._copy_allowed_file(path, staging)
            _add_bundled_files(source, staging, bundled)
            if not api.file_exists(repo_id=repo_id, filename="README.md"):
                module._create_model_card(staging)
            url = api.create_repo(repo_id=repo_id, private=False, exist_ok=True)
            logger.info("uploading %s to %s", sorted(p.name for p in staging.iterdir()), repo_id)
            api.upload_folder(repo_id=repo_id, folder_path=str(staging), commit_message=commit_message)
        return str(url)

    def _add_bundled_files(source: Path, staging: Path, from_archive: bool) -> None:
        """What makes the upload load elsewhere: the archive's bundle, or one made now for a serialization directory."""
        archival = _archival()
        if from_archive:
            if (source / archival.BUNDLE_DIR).is_dir():
                shutil.copytree(source / archival.BUNDLE_DIR, staging / archival.BUNDLE_DIR)
        else:
            archival.bundle_serialization_dir(source, staging)

    _replace(module, "push_to_hf", push_to_hf)


# --- 4. allennlp.common.cached_transformers.get_tokenizer ------------------------------------------


class HubUploadError(OSError):
    """`allennlp push-to-hf` without a network, or in offline mode."""

    user_error = True  # the `allennlp` command prints it as one line (repair 8)


PUSH_TO_HF_HELP = (
    "Push a model to the Hugging Face Hub (hf.co) over HTTP, without git: a serialization directory (-s: its config, "
    "best weights, vocabulary, metrics and logs) or an archive (-a), with the files the archive bundles, in one "
    "commit. Log in first with `hf auth login` (or set HF_TOKEN)."
)


def _repair_push_to_hf_command(module: types.ModuleType) -> None:
    """`allennlp push-to-hf --help` as the replacement works: `hf auth login`, and `-l` ignored."""
    command = module.PushToHf
    if getattr(command.add_subparser, "__luke_allennlp_compat__", False):
        return
    add_subparser = command.add_subparser

    def patched_add_subparser(self: Any, parser: Any) -> Any:
        subparser = add_subparser(self, parser)
        subparser.description = PUSH_TO_HF_HELP
        for action in [*subparser._actions, *parser._choices_actions]:
            if action.dest == "local_repo_path":
                action.help = "ignored: nothing is cloned (kept for allennlp's command line)"
            elif getattr(action, "metavar", None) == self.name or action.dest == self.name:
                action.help = PUSH_TO_HF_HELP
        return subparser

    _replace(command, "add_subparser", patched_add_subparser)


def _replace(owner: Any, name: str, function: Callable) -> None:
    """Puts `function` in place of `owner.name`, with its docstring, marked so that a repair is never applied twice."""
    function.__doc__ = getattr(owner, name).__doc__
    function.__luke_allennlp_compat__ = True  # type: ignore[attr-defined]
    setattr(owner, name, function)


def _repair_cached_transformers(module: types.ModuleType) -> None:
    get_tokenizer = module.get_tokenizer
    if getattr(get_tokenizer, "__luke_allennlp_compat__", False):
        return

    def patched_get_tokenizer(model_name: str, **kwargs: Any) -> Any:
        # allennlp adds special tokens itself; recent tokenizers take the keyword as a clashing attribute.
        kwargs.pop("add_special_tokens", None)
        return get_tokenizer(model_name, **kwargs)

    _replace(module, "get_tokenizer", patched_get_tokenizer)


# --- 5. tokenizer methods removed in transformers 5 ------------------------------------------------------


def special_tokens_template(tokenizer: Any, pair: bool = False) -> Tuple[List[int], List[int]]:
    """
    (input ids, token type ids) of what a fast tokenizer makes of one sequence (or a pair), with each
    sequence's content replaced by one marker id, -1 (first) or -2 (second): `([0, -1, 2], [0, 0, 0])` for
    RoBERTa, `([-1, 4, -2, 4, 3], [0, 0, 1, 1, 2])` for an XLNet pair. Read off the tokenizer's own output
    (`sequence_ids`), so it holds for any post-processor, in transformers 4 and 5 alike.
    """
    encoding = tokenizer("a", "b" if pair else None, add_special_tokens=True, return_token_type_ids=True)
    if not getattr(encoding, "is_fast", False):
        raise ValueError(f"{type(tokenizer).__name__} is not a fast tokenizer: its special-token layout cannot be read")
    ids: List[int] = []
    types: List[int] = []
    previous: Optional[int] = None
    for token_id, type_id, sequence in zip(encoding["input_ids"], encoding["token_type_ids"], encoding.sequence_ids()):
        if sequence is None:
            ids.append(token_id)
            types.append(type_id)
        elif sequence != previous:  # the first subword of a sequence stands for all of it
            ids.append(-1 - sequence)
            types.append(type_id)
        previous = sequence
    return ids, types


def _encode_plus(self: Any, text: Any, text_pair: Any = None, **kwargs: Any) -> Any:
    """transformers 4's `encode_plus`: the tokenizer's `__call__` on one example."""
    return self(text, text_pair, **kwargs)


def _build_inputs_with_special_tokens(
    self: Any, token_ids_0: List[int], token_ids_1: Optional[List[int]] = None
) -> List[int]:
    """transformers 4's `build_inputs_with_special_tokens`: the ids with the tokenizer's special tokens around them."""
    template, _ = special_tokens_template(self, pair=token_ids_1 is not None)
    content = {-1: list(token_ids_0), -2: list(token_ids_1 or [])}
    return [i for marker in template for i in content.get(marker, [marker])]


def _repair_tokenizer_methods() -> None:
    from transformers import PreTrainedTokenizerBase

    for name, method in (
        ("encode_plus", _encode_plus),
        ("build_inputs_with_special_tokens", _build_inputs_with_special_tokens),
    ):
        if not hasattr(PreTrainedTokenizerBase, name):
            setattr(PreTrainedTokenizerBase, name, method)


# --- 7. safe extraction of archives --------------------------------------------------------------------


class ArchiveError(ValueError):
    """An archive that cannot be extracted safely: corrupted, not a tar archive, with a member that could
    write outside the extraction directory, or one that extracts to more than the limits below."""

    user_error = True  # the `allennlp` command prints it as one line (repair 8)


# Limits against decompression bombs (an 8.9 MB gzip of a 2 GiB member): the members' sizes, read from their
# headers before anything is written, may add up to at most MAX_RATIO times the archive's compressed size (but
# always to RATIO_FLOOR: small archives of text compress well) and never to more than MAX_BYTES. Trained weights
# compress by ~1.1x, vocabularies by 3-5x. The environment variables LUKE_ARCHIVE_MAX_RATIO and
# LUKE_ARCHIVE_MAX_BYTES (a number of bytes, or with a K/M/G/T suffix) override them; 0 lifts a limit.
ARCHIVE_MAX_RATIO = 100.0
ARCHIVE_RATIO_FLOOR = 64 << 20
ARCHIVE_MAX_BYTES = 32 << 30


def _archive_limit(compressed: Optional[int]) -> Tuple[float, str]:
    """The most bytes an archive of `compressed` bytes may extract to, and what sets that limit."""
    import os

    def setting(variable: str, default: float) -> float:
        value = os.environ.get(variable, "").strip()
        if not value:
            return default
        scale = 1 << (10 * " KMGT".index(value[-1].upper())) if value[-1].upper() in "KMGT" else 1
        try:
            number = float(value[:-1] if scale > 1 else value) * scale
        except ValueError:
            raise ValueError(f"{variable}={value!r}: expected a number (bytes may end in K, M, G or T)") from None
        return number if number > 0 else math.inf

    ratio = setting("LUKE_ARCHIVE_MAX_RATIO", ARCHIVE_MAX_RATIO)
    absolute = setting("LUKE_ARCHIVE_MAX_BYTES", ARCHIVE_MAX_BYTES)
    relative = max(ratio * compressed, ARCHIVE_RATIO_FLOOR) if compressed is not None else math.inf
    if relative < absolute:
        bomb = "a decompression bomb? LUKE_ARCHIVE_MAX_RATIO raises the limit"
        return relative, f"{ratio:g} times the archive's {_size(compressed)} ({bomb})"
    return absolute, f"the limit of {_size(absolute)} (LUKE_ARCHIVE_MAX_BYTES raises it)"


def _size(n: float) -> str:
    return f"{n / (1 << 30):.1f} GiB" if n >= 1 << 30 else f"{n / (1 << 20):.1f} MiB"


def extract_archive(archive_file: Any, directory: Any) -> None:
    """
    Extracts a tar archive (plain, gzip, bzip2 or xz) into `directory` in one pass over its stream, or raises an
    `ArchiveError` naming the archive and what is wrong:

    - unsafe members, refused before they are written (`_MemberCheck`): absolute names, names leaving the
      directory (`../`), devices and pipes, links (symbolic or hard) pointing outside it or to anything but an
      earlier member, paths through a symbolic link, a member replacing an earlier one. Where tarfile has the
      `data` filter (Python 3.8.17+, 3.9.17+, 3.10.12+, 3.11.4+), extraction goes through it as well;
    - corruption: the compressed stream is read to its end, so that gzip (bzip2, xz) checks its CRC and length;
      tarfile alone stops after the last member, before gzip's trailer, and takes a bad header after the first
      for the end of the archive. An uncompressed tar has no checksum to check.

    On an error, what was extracted is left in `directory` for the caller to remove.
    """
    import os
    import tarfile

    name = os.fspath(archive_file)
    with _open_tar(name) as tar:
        check = _MemberCheck(name, os.path.getsize(name))
        members = (check(member) for member in tar)  # headers are read as extraction goes
        try:
            if hasattr(tarfile, "data_filter"):
                tar.extractall(directory, members=members, filter="data")
            else:
                tar.extractall(directory, members=members)
            _read_to_end(tar, name, check.limit)
        except getattr(tarfile, "FilterError", ()) as error:  # (no such class where there is no filter)
            raise ArchiveError(f"{name} is unsafe to extract: {error}") from None
        except _corruption_errors() as error:
            raise ArchiveError(f"{name} is corrupted: {_describe_corruption(error)}") from None


def _open_tar(name: str) -> Any:
    import tarfile

    try:
        return tarfile.open(name)  # gzip, bzip2, xz or none, by the magic bytes
    except tarfile.ReadError as error:
        raise ArchiveError(f"{name} is not a tar archive, or is corrupted ({error})") from None


def _read_to_end(tar: Any, name: str, limit: float = math.inf) -> None:
    """Reads the rest of the (decompressed) stream: at its end the compressor checks its CRC. A stream longer than
    `limit` (a bomb hidden after the last member) is refused."""
    try:
        while tar.fileobj.read(1 << 20):
            if tar.fileobj.tell() > limit + (1 << 20):
                raise ArchiveError(f"{name} is refused: its stream goes on past {_size(limit)} after the last member")
    except _corruption_errors() + (OSError,) as error:  # (OSError: bzip2's "Invalid data stream", ...)
        raise ArchiveError(f"{name} is corrupted: {_describe_corruption(error)}") from None


def _corruption_errors() -> Tuple[type, ...]:
    import gzip
    import lzma
    import tarfile
    import zlib

    return (tarfile.ReadError, gzip.BadGzipFile, EOFError, zlib.error, lzma.LZMAError)


def _describe_corruption(error: BaseException) -> str:
    message = f"{type(error).__name__}: {error}"
    if "CRC" in str(error) or "Incorrect length" in str(error):  # gzip's trailer; bzip2 and xz say "CRC" too
        return f"CRC mismatch ({message})"
    if isinstance(error, EOFError):
        return f"truncated ({message})"
    return message


def _archive_path(path: str) -> str:
    import posixpath

    return posixpath.normpath(path) if path else "."


class _MemberCheck:
    """
    Checks an archive's members in their order, each before it is extracted, so that no member can write (or
    link) outside the extraction directory whatever comes after it: paths stay inside and never go through a
    symbolic link; a link points inside, at an earlier member (a hard link at a regular file); no member
    replaces an earlier one (which could turn a checked path into a link). Stricter than tarfile's `data`
    filter, which resolves links on disk as it goes and so depends on the order of members.
    """

    def __init__(self, name: str, compressed: Optional[int] = None) -> None:
        self.name = name
        self.kinds: Dict[str, str] = {".": "dir"}  # path -> "dir", "file" or "symlink", for every member so far
        self.limit, self.limit_reason = _archive_limit(compressed)  # the members' total size (decompression bombs)
        self.total = 0

    def __call__(self, member: Any) -> Any:
        reason = self._unsafe(member)
        if reason is not None:
            raise ArchiveError(f"{self.name} is unsafe to extract: member {member.name!r} is {reason}")
        self.total += member.size if member.isreg() else 0
        if self.total > self.limit:
            raise ArchiveError(
                f"{self.name} is refused: its members up to {member.name!r} would extract to {_size(self.total)}, "
                f"more than {self.limit_reason}"
            )
        path = _archive_path(member.name)
        parts = path.split("/")
        for i in range(1, len(parts)):
            self.kinds.setdefault("/".join(parts[:i]), "dir")
        self.kinds[path] = "dir" if member.isdir() else "symlink" if member.issym() else "file"
        return member

    def _blocked(self, raw_path: str, link_target: bool = False) -> Optional[str]:
        """Why a path (as written) cannot be taken: a prefix of it is a symbolic link or a file (or, for a link's
        target, not yet a directory, which a later member could make a link)."""
        parts = raw_path.split("/")
        for i in range(1, len(parts)):
            prefix = _archive_path("/".join(parts[:i]))  # each prefix: `s/..` goes through `s`
            kind = self.kinds.get(prefix)
            if kind == "symlink":
                return f"through the symbolic link {prefix!r}"
            if kind == "file":
                return f"inside the file {prefix!r}"
            if kind is None and link_target:
                return f"through {prefix!r}, not an earlier member"
        return None

    def _unsafe(self, member: Any) -> Optional[str]:
        import os
        import posixpath

        raw = member.name
        if raw.startswith(("/", "\\")) or os.path.isabs(raw):
            return "an absolute path"
        path = _archive_path(raw)
        if path == ".." or path.startswith("../"):
            return "outside the extraction directory"
        if not (member.isreg() or member.isdir() or member.issym() or member.islnk()):
            return "a device, pipe or other special file"
        blocked = self._blocked(raw)
        if blocked is not None:
            return f"written {blocked}"
        earlier = self.kinds.get(path)
        if earlier is not None and not (earlier == "dir" and member.isdir()):
            return f"a second member at {path!r}, replacing the first"
        if not (member.issym() or member.islnk()):
            return None
        kind, target = ("a symbolic" if member.issym() else "a hard"), member.linkname
        if not target:
            return f"{kind} link without a target"
        if target.startswith(("/", "\\")) or os.path.isabs(target):
            return f"{kind} link to an absolute path ({target!r})"
        # A symbolic link's target is relative to its directory, a hard link's to the archive's root.
        joined = posixpath.join(posixpath.dirname(path), target) if member.issym() else target
        resolved = _archive_path(joined)
        if resolved == ".." or resolved.startswith("../"):
            return f"{kind} link pointing outside the extraction directory ({target!r})"
        blocked = self._blocked(joined, link_target=True)
        if blocked is not None:
            return f"{kind} link {blocked} ({target!r})"
        wanted = ("dir", "file", "symlink") if member.issym() else ("file",)
        if self.kinds.get(resolved) not in wanted:
            return f"{kind} link to {'anything' if member.issym() else 'a file'} but an earlier member ({target!r})"
        return None


def _checked_tarfile(tar_file: Any) -> None:
    """`cached_path`'s `check_tarfile`, run before it extracts a tar archive: every member checked, the stream
    read to its end (the compressor's CRC), and the `data` filter for the extraction that follows."""
    import os
    import tarfile

    name = str(tar_file.name or "<archive>")
    check = _MemberCheck(name, os.path.getsize(name) if os.path.isfile(name) else None)
    try:
        for member in tar_file:
            check(member)
    except _corruption_errors() as error:
        raise ArchiveError(f"{name} is corrupted: {_describe_corruption(error)}") from None
    _read_to_end(tar_file, name, check.limit)
    if hasattr(tarfile, "data_filter"):
        tar_file.extraction_filter = tarfile.data_filter  # (an instance attribute: called as filter(member, path))


def _repair_cached_path(module: types.ModuleType) -> None:
    module.check_tarfile = _checked_tarfile


def _repair_extraction(module: types.ModuleType) -> None:
    import contextlib
    import shutil
    import tarfile
    import tempfile

    if getattr(module.extracted_archive, "__luke_allennlp_compat__", False):
        return

    @contextlib.contextmanager
    def extracted_archive(resolved_archive_file: Any, cleanup: bool = True) -> Any:
        tempdir = tempfile.mkdtemp()
        try:
            module.logger.info(f"extracting archive file {resolved_archive_file} to temp dir {tempdir}")
            extract_archive(resolved_archive_file, tempdir)
        except BaseException:
            shutil.rmtree(tempdir, ignore_errors=True)  # (allennlp's own leaves a failed extraction behind)
            raise
        try:
            yield tempdir
        finally:
            if cleanup:
                module.logger.info(f"removing temporary unarchived model dir at {tempdir}")
                shutil.rmtree(tempdir, ignore_errors=True)

    extracted_archive.__doc__ = (
        "allennlp's `extracted_archive`, extracting with `luke_allennlp_compat.extract_archive`."
    )
    extracted_archive.__luke_allennlp_compat__ = True  # type: ignore[attr-defined]
    module.extracted_archive = extracted_archive
    # Any other extraction in the process (allennlp.tools.archive_surgery) gets the `data` filter by default, as
    # it will from Python 3.14 on; a default someone else set is kept.
    if getattr(tarfile.TarFile, "extraction_filter", False) is None and hasattr(tarfile, "data_filter"):
        tarfile.TarFile.extraction_filter = staticmethod(tarfile.data_filter)


# Repairs run just before (first) or just after (second) an allennlp module executes. AdamW is set on
# the `transformers` module in use then: loading some transformers submodules replaces that module object.
_MODULE_REPAIRS: Dict[str, Tuple[Optional[Callable[[], None]], Optional[Callable[[types.ModuleType], None]]]] = {
    "allennlp.training.optimizers": (_repair_transformers, None),
    "allennlp.common.cached_transformers": (None, _repair_cached_transformers),
    "allennlp.data.tokenizers.pretrained_transformer_tokenizer": (_repair_tokenizer_methods, None),
    "allennlp.data.token_indexers.pretrained_transformer_indexer": (_repair_tokenizer_methods, None),
    "cached_path._cached_path": (None, _repair_cached_path),
}


# --- 6. allennlp predict: a bad input line is named by file and line ---------------------------------------
# A repair of allennlp itself rather than of the stack it runs on. `allennlp predict` reads its JSON-lines input
# in `_PredictManager._get_json_data` and predicts batches in `_PredictManager._predict_json`; an error in
# either (malformed JSON, an input the predictor refuses) stopped the run without saying which line. Both are
# wrapped here: an input error (ValueError, KeyError, TypeError, IndexError, bytes that are not UTF-8) is raised
# again as a ValueError "FILE, line N: message" (lines numbered from 1, blank lines counted, as an editor shows
# them); for a batch (`--batch-size`), the first line whose input the predictor refuses is named. A byte-order
# mark before the first line is ignored. Nothing else changes.


def _repair_predict(module: types.ModuleType) -> None:
    manager = module._PredictManager
    if getattr(manager._get_json_data, "__luke_allennlp_compat__", False):
        return
    predict_batch = manager._predict_json
    input_errors = (ValueError, KeyError, TypeError, IndexError)

    def get_json_data(self: Any) -> Any:
        stdin = self._input_file == "-"
        name = "<stdin>" if stdin else self._input_file
        self._luke_lines = {}  # id of each parsed input -> (file, line number)
        # Bytes, decoded line by line, so that bytes that are not UTF-8 are found on their own line.
        lines = sys.stdin.buffer if stdin else module.open_compressed(module.cached_path(name), "rb", encoding=None)
        try:
            for number, raw in enumerate(lines, start=1):
                try:
                    line = raw.decode("utf-8-sig" if number == 1 else "utf-8")  # a byte-order mark is dropped
                except UnicodeDecodeError as error:
                    raise ValueError(f"{name}, line {number}: not UTF-8 text ({error.reason})") from None
                if not line or line.isspace():
                    continue
                try:
                    inputs = self._predictor.load_line(line)
                except input_errors as error:  # json.JSONDecodeError is a ValueError
                    raise ValueError(f"{name}, line {number}: {error}") from None
                self._luke_lines[id(inputs)] = (name, number)
                yield inputs
        finally:
            if not stdin:
                lines.close()

    def where(self: Any, batch: List[Any]) -> str:
        named = [self._luke_lines.get(id(inputs), ("input", 0)) for inputs in batch]
        if len(batch) == 1:
            return f"{named[0][0]}, line {named[0][1]}"
        for (name, number), inputs in zip(named, batch):
            try:
                self._predictor._json_to_instance(inputs)
            except Exception:  # noqa: BLE001  (any refusal names this line)
                return f"{name}, line {number}"
        return f"{named[0][0]}, lines {named[0][1]}-{named[-1][1]}"

    def predict_json(self: Any, batch: List[Any]) -> Any:
        try:
            results = list(predict_batch(self, batch))
        except input_errors as error:
            kind = "" if isinstance(error, ValueError) else f"{type(error).__name__}: "
            raise ValueError(f"{where(self, batch)}: {kind}{error}") from error
        finally:
            for inputs in batch:
                getattr(self, "_luke_lines", {}).pop(id(inputs), None)
        yield from results

    _replace(manager, "_get_json_data", get_json_data)
    _replace(manager, "_predict_json", predict_json)
    _guard_predict(module)  # repair 12


_MODULE_REPAIRS["allennlp.commands.predict"] = (None, _repair_predict)
_MODULE_REPAIRS["allennlp.common.push_to_hf"] = (None, _repair_push_to_hf)
_MODULE_REPAIRS["allennlp.commands.push_to_hf"] = (None, _repair_push_to_hf_command)


# --- 8. errors meant for the user: one line, no traceback --------------------------------------------------
# An input error says all the user needs in its message (the file, the line, what is wrong). The `allennlp`
# command printed it under a traceback of some 40-200 lines; `allennlp.commands.main` is wrapped so that it prints
# "allennlp: error: MESSAGE" on stderr and exits with status 1 (the traceback goes to the log at DEBUG level, and
# ALLENNLP_DEBUG=1, allennlp's own debug variable, lets it through). User errors are, in an exception's chain:
# - an exception whose class sets `user_error = True` (`ArchiveError`, `WeightsError`, `CommandLineError` here,
#   `luke_allennlp.modeling.loading.HubUnavailableError`: a hub name without a network, `RecoveryError`, ...);
# - one that this project raises on purpose: a `raise` statement in `luke_allennlp`, the readers' package or this
#   file (the readers' "FILE:LINE: ..." errors, bad configuration values, wrong formats), not an error inside a
#   call it makes (a bug keeps its traceback);
# - a missing or unreadable file or directory (`FileNotFoundError` and its kin, e.g. cached_path's "file X not
#   found"), allennlp's own `ConfigurationError` without an underlying cause, and a config that Jsonnet cannot
#   evaluate (a syntax error, an undefined `std.extVar` variable: `one_line` keeps its location, not its trace).
# Any other exception is left to allennlp.

PATH_ERRORS = (FileNotFoundError, IsADirectoryError, NotADirectoryError, PermissionError)
JSONNET_ERRORS = ("RUNTIME ERROR: ", "STATIC ERROR: ")  # a config that does not evaluate (RuntimeError of _jsonnet)


def one_line(error: BaseException) -> str:
    """A user error's message on one line: a KeyError's without quotes, a Jsonnet error as `FILE:LINE:COL: what`
    (its stack trace dropped), an undefined `std.extVar` variable with what to do."""
    text = error.args[0] if isinstance(error, KeyError) and len(error.args) == 1 else str(error)
    if isinstance(error, RuntimeError) and text.startswith(JSONNET_ERRORS):
        what, *trace = text.split("\n")
        kind, what = what.split(": ", 1)
        if kind == "RUNTIME ERROR" and trace and trace[0].strip():
            what = f"{trace[0].split()[0]}: {what}"  # the innermost location
        if "undefined external variable: " in what:
            variable = what.rsplit(": ", 1)[1]
            what += f" (the config reads it with std.extVar: set it in the environment, e.g. {variable}=...)"
        text = what
    return " ".join(str(text).split()) or type(error).__name__


def user_error(error: BaseException) -> Optional[BaseException]:
    """The first exception in `error`'s chain (itself, its cause, its context) that is meant for the user."""
    seen = set()
    while error is not None and id(error) not in seen:
        if getattr(type(error), "user_error", False) or _raised_on_purpose(error) or isinstance(error, PATH_ERRORS):
            return error
        if type(error).__name__ == "ConfigurationError" and error.__cause__ is None:
            return error
        if isinstance(error, RuntimeError) and str(error).startswith(JSONNET_ERRORS):
            return error
        seen.add(id(error))
        error = error.__cause__ or error.__context__
    return None


def _project_files() -> Tuple[str, ...]:
    """This file and the directories of this project's packages (as far as they are imported)."""
    import os

    packages = [sys.modules.get(name) for name in ("luke_allennlp", "data_readers", PLUGIN)]
    roots = [os.path.dirname(getattr(m, "__file__", None) or "") + os.sep for m in packages if m is not None]
    return (__file__, *[root for root in roots if root != os.sep])


def _raised_on_purpose(error: BaseException) -> bool:
    """Whether a `raise` statement of this project raised `error` (the innermost frame of its traceback is this
    project's code, stopped at a RAISE instruction: not inside a call of something else)."""
    import dis

    tb = error.__traceback__
    if tb is None or isinstance(error, (AssertionError, NotImplementedError)):
        return False
    while tb.tb_next is not None:
        tb = tb.tb_next
    code = tb.tb_frame.f_code
    if not code.co_filename.startswith(_project_files()):
        return False
    return any(i.offset == tb.tb_lasti and i.opname == "RAISE_VARARGS" for i in dis.get_instructions(code))


def _repair_commands(module: types.ModuleType) -> None:
    import os

    main = module.main
    if getattr(main, "__luke_allennlp_compat__", False):
        return

    def patched_main(prog: Optional[str] = None) -> None:
        try:
            main(prog)
        except Exception as error:
            shown = user_error(error)
            if shown is None or os.environ.get("ALLENNLP_DEBUG"):
                raise
            logger.debug("stopped by a user error", exc_info=error)
            sys.stderr.write(f"{prog or 'allennlp'}: error: {one_line(shown)}\n")
            sys.exit(1)

    _replace(module, "main", patched_main)


_MODULE_REPAIRS["allennlp.commands"] = (None, _repair_commands)


# --- 9. self-contained archives --------------------------------------------------------------------------
# An archive rebuilt its model and readers from config paths outside it (the base checkpoint, the stage-1 archive
# of `from_archive`, a corpus): moving them broke `allennlp predict` and `export-luke`. `archive_model` and
# `load_archive` of `allennlp.models.archival` are replaced by `luke_allennlp.archival`'s, which bundle those files
# into the archive and point the archived config at them (see that module). Everything that archives or loads
# (`allennlp train`, `predict`, `evaluate`, `Predictor.from_path`, `from_archive`) binds the replacements, since
# they are set before the module is first imported by anyone.


# The product module that the archive repairs (here and in `push_to_hf` above) hand their work to. It is named, not
# imported: this layer imports nothing of `luke_allennlp` (which imports this one), so the two form no import circle
# (import-linter's contract in pyproject.toml); it is loaded when a repaired function is first called.
ARCHIVAL_MODULE = "luke_allennlp.archival"


def _archival() -> types.ModuleType:
    return importlib.import_module(ARCHIVAL_MODULE)


def _repair_self_contained_archives(module: types.ModuleType) -> None:
    if getattr(module.load_archive, "__luke_allennlp_compat__", False):
        return
    original_load = module.load_archive

    def archive_model(*args: Any, **kwargs: Any) -> str:
        return _archival().archive_model(*args, **kwargs)

    def load_archive(*args: Any, **kwargs: Any) -> Any:
        return _archival().load_archive(original_load, *args, **kwargs)

    _replace(module, "archive_model", archive_model)
    _replace(module, "load_archive", load_archive)


def _repair_archives(module: types.ModuleType) -> None:
    _repair_extraction(module)  # 7
    _repair_self_contained_archives(module)  # 9


_MODULE_REPAIRS["allennlp.models.archival"] = (None, _repair_archives)


# --- 10. plugins found from any directory -------------------------------------------------------------------
# allennlp imports the plugins named in `.allennlp_plugins` of the working directory and in `~/.allennlp/plugins`;
# run elsewhere, `allennlp` knew no `luke_*` component. Discovery now also yields the installed plugin package
# (after those files' plugins, so that in the repository its `data_readers` comes first and the installed name
# becomes an alias of it: nothing is registered twice). Where the package is not installed nothing changes.

PLUGIN = "luke_allennlp_readers"


def _repair_plugins(module: types.ModuleType) -> None:
    discover_plugins = module.discover_plugins
    if getattr(discover_plugins, "__luke_allennlp_compat__", False):
        return

    def patched_discover_plugins() -> Any:
        found = set()
        for plugin in discover_plugins():  # lazily: allennlp imports each while "." is on the path for the local file
            found.add(plugin)
            yield plugin
        if PLUGIN not in found and importlib.util.find_spec(PLUGIN) is not None:
            yield PLUGIN

    _replace(module, "discover_plugins", patched_discover_plugins)


_MODULE_REPAIRS["allennlp.common.plugins"] = (None, _repair_plugins)


# --- 11. weights loaded with weights_only=True, errors naming the file -------------------------------------
# allennlp's `read_state_dict` (archives, `from_archive` models), the `pretrained` initializer, the trainer's
# reload of best.th and the `default` checkpointer call `torch.load` without `weights_only`, so that with
# TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD=1 in the environment a crafted `weights.th` ran code while unpickling. They load
# through `load_weights` instead: `weights_only=True` passed explicitly (which that variable cannot override), and
# a file that does not unpickle raises a `WeightsError` naming it (`luke_allennlp.archival.load_archive` adds the
# archive's name).


class WeightsError(ValueError):
    """A weights file that cannot be loaded: damaged, not a PyTorch file, or holding more than tensors."""

    user_error = True  # the `allennlp` command prints it as one line (repair 8)

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path, self.reason = path, reason

    def inside(self, archive: Any, directory: Any) -> "WeightsError":
        """The same error for the member of `archive` (extracted into `directory`) that it is about."""
        import os

        member = os.path.relpath(self.path, os.fspath(directory))
        return WeightsError(f"{os.fspath(archive)} (its member {member})", self.reason)


def load_weights(path: Any, map_location: Any = "cpu") -> Any:
    """`torch.load(path, map_location, weights_only=True)`, a failure raised as a `WeightsError` naming `path`."""
    import os
    import pickle

    import torch

    try:
        return torch.load(path, map_location=map_location, weights_only=True)
    except pickle.UnpicklingError as error:
        detail = [line.strip() for line in str(error).splitlines() if "WeightsUnpickler error:" in line]
        reason = detail[0].split(":", 1)[1].strip() if detail else str(error).splitlines()[0]
        raise WeightsError(
            os.fspath(path),
            f"refused: it holds Python objects that are not weights ({reason.split('. ')[0]}); weights are loaded "
            "with weights_only=True whatever TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD says",
        ) from error
    except (RuntimeError, EOFError, KeyError, ValueError, OSError) as error:
        if isinstance(error, PATH_ERRORS):  # no such file, a directory, no permission: said as it is
            raise
        first = (str(error).splitlines() or [""])[0].split(". ")[0]
        raise WeightsError(
            os.fspath(path),
            f"cannot be read as PyTorch weights, it is truncated or damaged ({type(error).__name__}: {first})",
        ) from error


def _repair_nn_util(module: types.ModuleType) -> None:
    from collections import OrderedDict

    if getattr(module.read_state_dict, "__luke_allennlp_compat__", False):
        return
    import re

    def read_state_dict(path: Any, strip_prefix: Optional[str] = None, ignore: Optional[List[str]] = None,
                        strict: bool = True, cuda_device: int = -1) -> Dict[str, Any]:  # fmt: skip
        # allennlp's own, but for the load: its key filtering, its errors.
        state = load_weights(path, map_location=module.device_mapping(cuda_device))
        if ignore is not None and not isinstance(ignore, list):
            raise ValueError("'ignore' parameter should be a list")
        out: Dict[str, Any] = OrderedDict()
        prefix_used, ignore_used = False, [False] * len(ignore or [])
        for key in state.keys():
            matched = [i for i, pattern in enumerate(ignore or []) if re.match(pattern, key)]
            if matched:
                ignore_used[matched[0]] = True
                logger.warning("ignoring %s from state dict", key)
                continue
            new_key = key
            if strip_prefix and key.startswith(strip_prefix):
                prefix_used, new_key = True, key[len(strip_prefix) :]
                if not new_key:
                    raise ValueError("'strip_prefix' resulted in an empty string for a key")
            out[new_key] = state[key]
        if strict and strip_prefix is not None and not prefix_used:
            raise ValueError(f"'strip_prefix' of '{strip_prefix}' was never used")
        for pattern, used in zip(ignore or [], ignore_used):
            if strict and not used:
                raise ValueError(f"'ignore' pattern '{pattern}' didn't have any matches")
        return out

    _replace(module, "read_state_dict", read_state_dict)


def _repair_initializers(module: types.ModuleType) -> None:
    initializer = module.PretrainedModelInitializer
    if getattr(initializer.__init__, "__luke_allennlp_compat__", False):
        return
    import tarfile

    def __init__(self: Any, weights_file_path: str, parameter_name_overrides: Dict[str, str] = None) -> None:  # noqa: RUF013 (allennlp's signature)
        from allennlp.models.archival import extracted_archive, get_weights_path

        if tarfile.is_tarfile(weights_file_path):
            with extracted_archive(weights_file_path) as extraction_path:
                try:
                    self.weights = load_weights(get_weights_path(extraction_path))
                except WeightsError as error:
                    raise error.inside(weights_file_path, extraction_path) from error
        else:
            self.weights = load_weights(weights_file_path)
        self.parameter_name_overrides = parameter_name_overrides or {}

    _replace(initializer, "__init__", __init__)


def _repair_trainer_loads(module: types.ModuleType) -> None:
    import warnings

    trainer = module.GradientDescentTrainer
    if getattr(trainer._load_model_state, "__luke_allennlp_compat__", False):
        return
    # allennlp's validation loop enters `torch.cuda.amp.autocast(use_amp)` (a no-op unless fp16), which torch 2.4+
    # deprecates with a FutureWarning on every training run: silenced for that module only.
    warnings.filterwarnings("ignore", r"`torch\.cuda\.amp\.(autocast|GradScaler)\(args\.\.\.\)` is deprecated",
                            FutureWarning, r"allennlp\.training\.gradient_descent_trainer")  # fmt: skip

    def _load_model_state(self: Any, path: str) -> None:
        model = self._ddp_wrapped_model if self._ddp_wrapped_model is not None else self._pytorch_model
        model.load_state_dict(load_weights(path))  # after training, on the CPU (as allennlp's)

    _replace(trainer, "_load_model_state", _load_model_state)


def _repair_checkpointer_loads(module: types.ModuleType) -> None:
    checkpointer = module.Checkpointer
    if getattr(checkpointer.load_checkpoint, "__luke_allennlp_compat__", False):
        return

    def load_checkpoint(self: Any) -> Any:
        latest = self.find_latest_checkpoint()
        if latest is None:
            return None
        model_path, training_state_path = latest
        device = module.nn_util.device_mapping(-1)
        return module.TrainerCheckpoint(load_weights(model_path, device), load_weights(training_state_path, device))

    _replace(checkpointer, "load_checkpoint", load_checkpoint)


_MODULE_REPAIRS["allennlp.nn.util"] = (None, _repair_nn_util)
_MODULE_REPAIRS["allennlp.nn.initializers"] = (None, _repair_initializers)
_MODULE_REPAIRS["allennlp.training.gradient_descent_trainer"] = (None, _repair_trainer_loads)
_MODULE_REPAIRS["allennlp.training.checkpointer"] = (None, _repair_checkpointer_loads)


# --- 12. outputs that would overwrite inputs ----------------------------------------------------------------
# `allennlp predict IN --output-file IN` emptied the input (the output is opened for writing before the input is
# read), and `allennlp evaluate DATA --predictions-output-file DATA` replaced the data with predictions. Before a
# command loads anything, an output path that is one of its inputs (the archive, the data), the same file under
# another name (a symbolic or hard link), or the other output, is refused with a `CommandLineError`.


class CommandLineError(ValueError):
    """Arguments of an `allennlp` command that cannot work together."""

    user_error = True  # the `allennlp` command prints it as one line (repair 8)


def refuse_overwriting_inputs(inputs: List[Tuple[str, Any]], outputs: List[Tuple[str, Any]]) -> None:
    """Raises a `CommandLineError` if an output (`(option, path)`) is the same file as an input or an earlier output
    (`(what, path)`, paths that do not exist are skipped: a URL, "-", an output yet to be written)."""
    import os

    def same(a: Any, b: Any) -> bool:
        return os.path.exists(a) and os.path.exists(b) and os.path.samefile(a, b)

    for i, (option, output) in enumerate(outputs):
        if output is None:
            continue
        for what, path in [*inputs, *outputs[:i]]:
            if path is not None and (os.path.abspath(output) == os.path.abspath(path) or same(output, path)):
                how = "" if os.path.abspath(output) == os.path.abspath(path) else f" ({path}, through a link)"
                raise CommandLineError(
                    f"{option} {output} is {what}{how}: writing it would destroy it; choose another {option}"
                )


def _guard_command(module: types.ModuleType, name: str, paths: Callable[[Any], Tuple[List, List]]) -> None:
    """Wraps the command function `module.name(args)` with `refuse_overwriting_inputs(*paths(args))`."""
    command = getattr(module, name)
    if getattr(command, "__luke_allennlp_compat_guarded__", False):
        return

    def guarded(args: Any) -> Any:
        refuse_overwriting_inputs(*paths(args))
        return command(args)

    guarded.__doc__ = command.__doc__
    guarded.__luke_allennlp_compat_guarded__ = True  # type: ignore[attr-defined]
    setattr(module, name, guarded)


def _split(paths: Optional[str]) -> List[str]:
    return [p for p in paths.split(",") if p] if paths else []


class _EvaluationDataPath(logging.Filter):
    """allennlp's evaluate logs "Reading evaluation data from eng" for `eng.testa` (the file's stem): the path of
    the input file of that stem is logged instead."""

    def __init__(self) -> None:
        super().__init__()
        self.paths: List[str] = []

    def filter(self, record: logging.LogRecord) -> bool:
        if record.msg == "Reading evaluation data from %s" and isinstance(record.args, tuple) and record.args:
            import pathlib

            stems = [p for p in self.paths if pathlib.Path(p).stem == record.args[0]]
            if stems:
                record.args = (stems[0],)
        return True


def _repair_evaluate(module: types.ModuleType) -> None:
    named = _EvaluationDataPath()
    module.logger.addFilter(named)

    def paths(args: Any) -> Tuple[List, List]:
        named.paths = _split(args.input_file)
        inputs = [("the archive", args.archive_file)] + [("the input file", p) for p in named.paths]
        outputs = [("--output-file", p) for p in _split(args.output_file)]
        outputs += [("--predictions-output-file", p) for p in _split(args.predictions_output_file)]
        return inputs, outputs

    _guard_command(module, "evaluate_from_args", paths)


def _guard_predict(module: types.ModuleType) -> None:
    def paths(args: Any) -> Tuple[List, List]:
        return [("the archive", args.archive_file), ("the input file", args.input_file)], [
            ("--output-file", args.output_file)
        ]

    _guard_command(module, "_predict", paths)


_MODULE_REPAIRS["allennlp.commands.evaluate"] = (None, _repair_evaluate)


# --- the import hook --------------------------------------------------------------------------------


def repair_dependencies() -> None:
    """Repairs 1 and 3. Runs before `allennlp` is first imported, or on demand."""
    global _dependencies_repaired
    if _dependencies_repaired:
        return
    _dependencies_repaired = True
    for repair in (_repair_optional_dependencies, _repair_huggingface_hub):
        try:
            repair()
        except ImportError as e:  # that dependency is missing; allennlp will say so itself
            logger.debug("%s skipped: %s", repair.__name__, e)


class _RepairingLoader(importlib.abc.Loader):
    def __init__(self, loader: importlib.abc.Loader, before: Optional[Callable], after: Optional[Callable]):
        self.loader, self.before, self.after = loader, before, after

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> Optional[types.ModuleType]:
        return self.loader.create_module(spec)

    def exec_module(self, module: types.ModuleType) -> None:
        if self.before is not None:
            self.before()
        self.loader.exec_module(module)
        if self.after is not None:
            self.after(module)


class _AllennlpHook(importlib.abc.MetaPathFinder):
    def find_spec(
        self, fullname: str, path: Any = None, target: Any = None
    ) -> Optional[importlib.machinery.ModuleSpec]:
        if fullname == "allennlp":
            repair_dependencies()
        if fullname not in _MODULE_REPAIRS:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path, target)
        if spec is not None and spec.loader is not None:
            spec.loader = _RepairingLoader(spec.loader, *_MODULE_REPAIRS[fullname])
        return spec


def install() -> None:
    """Installs the import hook (idempotent). Repairs modules already imported, where that still helps."""
    global _installed
    if _installed:
        return
    _installed = True
    sys.meta_path.insert(0, _AllennlpHook())
    if "allennlp" in sys.modules:
        repair_dependencies()
    for name, (_, after) in _MODULE_REPAIRS.items():
        if after is not None and name in sys.modules:
            after(sys.modules[name])


def _install_pth(directory: Optional[str] = None) -> str:
    """Writes `luke_allennlp_compat.pth` into site-packages (`make install` runs this for editable installs)."""
    import os
    import sysconfig

    directory = directory or sysconfig.get_paths()["purelib"]
    path = os.path.join(directory, "luke_allennlp_compat.pth")
    with open(path, "w", encoding="utf-8") as f:
        f.write(PTH_LINE)
    return path


PTH_LINE = "import luke_allennlp_compat; luke_allennlp_compat.install()\n"

if __name__ == "__main__":
    print(_install_pth())
