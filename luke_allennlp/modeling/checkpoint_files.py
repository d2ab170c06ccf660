"""
The files of a model checkpoint, read and written as data: where a checkpoint directory or Hugging Face Hub repository
keeps a file (the hub's local cache first; one line when the hub cannot be reached), its `config.json`, its weights
(`model.safetensors` or `pytorch_model.bin`, sharded or not, weights only), and a checkpoint written in transformers'
layout. What `LukeEncoder.from_pretrained` and `save_pretrained` read and write; the rest of a checkpoint (what its
tokenizer saved) is read in `luke_allennlp.resources.checkpoint_tokenizer`.
"""

import functools
import json
import os
from typing import Any, Dict, Optional

import torch

from luke_allennlp.modeling.weights import check_safetensors, load_weights


class HubUnavailableError(OSError):
    """
    A Hugging Face Hub name that cannot be resolved here: not a local directory, not in the local cache, and
    the hub cannot be reached (offline mode, or no network). Its message is one line that says what to do;
    the `allennlp` command prints it without a traceback.
    """

    user_error = True  # what the `allennlp` command prints as one line


def checkpoint_file(name_or_path: str, filename: str) -> Optional[str]:
    """The local path of `filename` in a checkpoint directory or hub repository, or None if it has none. A name
    that leaves the checkpoint (a shard `"../../x.bin"` of an index file) is refused."""
    normalized = os.path.normpath(filename)
    if os.path.isabs(filename) or normalized == ".." or normalized.startswith(".." + os.sep):
        raise ValueError(f"{name_or_path}: it names the file {filename!r}, outside the checkpoint")
    if os.path.isdir(name_or_path):
        path = os.path.join(name_or_path, filename)
        return path if os.path.isfile(path) else None
    from huggingface_hub import hf_hub_download
    from huggingface_hub.utils import EntryNotFoundError, LocalEntryNotFoundError

    try:  # the local cache first: no network needed for what was downloaded before
        return hf_hub_download(name_or_path, filename, local_files_only=True)
    except LocalEntryNotFoundError:  # not cached (a subclass of EntryNotFoundError)
        pass
    except EntryNotFoundError:  # cached as absent from the repository
        return None
    except Exception:  # noqa: BLE001  (e.g. a malformed name: the online call below names it)
        pass
    unreachable = _hub_unreachable()
    if unreachable is not None:
        raise HubUnavailableError(
            f"{name_or_path!r} is not a local directory, is not in the Hugging Face cache, and the hub cannot be "
            f"reached ({unreachable}): pass the path of a downloaded checkpoint directory instead, or go online"
        )
    try:
        return hf_hub_download(name_or_path, filename)
    except LocalEntryNotFoundError as e:  # the connection failed midway
        error: Exception = e
    except EntryNotFoundError:  # the repository exists but lacks this file
        return None
    except Exception as e:  # no such repository, no access, network failure, ...
        error = e
    raise OSError(
        f"{name_or_path!r} is not a local directory and could not be fetched from the Hugging Face Hub "
        f"({type(error).__name__}: {error}). Without a network, pass the path of a downloaded checkpoint."
    ) from error


@functools.lru_cache(maxsize=None)
def _hub_unreachable() -> Optional[str]:
    """
    Why the hub cannot be reached (offline mode, or a failed connection), or None. One request without
    retries, once per process: huggingface_hub retries a failed connection for about 30 s on every file.
    """
    from huggingface_hub import constants

    if constants.HF_HUB_OFFLINE:
        return "HF_HUB_OFFLINE=1"
    from huggingface_hub.utils import get_session

    try:  # any answer, even an HTTP error, means the hub is reachable; only a failed connection raises
        get_session().head(constants.ENDPOINT, timeout=HUB_PROBE_TIMEOUT)
    except Exception as e:  # noqa: BLE001  (httpx or requests, by huggingface_hub version)
        return f"no network: {type(e).__name__}: {e}"
    return None


HUB_PROBE_TIMEOUT = 10.0  # seconds


def read_config(name_or_path: str) -> Dict[str, Any]:
    path = checkpoint_file(name_or_path, "config.json")
    if path is None:
        raise OSError(f"{name_or_path}: no config.json")
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def read_state_dict(name_or_path: str) -> Dict[str, torch.Tensor]:
    """Reads `model.safetensors` or `pytorch_model.bin`, sharded or not, on the CPU."""
    for name in ("model.safetensors", "pytorch_model.bin"):
        path = checkpoint_file(name_or_path, name)
        if path is not None:
            return _read_weights(path)
    for index_name in ("model.safetensors.index.json", "pytorch_model.bin.index.json"):
        index_path = checkpoint_file(name_or_path, index_name)
        if index_path is not None:
            with open(index_path, encoding="utf-8") as f:
                shards = sorted(set(json.load(f)["weight_map"].values()))
            state: Dict[str, torch.Tensor] = {}
            for shard in shards:
                shard_path = checkpoint_file(name_or_path, shard)
                if shard_path is None:
                    raise OSError(f"{name_or_path}: {index_name} names {shard}, which is missing")
                state.update(_read_weights(shard_path))
            return state
    raise OSError(f"{name_or_path}: no model.safetensors or pytorch_model.bin (sharded or not)")


def _read_weights(path: str) -> Dict[str, torch.Tensor]:
    if path.endswith(".safetensors"):
        from safetensors.torch import load_file

        check_safetensors(path)  # (a damaged file named in one line, not safetensors' traceback)
        return load_file(path)
    return load_weights(path, map_location="cpu")


def write_checkpoint(directory: str, config: Dict[str, Any], state: Dict[str, torch.Tensor]) -> None:
    """Writes `config.json` and `model.safetensors` (the tensors of `state`, on the CPU) into `directory`."""
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, "config.json"), "w", encoding="utf-8") as f:
        json.dump(config, f, indent=2, sort_keys=True)
        f.write("\n")
    tensors = {k: v.detach().contiguous().cpu() for k, v in state.items()}
    save_safetensors(tensors, os.path.join(directory, "model.safetensors"))


def save_safetensors(state: Dict[str, torch.Tensor], path: str) -> None:
    """safetensors' `save_file` (metadata `format: pt`, as transformers writes), with the mode of any new file
    (0666 less the umask, like the config beside it) instead of the 0600 safetensors gives it."""
    from safetensors.torch import save_file

    # Tensors that share a storage (the attention's fused projections: `fused_linears`) are written each on its own,
    # as safetensors requires.
    storages: Dict[int, int] = {}
    for value in state.values():
        storages[value.untyped_storage().data_ptr()] = storages.get(value.untyped_storage().data_ptr(), 0) + 1
    state = {k: v.clone() if storages[v.untyped_storage().data_ptr()] > 1 else v for k, v in state.items()}
    save_file(state, path, metadata={"format": "pt"})
    umask = os.umask(0o022)  # (read by setting it: no other way)
    os.umask(umask)
    os.chmod(path, 0o666 & ~umask)
