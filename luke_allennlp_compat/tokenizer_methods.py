"""
Repair 5: tokenizer methods that transformers 5 removed.

transformers 5 removed `encode_plus` (the tokenizer's `__call__` replaces it; e.g. open-compass/opencompass#2635) and
made `build_inputs_with_special_tokens` internal to the slow tokenizers (huggingface/transformers#37522), both called
by allennlp's `pretrained_transformer` tokenizer and indexer. Where missing, they are added to
`PreTrainedTokenizerBase` before those allennlp modules execute: `encode_plus` is the tokenizer's `__call__` on one
example (as it was in 4.x), and `build_inputs_with_special_tokens` puts the special tokens where the tokenizer's own
post-processor does. Existing methods are never replaced.
"""

from typing import Any, List, Optional


def _encode_plus(self: Any, text: Any, text_pair: Any = None, **kwargs: Any) -> Any:
    """transformers 4's `encode_plus`: the tokenizer's `__call__` on one example."""
    return self(text, text_pair, **kwargs)


def _build_inputs_with_special_tokens(
    self: Any, token_ids_0: List[int], token_ids_1: Optional[List[int]] = None
) -> List[int]:
    """transformers 4's `build_inputs_with_special_tokens`: the ids with the tokenizer's special tokens where its own
    post-processor puts them, read off its output for a stand-in text (`sequence_ids`: any post-processor)."""
    encoding = self("a", "b" if token_ids_1 is not None else None, add_special_tokens=True)
    if not getattr(encoding, "is_fast", False):
        raise ValueError(f"{type(self).__name__} is not a fast tokenizer: its special-token layout cannot be read")
    content = {0: list(token_ids_0), 1: list(token_ids_1 or [])}
    ids: List[int] = []
    previous: Optional[int] = None
    for token_id, sequence in zip(encoding["input_ids"], encoding.sequence_ids()):
        if sequence is None:
            ids.append(token_id)
        elif sequence != previous:  # the stand-in's first subword stands for the whole sequence
            ids.extend(content[sequence])
        previous = sequence
    return ids


def repair_tokenizer_methods(module: Any = None) -> None:
    from transformers import PreTrainedTokenizerBase

    for name, method in (
        ("encode_plus", _encode_plus),
        ("build_inputs_with_special_tokens", _build_inputs_with_special_tokens),
    ):
        if not hasattr(PreTrainedTokenizerBase, name):
            setattr(PreTrainedTokenizerBase, name, method)
