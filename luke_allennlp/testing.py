"""
Test helpers: training a config from scratch, task checkpoints and re-saving with `transformers`. The tiny
checkpoint writers live in `luke_allennlp.fixtures.tiny_checkpoints` (the `build-tiny-checkpoint` command uses them; product
code never imports this module) and are re-exported here, so tests and benchmarks import them from either.
"""

import json
import os
from pathlib import Path
from typing import Any, Dict, Optional, Sequence, Union

import torch

from luke_allennlp.fixtures.tiny_checkpoints import (  # noqa: F401  (re-exported for the tests and benchmarks)
    BASE,
    MLUKE_SAMPLE_ENTITIES,
    ROBERTA_VOCAB_SIZE,
    SMALL,
    TINY,
    save_roberta_tokenizer,
    save_xlmr_tokenizer,
    save_xlnet_tokenizer,
    shared_data_dir,
    write_tiny_checkpoint,
    write_tiny_luke_mlm,
    write_tiny_mluke_checkpoint,
)


def train_from_scratch(
    config: str,
    model_dir: Path,
    train: Path,
    dev: Path,
    out: Path,
    epochs: int,
    batch_size: int,
    overrides: Optional[dict] = None,
) -> dict:
    """
    Trains a repository config (e.g. `configs/ner/conll2003.jsonnet`) on `train`, validating on `dev`, with the
    settings that suit a small model without pretraining: a larger learning rate, 10% warm-up, 128-subword
    inputs; `overrides` (e.g. seeds, another learning rate) go over those. Returns the run's metrics.
    """

    from allennlp.commands.train import train_model_from_file

    try:  # registers the readers the configs use: the repository's folder, or the installed package
        import data_readers  # noqa: F401
    except ImportError:
        import luke_allennlp_readers  # noqa: F401

    os.environ.update(MODEL_NAME=str(model_dir), TRAIN_DATA_PATH=str(train), VALIDATION_DATA_PATH=str(dev))
    overrides = {
        "dataset_reader.max_seq_length": 128,
        "trainer.num_epochs": epochs,
        "data_loader.batch_sampler.batch_size": batch_size,
        "trainer.optimizer.lr": 1e-3,
        "trainer.learning_rate_scheduler.warmup_ratio": 0.1,
        **(overrides or {}),
    }
    repo = Path(__file__).resolve().parents[1]
    train_model_from_file(str(repo / config), str(out), overrides=json.dumps(overrides))
    return json.loads((Path(out) / "metrics.json").read_text())


# The special entities in the order of the released lite checkpoints (`studio-ousia/luke-base-lite`'s
# entity_vocab.json), which differs from LUKE's ([PAD] 0, [UNK] 1, [MASK] 2).
LITE_ENTITY_VOCAB = {"[MASK]": 0, "[UNK]": 1, "[PAD]": 2, "[MASK2]": 3}


def write_tiny_task_checkpoint(
    directory: Union[str, os.PathLike],
    architecture: str,
    labels: Sequence[str] = (),
    entity_vocab: Optional[Dict[str, int]] = None,
    task: Optional[str] = None,
    seed: int = 0,
    **config: Any,
) -> Path:
    """
    Writes a tiny random transformers LUKE checkpoint of class `architecture` (e.g. "LukeForEntitySpanClassification"),
    with `labels` as its id2label, and `LukeTokenizer` files (RoBERTa's BPE from the shared data, `entity_vocab`,
    default `LITE_ENTITY_VOCAB`, and the tokenizer's `task` mode): what `transformers` `save_pretrained` writes for a
    released task checkpoint.
    """
    import transformers
    from transformers import RobertaTokenizerFast

    from luke_allennlp.resources.tokenization import write_luke_tokenizer

    directory = Path(directory)
    entities = dict(entity_vocab or LITE_ENTITY_VOCAB)
    words = RobertaTokenizerFast.from_pretrained(str(shared_data_dir() / "tokenizers" / "roberta-base"))
    tokenizer = write_luke_tokenizer(words, entities, str(directory), task)
    torch.manual_seed(seed)
    sizes = {
        **TINY,
        "vocab_size": max(ROBERTA_VOCAB_SIZE, len(tokenizer)) + 2,
        "entity_vocab_size": max(entities.values()) + 1,
        "entity_emb_size": 16,
        "max_position_embeddings": 514,
        "type_vocab_size": 1,
        "layer_norm_eps": 1e-5,
        "initializer_range": 0.1,
        **config,
    }
    if labels:
        sizes.update(id2label=dict(enumerate(labels)), label2id={label: i for i, label in enumerate(labels)})
    model = getattr(transformers, architecture)(transformers.LukeConfig(**sizes))
    model.save_pretrained(str(directory))
    return directory


def resave_with_transformers(source: Union[str, os.PathLike], directory: Union[str, os.PathLike]) -> Path:
    """
    `source`, a checkpoint directory, loaded with transformers' own classes (`AutoTokenizer`: the `LukeTokenizer`,
    `MLukeTokenizer`, ... its tokenizer_config.json names; the model class of `config.architectures`, else
    `AutoModel`) and written to `directory` by their `save_pretrained`: the layout transformers 5 writes (no
    vocab.json, merges.txt, entity_vocab.json or sentencepiece.bpe.model; `tokenizer.json`, and the entity
    vocabulary inside `tokenizer_config.json`).
    """
    import transformers

    config = json.loads((Path(source) / "config.json").read_text(encoding="utf-8"))
    architecture = (config.get("architectures") or ["AutoModel"])[0]
    model_class = getattr(transformers, architecture, transformers.AutoModel)
    directory = Path(directory)
    transformers.AutoTokenizer.from_pretrained(str(source)).save_pretrained(str(directory))
    model_class.from_pretrained(str(source)).save_pretrained(str(directory))
    return directory
