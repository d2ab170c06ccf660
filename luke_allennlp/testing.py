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
# The small LUKE of the learning checks (benchmarks/*_learning_check.py): trained from scratch on real data.
SMALL = dict(hidden_size=128, entity_emb_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=256,
             entity_vocab_size=4)  # fmt: skip


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


def train_from_scratch(config: str, model_dir: Path, train: Path, dev: Path, out: Path, epochs: int, batch_size: int) -> dict:
    """
    Trains a repository config (e.g. `configs/ner/conll2003.jsonnet`) on `train`, validating on `dev`, with the
    settings that suit a small model without pretraining: a larger learning rate, 10% warm-up, 128-subword
    inputs. Returns the run's metrics.
    """
    import json

    from allennlp.commands.train import train_model_from_file

    os.environ.update(MODEL_NAME=str(model_dir), TRAIN_DATA_PATH=str(train), VALIDATION_DATA_PATH=str(dev))
    overrides = {"dataset_reader.max_seq_length": 128, "trainer.num_epochs": epochs, "data_loader.batch_size": batch_size,
                 "trainer.optimizer.lr": 1e-3, "trainer.learning_rate_scheduler.warmup_ratio": 0.1}  # fmt: skip
    repo = Path(__file__).resolve().parents[1]
    train_model_from_file(str(repo / config), str(out), overrides=json.dumps(overrides))
    return json.loads((Path(out) / "metrics.json").read_text())
