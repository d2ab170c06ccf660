"""Fast subword tokenizers for pre-split words, and where a model's special tokens go."""

import functools
import logging
from typing import List, Optional, Tuple

import transformers
from transformers import AutoTokenizer, PreTrainedTokenizerFast

from luke_allennlp.data.files import load_json
from luke_allennlp_compat import special_tokens_template

# LUKE's tokenizers have no fast version, but their word tokenizers are those of the models LUKE starts from.
FAST_WORD_TOKENIZERS = {"LukeTokenizer": "RobertaTokenizerFast", "MLukeTokenizer": "XLMRobertaTokenizerFast"}
ENTITY_SPECIAL_TOKEN_KEYS = ("entity_unk_token", "entity_pad_token", "entity_mask_token", "entity_mask2_token")


@functools.lru_cache(maxsize=8)
def load_fast_tokenizer(model_name: str) -> PreTrainedTokenizerFast:
    """
    The checkpoint's fast tokenizer, able to take pre-split words (`is_split_into_words=True`): byte-level
    BPE tokenizers (RoBERTa, GPT-2, LUKE) are loaded with `add_prefix_space=True`, so that every word is
    tokenised as it would be after a space. A LUKE checkpoint (`LukeTokenizer`, `MLukeTokenizer`) gets the fast
    version of its word tokenizer (RoBERTa's BPE, XLM-R's sentencepiece) from its files, with its special tokens
    (`<ent>`, `<ent2>` included) and without the special entities (`[MASK]`, ...), which are no word tokens.
    """
    word_tokenizer = FAST_WORD_TOKENIZERS.get(tokenizer_class(model_name))
    if word_tokenizer is not None:
        fast_class = getattr(transformers, word_tokenizer)
        # The entity vocabulary's special entities are no words: transformers 5 would add `[MASK]`, `[UNK]`, ... that
        # tokenizer_config.json names (`entity_mask_token`, ...) as word tokens, with ids beyond the word table.
        kwargs = {name: None for name in ENTITY_SPECIAL_TOKEN_KEYS}
        if word_tokenizer == "RobertaTokenizerFast":
            kwargs["add_prefix_space"] = True
        # Quiet the warning that the files name another class: that is the point here.
        base_logger = logging.getLogger("transformers.tokenization_utils_base")
        level = base_logger.level
        base_logger.setLevel(logging.ERROR)
        try:
            return fast_class.from_pretrained(model_name, **kwargs)
        finally:
            base_logger.setLevel(level)
    tokenizer = AutoTokenizer.from_pretrained(model_name, use_fast=True)
    if not tokenizer.is_fast:
        raise ValueError(f"{model_name}: a fast (Rust) tokenizer is required for its offset and word maps")
    if getattr(tokenizer, "add_prefix_space", None) is False:
        tokenizer = AutoTokenizer.from_pretrained(model_name, use_fast=True, add_prefix_space=True)
    return tokenizer


def tokenizer_class(model_name: str) -> Optional[str]:
    """The `tokenizer_class` named by the checkpoint's tokenizer_config.json, if any."""
    from luke_allennlp.modeling.loading import checkpoint_file

    path = checkpoint_file(model_name, "tokenizer_config.json")
    if path is None:
        return None
    return load_json(path).get("tokenizer_class")


def special_token_layout(tokenizer: PreTrainedTokenizerFast) -> Tuple[List[int], List[int]]:
    """The special tokens put before and after one sequence: ([<s>], [</s>]) for RoBERTa, ([], [<sep>, <cls>]) for XLNet."""
    ids, _ = special_tokens_template(tokenizer)
    at = ids.index(-1)
    return ids[:at], ids[at + 1 :]


def token_id(tokenizer: PreTrainedTokenizerFast, token: str, model_name: str) -> int:
    """The id of `token`, which must be one token of the tokenizer (e.g. LUKE's `<ent>` marker)."""
    found = tokenizer.convert_tokens_to_ids(token)
    if found is None or (found == tokenizer.unk_token_id and token != tokenizer.unk_token):
        raise ValueError(f"{model_name}: the tokenizer has no token {token!r}")
    return found
