"""
Tiny, randomly initialised checkpoints built offline from a config, for tests, smoke runs and demos.

Each directory holds `config.json`, weights and the RoBERTa tokenizer files, so it works as `model_name` for
`LukeEncoder.from_pretrained`, the `luke` embedder and allennlp's `pretrained_transformer` components.
"""
import os
from pathlib import Path
from typing import Any, Union

import torch

ROBERTA_VOCAB_SIZE = 50265
TINY = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=37)


def shared_data_dir() -> Path:
    """`../shared/data` beside the repository (override with LUKE_SHARED_DATA)."""
    default = Path(__file__).resolve().parents[1].parent / "shared" / "data"
    path = Path(os.environ.get("LUKE_SHARED_DATA", default))
    if not path.is_dir():
        raise FileNotFoundError(
            f"shared data not found at {path}: the folder shared/ must sit beside the checkout "
            "(or set LUKE_SHARED_DATA)"
        )
    return path


def save_roberta_tokenizer(directory: Union[str, os.PathLike]) -> None:
    """Saves the RoBERTa-base BPE tokenizer from the shared data as a fast tokenizer."""
    from transformers import RobertaTokenizerFast

    source = shared_data_dir() / "tokenizers" / "roberta-base"
    tokenizer = RobertaTokenizerFast(vocab_file=str(source / "vocab.json"), merges_file=str(source / "merges.txt"))
    tokenizer.save_pretrained(str(directory))


def write_tiny_checkpoint(
    directory: Union[str, os.PathLike], kind: str = "luke", seed: int = 0, **config: Any
) -> Path:
    """
    Writes a tiny random checkpoint of `kind` "luke" (`LukeEncoder.save_pretrained`), "roberta" or "bert"
    (`transformers` models) with the RoBERTa tokenizer. `config` overrides the tiny sizes.
    """
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(seed)
    sizes = {**TINY, "vocab_size": ROBERTA_VOCAB_SIZE, **config}
    if kind == "luke":
        from luke_allennlp.modeling import LukeConfig, LukeEncoder

        sizes = {"entity_vocab_size": 40, "entity_emb_size": 16, "max_position_embeddings": 514,
                 "type_vocab_size": 1, "layer_norm_eps": 1e-5, **sizes}  # fmt: skip
        LukeEncoder(LukeConfig(**sizes)).save_pretrained(str(directory))
    elif kind == "roberta":
        from transformers import RobertaConfig, RobertaModel

        RobertaModel(RobertaConfig(max_position_embeddings=514, type_vocab_size=1, **sizes)).save_pretrained(directory)
    elif kind == "bert":
        from transformers import BertConfig, BertModel

        BertModel(BertConfig(max_position_embeddings=512, pad_token_id=1, **sizes)).save_pretrained(directory)
    else:
        raise ValueError(f"kind must be luke, roberta or bert, not {kind!r}")
    save_roberta_tokenizer(directory)
    return directory
