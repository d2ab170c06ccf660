"""
Building `LukeEncoder` from a checkpoint's config and weights, and saving it for `transformers` (the files themselves
are read and written in `checkpoint_files`).

Sources, from a local directory or a Hugging Face Hub name (hub names need a network):
- a `transformers` LUKE checkpoint (`LukeModel`, `LukeForMaskedLM` or any `LukeFor*` task model);
- a RoBERTa or BERT checkpoint: the word side is copied, the entity side is new (paper §4): a random entity
  table, entity position and token-type embeddings and layer norm copied from the word side, and the three
  entity-aware query matrices initialised from the word query matrix.
"""

import contextlib
import logging
from typing import Any, Callable, Dict, List, Optional, Type

import torch
from torch import nn

from luke_allennlp.modeling.checkpoint_files import read_config, read_state_dict, write_checkpoint
from luke_allennlp.modeling.configuration import LukeConfig

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
    initialize: bool = True,
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
    initialize : `bool`, optional (default = `True`)
        With `load_weights` false: if false too, the weights are not initialised at all (their memory is left as
        allocated): for a caller that overwrites every one of them (an archive's `weights.th`, which allennlp refuses
        with missing keys), whose 2 seconds of random initialisation at LUKE base would be lost.
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

    build = encoder_class if load_weights or initialize else _uninitialized(encoder_class)
    if model_type == "luke":
        config = LukeConfig.from_dict(config_dict, **overrides)
        model = build(config, add_pooling_layer=add_pooling_layer)
        if load_weights:
            state = _strip_prefix(read_state_dict(name_or_path), ("luke",))
            _load_luke_state(model, state, name_or_path)
    elif model_type in WORD_ENCODER_TYPES:
        if entity_vocab_size is None:
            raise ValueError(
                f"{name_or_path} is a {model_type} checkpoint: give entity_vocab_size to build its entity side"
            )
        config, position_offset = _config_from_word_encoder(config_dict, model_type, overrides)
        model = build(config, add_pooling_layer=add_pooling_layer)
        if load_weights:
            state = _strip_prefix(read_state_dict(name_or_path), (model_type.replace("-", "_"), "roberta", "bert"))
            _load_word_encoder_state(model, state, position_offset, name_or_path)
    else:
        raise ValueError(f"{name_or_path}: model_type {model_type!r} is neither 'luke' nor one of {WORD_ENCODER_TYPES}")
    if not load_weights:
        model.missing_from_checkpoint = [name for name, _ in model.named_parameters()]
    return model


def _uninitialized(encoder_class: Type[nn.Module]) -> Callable[..., nn.Module]:
    """`encoder_class(...)` with `torch.nn.init`'s initialisers doing nothing while it is built (as transformers'
    `no_init_weights`): its parameters keep whatever memory they were given."""

    def build(*args: Any, **kwargs: Any) -> nn.Module:
        from unittest import mock

        from torch.nn import init

        names = ("normal_", "uniform_", "kaiming_uniform_", "zeros_", "ones_", "trunc_normal_", "xavier_uniform_")
        with contextlib.ExitStack() as stack:
            for name in names:
                stack.enter_context(mock.patch.object(init, name, lambda tensor, *a, **k: tensor))
            return encoder_class(*args, **kwargs)

    return build


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


def shape_mismatches(state: Dict[str, torch.Tensor], own: Dict[str, torch.Tensor]) -> List[str]:
    """`"name: (checkpoint's shape) != (model's)"` for each weight of `state` whose shape the model's differs from."""
    return [
        f"{k}: {tuple(state[k].shape)} != {tuple(v.shape)}"
        for k, v in own.items()
        if k in state and state[k].shape != v.shape
    ]


def _load_checked(model: nn.Module, state: Dict[str, torch.Tensor], source: str) -> None:
    """Loads `state`; the pooler may be missing (re-initialised), nothing else may."""
    own = model.state_dict()
    unexpected = sorted(k for k in state if k not in own and not k.endswith("position_ids"))
    if unexpected:
        logger.info("%s: ignoring %d weights the encoder does not use: %s", source, len(unexpected), unexpected[:8])
    mismatched = shape_mismatches(state, own)
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
    write_checkpoint(directory, model.config.to_dict(), model.state_dict())
