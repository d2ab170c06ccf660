"""Checks of what a reader's subwords say, for tokenizers whose small test vocabulary lacks some characters."""

import re


def decodes_to(tokenizer, ids, text: str) -> bool:
    """Whether the subwords `ids` decode to `text` (surrounding white space aside), an `<unk>` standing for the
    characters the tokenizer does not know (the tiny sentencepiece tokenizer of the tests lacks some)."""
    decoded = tokenizer.decode(list(ids)).strip()
    pattern = ".+?".join(re.escape(part) for part in decoded.split(tokenizer.unk_token))
    return re.fullmatch(pattern, text.strip(), flags=re.DOTALL) is not None
