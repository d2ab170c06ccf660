"""
Repair 3: `allennlp.common.cached_transformers.get_tokenizer`.

allennlp passes `add_special_tokens` to `AutoTokenizer.from_pretrained`. transformers after the 4.20 that allennlp
pins (and 5.x) refuses a constructor keyword that names a tokenizer method: `PreTrainedTokenizerBase.__init__` raises
"add_special_tokens conflicts with the method add_special_tokens". allennlp adds special tokens itself, so nothing is
lost: the keyword is dropped there.
"""

import types
from typing import Any

from luke_allennlp_compat.patch import repaired, replace


def repair_cached_transformers(module: types.ModuleType) -> None:
    get_tokenizer = module.get_tokenizer
    if repaired(get_tokenizer):
        return

    def patched_get_tokenizer(model_name: str, **kwargs: Any) -> Any:
        # allennlp adds special tokens itself; recent tokenizers take the keyword as a clashing attribute.
        kwargs.pop("add_special_tokens", None)
        return get_tokenizer(model_name, **kwargs)

    replace(module, "get_tokenizer", patched_get_tokenizer)
