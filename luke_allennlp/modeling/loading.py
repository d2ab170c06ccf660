"""
Loading `LukeEncoder` from checkpoints and saving it for `transformers`.

Sources, from a local directory or a Hugging Face Hub name (hub names need a network):
- a `transformers` LUKE checkpoint (`LukeModel`, `LukeForMaskedLM` or any `LukeFor*` task model);
- a RoBERTa or BERT checkpoint: the word side is copied, the entity side is new (paper §4): a random entity
  table, entity position and token-type embeddings and layer norm copied from the word side, and the three
  entity-aware query matrices initialised from the word query matrix.
"""

import functools
import json
import logging
import os
from typing import Any, Dict, Optional, Tuple, Type

import torch
from torch import nn

from luke_allennlp.modeling.configuration import LukeConfig
from luke_allennlp.modeling.weights import check_safetensors, load_weights

# `LukeEncoder` is not imported here: `encoder.py` imports this module (`LukeEncoder.from_pretrained` passes its
# class in), so the two modules form no import circle.

logger = logging.getLogger(__name__)

WORD_ENCODER_TYPES = ("roberta", "bert", "xlm-roberta", "camembert")
EXTRA_QUERIES = ("w2e_query", "e2w_query", "e2e_query")
# Word-encoder config keys that carry over to `LukeConfig` unchanged.
SHARED_CONFIG_KEYS = (
    "vocab_size",
    "hidden_size",
    "num_hidden_layers",
    "num_attention_heads",
    "intermediate_size",
    "hidden_act",
    "hidden_dropout_prob",
    "attention_probs_dropout_prob",
    "type_vocab_size",
    "initializer_range",
    "layer_norm_eps",
    "pad_token_id",
    "bos_token_id",
    "eos_token_id",
)


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


def read_tokenizer_config(name_or_path: str) -> Dict[str, Any]:
    """The checkpoint's `tokenizer_config.json` ({} if it has none)."""
    path = checkpoint_file(name_or_path, "tokenizer_config.json")
    if path is None:
        return {}
    with open(path, encoding="utf-8") as f:
        config = json.load(f)
    if not isinstance(config, dict):
        raise ValueError(f"{path}: expected a JSON object")
    return config


DEFAULT_MAX_MENTION_LENGTH = 30  # LukeTokenizer's and the original code's


def max_mention_length(name_or_path: str) -> int:
    """The positions an entity's embedding averages at most, its mention's first subwords: the checkpoint's
    tokenizer_config.json `max_mention_length` (transformers' `LukeTokenizer` caps `entity_position_ids` at it), else
    `DEFAULT_MAX_MENTION_LENGTH`."""
    value = read_tokenizer_config(name_or_path).get("max_mention_length", DEFAULT_MAX_MENTION_LENGTH)
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ValueError(
            f"{name_or_path}: tokenizer_config.json's max_mention_length must be a positive integer, not {value!r}"
        )
    return value


def checkpoint_entities(name_or_path: str) -> Optional[Tuple[Dict[str, int], str]]:
    """
    The entity vocabulary (`{title: id}`) the checkpoint's `LukeTokenizer` / `MLukeTokenizer` saved, and the file
    holding it: `entity_vocab.json` (the released checkpoints, transformers 4), else the `entity_vocab` of
    `tokenizer_config.json` (what transformers 5's `save_pretrained` writes instead). None if it has neither.
    """
    path = checkpoint_file(name_or_path, "entity_vocab.json")
    if path is not None:
        with open(path, encoding="utf-8") as f:
            return json.load(f), path
    vocab = read_tokenizer_config(name_or_path).get("entity_vocab")
    if isinstance(vocab, dict):
        return vocab, str(checkpoint_file(name_or_path, "tokenizer_config.json"))
    return None


def special_entity_ids(name_or_path: str, defaults: Dict[str, int]) -> Dict[str, int]:
    """`[PAD]`, `[UNK]`, `[MASK]`, ... ids from the checkpoint's entity vocabulary (LUKE's defaults if it has none)."""
    found = checkpoint_entities(name_or_path)
    if found is None:
        return dict(defaults)
    vocab = found[0]
    return {name: vocab.get(name, default) for name, default in defaults.items()}


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


def _strip_prefix(state: Dict[str, torch.Tensor], prefixes: tuple) -> Dict[str, torch.Tensor]:
    """Keeps the encoder's own keys: drops a task model's prefix (`luke.`, `roberta.`, ...) and its heads."""
    for prefix in prefixes:
        if any(k.startswith(prefix + ".embeddings.") for k in state):
            return {k[len(prefix) + 1 :]: v for k, v in state.items() if k.startswith(prefix + ".")}
    return dict(state)


def rename_legacy_key(key: str) -> str:
    """A weight's name as the models here call it (old TF-converted BERT checkpoints say LayerNorm gamma/beta)."""
    return key.replace("LayerNorm.gamma", "LayerNorm.weight").replace("LayerNorm.beta", "LayerNorm.bias")


def load_encoder(
    encoder_class: Type[nn.Module],
    name_or_path: str,
    *,
    entity_vocab_size: Optional[int] = None,
    entity_emb_size: Optional[int] = None,
    use_entity_aware_attention: Optional[bool] = None,
    add_pooling_layer: bool = True,
    load_weights: bool = True,
    **config_overrides: Any,
) -> nn.Module:
    """
    Builds a `LukeEncoder` from a checkpoint directory or hub name (`LukeEncoder.from_pretrained` calls it).

    # Parameters

    encoder_class : `type`
        The class to build, `LukeEncoder` or a subclass of it.
    name_or_path : `str`
        A directory with `config.json` and weights, or a Hugging Face Hub name.
    entity_vocab_size : `int`, optional
        Required when initialising from RoBERTa/BERT; for a LUKE checkpoint it must match the checkpoint.
    entity_emb_size : `int`, optional
        Entity table width for a new entity side (default 256, as in the paper).
    use_entity_aware_attention : `bool`, optional
        Overrides the checkpoint's setting (default on for a new entity side). Turning it on for a checkpoint
        trained without it initialises the three extra query matrices from the word query matrix.
    add_pooling_layer : `bool`, optional (default = `True`)
    load_weights : `bool`, optional (default = `True`)
        If false, only the architecture is read and the weights are randomly initialised (useful when they
        will be overwritten, e.g. by an AllenNLP archive).
    **config_overrides :
        Other `LukeConfig` fields, e.g. `hidden_dropout_prob`.
    """
    config_dict = read_config(name_or_path)
    model_type = config_dict.get("model_type")
    overrides = dict(config_overrides)
    for key, value in (
        ("entity_vocab_size", entity_vocab_size),
        ("entity_emb_size", entity_emb_size),
        ("use_entity_aware_attention", use_entity_aware_attention),
    ):
        if value is not None:
            overrides[key] = value

    if model_type == "luke":
        config = LukeConfig.from_dict(config_dict, **overrides)
        model = encoder_class(config, add_pooling_layer=add_pooling_layer)
        if load_weights:
            state = _strip_prefix(read_state_dict(name_or_path), ("luke",))
            _load_luke_state(model, state, name_or_path)
    elif model_type in WORD_ENCODER_TYPES:
        if entity_vocab_size is None:
            raise ValueError(
                f"{name_or_path} is a {model_type} checkpoint: give entity_vocab_size to build its entity side"
            )
        config, position_offset = _config_from_word_encoder(config_dict, model_type, overrides)
        model = encoder_class(config, add_pooling_layer=add_pooling_layer)
        if load_weights:
            state = _strip_prefix(read_state_dict(name_or_path), (model_type.replace("-", "_"), "roberta", "bert"))
            _load_word_encoder_state(model, state, position_offset, name_or_path)
    else:
        raise ValueError(f"{name_or_path}: model_type {model_type!r} is neither 'luke' nor one of {WORD_ENCODER_TYPES}")
    if not load_weights:
        model.missing_from_checkpoint = [name for name, _ in model.named_parameters()]
    return model


def _config_from_word_encoder(config_dict: Dict[str, Any], model_type: str, overrides: Dict[str, Any]):
    """LUKE config for a RoBERTa/BERT checkpoint, and how far its position table must shift."""
    words = {k: config_dict[k] for k in SHARED_CONFIG_KEYS if config_dict.get(k) is not None}
    max_positions = config_dict["max_position_embeddings"]
    if model_type == "bert":
        # BERT counts positions from 0; this model counts them from pad_token_id + 1 (RoBERTa's scheme).
        position_offset = words.get("pad_token_id", 0) + 1
        words.setdefault("pad_token_id", 0)
    else:
        position_offset = 0
    config = LukeConfig.from_dict(
        {**words, "max_position_embeddings": max_positions + position_offset, "entity_emb_size": 256},
        **overrides,
    )
    return config, position_offset


def _load_luke_state(model: nn.Module, state: Dict[str, torch.Tensor], source: str) -> None:
    own = model.state_dict()
    state = {rename_legacy_key(k): v for k, v in state.items()}
    query_keys = {k for k in own if k.rsplit(".", 2)[-2] in EXTRA_QUERIES}
    if model.config.use_entity_aware_attention and not any(k in state for k in query_keys):
        logger.info("%s has no entity-aware query matrices: initialising them from the word query", source)
        for key in query_keys:
            layer, _, param = key.rpartition(".")
            state[key] = state[layer.rsplit(".", 1)[0] + ".query." + param]
    _load_checked(model, state, source)


def _load_word_encoder_state(
    model: nn.Module, state: Dict[str, torch.Tensor], position_offset: int, source: str
) -> None:
    state = {
        rename_legacy_key(k): v for k, v in state.items() if k.split(".")[0] in ("embeddings", "encoder", "pooler")
    }
    word_positions = state["embeddings.position_embeddings.weight"]
    if position_offset:
        padding = word_positions.new_zeros(position_offset, word_positions.size(1))
        word_positions = torch.cat([padding, word_positions])
        state["embeddings.position_embeddings.weight"] = word_positions
    # Entity side (paper §4): an entity whose mention covers word index p gets the position embedding of
    # the word at index p, which sits at row p + pad_token_id + 1 of the word table.
    shift = model.config.pad_token_id + 1
    entity_positions = model.entity_embeddings.position_embeddings.weight.detach().clone()
    entity_positions[: word_positions.size(0) - shift] = word_positions[shift:]
    state["entity_embeddings.position_embeddings.weight"] = entity_positions
    for name in ("token_type_embeddings.weight", "LayerNorm.weight", "LayerNorm.bias"):
        state["entity_embeddings." + name] = state["embeddings." + name]
    own = model.state_dict()
    for key in own:
        if key.startswith("entity_embeddings.entity_embedding"):
            state[key] = own[key]  # the new, randomly initialised entity table (and projection)
        elif key.rsplit(".", 2)[-2] in EXTRA_QUERIES:
            layer, _, param = key.rpartition(".")
            state[key] = state[layer.rsplit(".", 1)[0] + ".query." + param]
    _load_checked(model, state, source)


def _load_checked(model: nn.Module, state: Dict[str, torch.Tensor], source: str) -> None:
    """Loads `state`; the pooler may be missing (re-initialised), nothing else may."""
    own = model.state_dict()
    unexpected = sorted(k for k in state if k not in own and not k.endswith("position_ids"))
    if unexpected:
        logger.info("%s: ignoring %d weights the encoder does not use: %s", source, len(unexpected), unexpected[:8])
    mismatched = [
        f"{k}: {tuple(state[k].shape)} != {tuple(v.shape)}"
        for k, v in own.items()
        if k in state and state[k].shape != v.shape
    ]
    if mismatched:
        raise ValueError(f"{source}: weights do not fit the configured encoder: {mismatched}")
    missing = sorted(k for k in own if k not in state)
    if any(not k.startswith("pooler.") for k in missing):
        raise ValueError(f"{source}: the checkpoint lacks {missing}")
    model.missing_from_checkpoint = missing
    if missing:
        logger.warning("%s has no pooler weights: the pooler is randomly initialised", source)
    model.load_state_dict({k: v for k, v in state.items() if k in own}, strict=False)


def save_encoder(model: nn.Module, directory: str) -> None:
    """Writes `config.json` and `model.safetensors` in `transformers.LukeModel`'s layout."""
    os.makedirs(directory, exist_ok=True)
    model.config.to_json_file(os.path.join(directory, "config.json"))
    state = {k: v.detach().contiguous().cpu() for k, v in model.state_dict().items()}
    save_safetensors(state, os.path.join(directory, "model.safetensors"))


def save_safetensors(state: Dict[str, torch.Tensor], path: str) -> None:
    """safetensors' `save_file` (metadata `format: pt`, as transformers writes), with the mode of any new file
    (0666 less the umask, like the config beside it) instead of the 0600 safetensors gives it."""
    from safetensors.torch import save_file

    save_file(state, path, metadata={"format": "pt"})
    umask = os.umask(0o022)  # (read by setting it: no other way)
    os.umask(umask)
    os.chmod(path, 0o666 & ~umask)
