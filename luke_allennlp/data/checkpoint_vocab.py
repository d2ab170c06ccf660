"""The entity vocabulary of a checkpoint's entity table, read as the checkpoint's tokenizer wrote it."""

from typing import Optional, Sequence

from allennlp.common.file_utils import cached_path

from luke_allennlp.data.entity_vocab import EntityVocab
from luke_allennlp.data.tokenization import tokenizer_class


def is_mluke_checkpoint(model_name: str) -> bool:
    """Whether the checkpoint's tokenizer is `MLukeTokenizer` (mLUKE: XLM-R's sentencepiece, `language:title` entities)."""
    return tokenizer_class(model_name) == "MLukeTokenizer"


def checkpoint_entity_vocab(
    model_name: str, entity_vocab: Optional[str] = None, names: Sequence[str] = ("entity_vocab.json",)
) -> EntityVocab:
    """
    `entity_vocab` (a path or URL, any format `EntityVocab.from_file` reads), or else the first of `names` in the
    checkpoint. An `entity_vocab.json` of an `MLukeTokenizer` checkpoint (`studio-ousia/mluke-*`) has keys
    `language:title`: they are read as titles with their languages (`EntityVocab.from_language_prefixed_json`), so
    that `"Tokyo"` finds the entity of `"en:Tokyo"`.
    """
    from luke_allennlp.modeling.loading import checkpoint_file, entity_vocab_file

    path = cached_path(entity_vocab) if entity_vocab is not None else None
    for name in names if path is None else ():
        # entity_vocab.json, or the vocabulary in tokenizer_config.json where transformers 5 saved the tokenizer
        path = entity_vocab_file(model_name) if name == "entity_vocab.json" else checkpoint_file(model_name, name)
        if path is not None:
            break
    if path is None:
        raise ValueError(
            f"{model_name} has no {' or '.join(names)}: pass entity_vocab, the vocabulary of its entity table"
        )
    if str(path).endswith(".json") and is_mluke_checkpoint(model_name):
        return EntityVocab.from_language_prefixed_json(path)
    return EntityVocab.from_file(path)
