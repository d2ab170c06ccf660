"""The entity vocabulary of a checkpoint's entity table, read as the checkpoint's tokenizer wrote it."""

from typing import Optional, Sequence

from allennlp.common.file_utils import cached_path

from luke_allennlp.resources.entity_vocab import EntityVocab
from luke_allennlp.resources.tokenization import tokenizer_class

# The name standing for the checkpoint tokenizer's own vocabulary: `entity_vocab.json`, or in transformers 5's layout
# the `entity_vocab` of `tokenizer_config.json` (see `EntityVocab.from_checkpoint`).
TOKENIZER_ENTITY_VOCAB = "entity_vocab.json"


def is_mluke_checkpoint(model_name: str) -> bool:
    """Whether the checkpoint's tokenizer is `MLukeTokenizer` (mLUKE: XLM-R's sentencepiece, `language:title` entities)."""
    return tokenizer_class(model_name) == "MLukeTokenizer"


def checkpoint_entity_vocab(
    model_name: str, entity_vocab: Optional[str] = None, names: Sequence[str] = (TOKENIZER_ENTITY_VOCAB,)
) -> EntityVocab:
    """
    `entity_vocab` (a path or URL, any format `EntityVocab.from_file` reads, a checkpoint directory included; a
    `.json` of an `MLukeTokenizer` checkpoint is read with `language:title` keys), or else the first of `names` the
    checkpoint has. `entity_vocab.json` stands for its tokenizer's entity vocabulary in either layout (released, or
    transformers 5's inside tokenizer_config.json; see `EntityVocab.from_checkpoint`): an `MLukeTokenizer`
    checkpoint's `language:title` keys are read as titles with their languages, so that `"Tokyo"` finds the entity of
    `"en:Tokyo"`.
    """
    from luke_allennlp.modeling.checkpoint_files import checkpoint_file
    from luke_allennlp.resources.checkpoint_tokenizer import checkpoint_entities

    if entity_vocab is not None:
        path = cached_path(entity_vocab)
        if str(path).endswith(".json") and is_mluke_checkpoint(model_name):  # an mLUKE entity_vocab.json
            return EntityVocab.from_language_prefixed_json(path)
        return EntityVocab.from_file(path)
    for name in names:
        if name == TOKENIZER_ENTITY_VOCAB:
            if checkpoint_entities(model_name) is not None:
                return EntityVocab.from_checkpoint(model_name)
            continue
        path = checkpoint_file(model_name, name)
        if path is not None:
            return EntityVocab.from_file(path)
    raise ValueError(
        f"{model_name} has no {' or '.join(names)}: pass entity_vocab, the vocabulary of its entity table"
        + (" (its tokenizer_config.json holds none either)" if TOKENIZER_ENTITY_VOCAB in names else "")
    )
