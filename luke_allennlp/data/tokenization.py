"""Fast subword tokenizers for pre-split words, and where a model's special tokens go."""
import functools
from typing import List, Tuple

from transformers import AutoTokenizer, PreTrainedTokenizerFast


@functools.lru_cache(maxsize=8)
def load_fast_tokenizer(model_name: str) -> PreTrainedTokenizerFast:
    """
    The checkpoint's fast tokenizer, able to take pre-split words (`is_split_into_words=True`): byte-level
    BPE tokenizers (RoBERTa, GPT-2, LUKE) are loaded with `add_prefix_space=True`, so that every word is
    tokenised as it would be after a space.
    """
    tokenizer = AutoTokenizer.from_pretrained(model_name, use_fast=True)
    if not tokenizer.is_fast:
        raise ValueError(f"{model_name}: a fast (Rust) tokenizer is required for its offset and word maps")
    if getattr(tokenizer, "add_prefix_space", None) is False:
        tokenizer = AutoTokenizer.from_pretrained(model_name, use_fast=True, add_prefix_space=True)
    return tokenizer


def special_token_layout(tokenizer: PreTrainedTokenizerFast) -> Tuple[List[int], List[int]]:
    """The special tokens put before and after one sequence: ([<s>], [</s>]) for RoBERTa, ([], [<sep>, <cls>]) for XLNet."""
    marker = -1
    ids = tokenizer.build_inputs_with_special_tokens([marker])
    at = ids.index(marker)
    return ids[:at], ids[at + 1 :]
