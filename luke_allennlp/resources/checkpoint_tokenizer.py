"""
What a checkpoint's tokenizer saved beside its weights (a directory or a Hugging Face Hub name): `tokenizer_config.json`,
the entity vocabulary (`entity_vocab.json` of the released checkpoints, or the `entity_vocab` of `tokenizer_config.json`
that transformers 5 writes instead), its special entities' ids, and the mention length that its entity positions are
capped at. The model's own files (`config.json`, the weights) are read in `luke_allennlp.modeling.checkpoint_files`.
"""

import json
from typing import Any, Dict, Optional, Tuple

from luke_allennlp.modeling.checkpoint_files import checkpoint_file
from luke_allennlp.resources.files import load_json


def read_tokenizer_config(name_or_path: str) -> Dict[str, Any]:
    """The checkpoint's `tokenizer_config.json` ({} if it has none)."""
    path = checkpoint_file(name_or_path, "tokenizer_config.json")
    if path is None:
        return {}
    config = load_json(path)
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
