"""
Repair 5: tokenizer methods that transformers 5 removed.

transformers 5 removed `encode_plus` (the tokenizer's `__call__` replaces it; e.g. open-compass/opencompass#2635) and
made `build_inputs_with_special_tokens` internal to the slow tokenizers (huggingface/transformers#37522), both called
by allennlp's `pretrained_transformer` tokenizer and indexer. Where missing, they are added to
`PreTrainedTokenizerBase` before those allennlp modules execute: `encode_plus` is the tokenizer's `__call__` on one
example (as it was in 4.x), and `build_inputs_with_special_tokens` puts the special tokens where the tokenizer's own
post-processor does (`special_tokens_template`, which the project's readers use too). Existing methods are never
replaced.

Proved by tests/luke_allennlp_compat/test_cached_transformers.py: `test_pretrained_transformer_tokenizer_and_indexer`; the template by
the readers' tests (tests/data/).
"""

from typing import Any, List, Optional, Tuple


def special_tokens_template(tokenizer: Any, pair: bool = False) -> Tuple[List[int], List[int]]:
    """
    (input ids, token type ids) of what a fast tokenizer makes of one sequence (or a pair), with each
    sequence's content replaced by one marker id, -1 (first) or -2 (second): `([0, -1, 2], [0, 0, 0])` for
    RoBERTa, `([-1, 4, -2, 4, 3], [0, 0, 1, 1, 2])` for an XLNet pair. Read off the tokenizer's own output
    (`sequence_ids`), so it holds for any post-processor, in transformers 4 and 5 alike.
    """
    encoding = tokenizer("a", "b" if pair else None, add_special_tokens=True, return_token_type_ids=True)
    if not getattr(encoding, "is_fast", False):
        raise ValueError(f"{type(tokenizer).__name__} is not a fast tokenizer: its special-token layout cannot be read")
    ids: List[int] = []
    types: List[int] = []
    previous: Optional[int] = None
    for token_id, type_id, sequence in zip(encoding["input_ids"], encoding["token_type_ids"], encoding.sequence_ids()):
        if sequence is None:
            ids.append(token_id)
            types.append(type_id)
        elif sequence != previous:  # the first subword of a sequence stands for all of it
            ids.append(-1 - sequence)
            types.append(type_id)
        previous = sequence
    return ids, types


def _encode_plus(self: Any, text: Any, text_pair: Any = None, **kwargs: Any) -> Any:
    """transformers 4's `encode_plus`: the tokenizer's `__call__` on one example."""
    return self(text, text_pair, **kwargs)


def _build_inputs_with_special_tokens(
    self: Any, token_ids_0: List[int], token_ids_1: Optional[List[int]] = None
) -> List[int]:
    """transformers 4's `build_inputs_with_special_tokens`: the ids with the tokenizer's special tokens around them."""
    template, _ = special_tokens_template(self, pair=token_ids_1 is not None)
    content = {-1: list(token_ids_0), -2: list(token_ids_1 or [])}
    return [i for marker in template for i in content.get(marker, [marker])]


def repair_tokenizer_methods(module: Any = None) -> None:
    from transformers import PreTrainedTokenizerBase

    for name, method in (
        ("encode_plus", _encode_plus),
        ("build_inputs_with_special_tokens", _build_inputs_with_special_tokens),
    ):
        if not hasattr(PreTrainedTokenizerBase, name):
            setattr(PreTrainedTokenizerBase, name, method)
