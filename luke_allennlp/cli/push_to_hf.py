"""
`allennlp push-to-hf` over HTTP, with the files an archive bundles.

allennlp's `push_to_hf` clones the repository with git (`Repository`, and `HfFolder` for the token, both removed in
huggingface_hub 1.0: the compatibility layer puts placeholders in their place so that allennlp still imports) and
calls `HfApi.create_repo(name=..., organization=...)`, which 1.x rejects. It is replaced by one that uploads over HTTP,
without git: `HfApi.create_repo(repo_id, exist_ok=True)`, then one `upload_folder` commit of the files allennlp's own
version pushed and of what `luke_allennlp.archival` bundles. Without a network it stops with one line
(`HubUploadError`), and its `--help` says how to log in today.
"""

import types
from typing import Any, Optional

from luke_allennlp.cli import logger
from luke_allennlp_compat.patch import repaired, replace


def repair_push_to_hf(module: types.ModuleType) -> None:
    """
    Replaces `push_to_hf` (same parameters and result) by an upload without git. The files are those allennlp's
    version pushed: from the serialization directory or the extracted archive, the ones its allow-list names
    (`config.json`, the best weights as `weights.th`, `vocabulary/`, `metrics.json`, `log/`), plus what an
    archive holds besides them (`luke_allennlp.archival`: the files it bundles), and a model card where the
    repository has none. `local_repo_path` is unused (no local clone is made). The token is `use_auth_token`
    if it is a string, else huggingface_hub's own (`hf auth login`, or HF_TOKEN).
    """
    if repaired(module.push_to_hf):
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
        from luke_allennlp import archival

        if from_archive:
            if (source / archival.BUNDLE_DIR).is_dir():
                shutil.copytree(source / archival.BUNDLE_DIR, staging / archival.BUNDLE_DIR)
        else:
            archival.bundle_serialization_dir(source, staging)

    replace(module, "push_to_hf", push_to_hf)


class HubUploadError(OSError):
    """`allennlp push-to-hf` without a network, or in offline mode."""

    user_error = True  # the `allennlp` command prints it as one line (`luke_allennlp.cli.user_errors`)


PUSH_TO_HF_HELP = (
    "Push a model to the Hugging Face Hub (hf.co) over HTTP, without git: a serialization directory (-s: its config, "
    "best weights, vocabulary, metrics and logs) or an archive (-a), with the files the archive bundles, in one "
    "commit. Log in first with `hf auth login` (or set HF_TOKEN)."
)


def repair_push_to_hf_command(module: types.ModuleType) -> None:
    """`allennlp push-to-hf --help` as the replacement works: `hf auth login`, and `-l` ignored."""
    command = module.PushToHf
    if repaired(command.add_subparser):
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

    replace(command, "add_subparser", patched_add_subparser)
