"""
A word tokenizer trained on text with the `tokenizers` library, as the tokenizer of a model that LUKE starts from,
for a language no downloadable tokenizer covers well (`allennlp build-tokenizer`). Two kinds:

- `bpe`: RoBERTa's byte-level BPE (LUKE's): `<s>` 0, `<pad>` 1, `</s>` 2, `<unk>` 3, `<mask>` 4 (RoBERTa numbers
  `<mask>` last; nothing depends on it), then the bytes and the merges. Every text has pieces (bytes at worst).
- `unigram`: XLM-R's SentencePiece-style unigram model (mLUKE's, LUKE-Japanese's): SentencePiece's nmt_nfkc
  normalisation, `▁` before each word, `<s>` 0, `<pad>` 1, `</s>` 2, `<unk>` 3, the pieces, `<mask>` last (fairseq's
  numbering). Every character of the training text is a piece, so that text has no unknown pieces.

The result is the transformers 5 class of each (`RobertaTokenizer`, `XLMRobertaTokenizer`) built from the trained
model, so what `save_pretrained` writes (`tokenizer.json` and `tokenizer_config.json`) loads with `AutoTokenizer` and
is accepted where RoBERTa's or XLM-R's is: `build-tiny-checkpoint`, `build-pretraining-corpus`, `export-luke`
(`LukeTokenizer` over the BPE, `MLukeTokenizer` over the unigram model).
"""

import base64
import json
from typing import Any, Iterable, Iterator, List

from luke_allennlp.resources.tokenization import nmt_nfkc_charsmap

KINDS = ("bpe", "unigram")
# RoBERTa's and XLM-R's special tokens: <s> 0, <pad> 1, </s> 2, <unk> 3 (XLMRobertaTokenizer's unk_id), <mask>.
SPECIAL_TOKENS = ("<s>", "<pad>", "</s>", "<unk>")
MASK = "<mask>"


class TextCounts:
    """Counts the texts and characters an iterator of texts yields, and keeps the first `keep` texts (a sample for
    checking the trained tokenizer)."""

    def __init__(self, texts: Iterable[str], keep: int = 1000) -> None:
        self._texts, self._keep = texts, keep
        self.texts = self.characters = 0
        self.sample: List[str] = []

    def __iter__(self) -> Iterator[str]:
        for text in self._texts:
            if not isinstance(text, str):
                raise ValueError(f"text {self.texts + 1} is a {type(text).__name__}, not a string")
            self.texts += 1
            self.characters += len(text)
            if len(self.sample) < self._keep:
                self.sample.append(text)
            yield text


def train_tokenizer(
    texts: Iterable[str], kind: str = "bpe", vocab_size: int = 32_000, min_frequency: int = 2, max_length: int = 512
) -> Any:
    """
    A fast tokenizer of `kind` (see the module) trained on `texts` (one string each: a paragraph, a page, a line).

    # Parameters

    texts : `Iterable[str]`
        The training text, read once.
    kind : `str`, optional (default = `"bpe"`)
        `"bpe"` (RoBERTa's byte-level BPE) or `"unigram"` (XLM-R's SentencePiece-style unigram model).
    vocab_size : `int`, optional (default = `32000`)
        The vocabulary's size, special tokens included (BPE: at most; a small text gives fewer merges). A unigram
        model keeps every character of the text, which may exceed a tiny `vocab_size`.
    min_frequency : `int`, optional (default = `2`)
        BPE: the fewest occurrences of a pair to be merged.
    max_length : `int`, optional (default = `512`)
        `model_max_length`: the subwords the model takes.
    """
    from tokenizers import AddedToken, pre_tokenizers, trainers
    from transformers import RobertaTokenizer, XLMRobertaTokenizer

    if kind not in KINDS:
        raise ValueError(f"the tokenizer kind must be one of {', '.join(KINDS)}, not {kind!r}")
    if vocab_size <= len(SPECIAL_TOKENS) + 1:
        raise ValueError(
            f"--vocab-size must be larger than the {len(SPECIAL_TOKENS) + 1} special tokens, not {vocab_size}"
        )
    mask = AddedToken(MASK, lstrip=True, rstrip=False, normalized=False, special=True)  # "in <mask>." as RoBERTa's
    if kind == "bpe":
        backend = RobertaTokenizer().backend_tokenizer  # RoBERTa's byte-level pipeline, with an empty model
        trainer = trainers.BpeTrainer(
            vocab_size=vocab_size,
            min_frequency=min_frequency,
            special_tokens=[*SPECIAL_TOKENS, MASK],
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
            show_progress=False,
        )
        backend.train_from_iterator(texts, trainer=trainer)
        model = json.loads(backend.to_str())["model"]
        merges = [tuple(merge) if isinstance(merge, list) else tuple(merge.split(" ", 1)) for merge in model["merges"]]
        return RobertaTokenizer(vocab=model["vocab"], merges=merges, mask_token=mask, model_max_length=max_length)
    charsmap = base64.b64decode(nmt_nfkc_charsmap())
    backend = XLMRobertaTokenizer(_spm_precompiled_charsmap=charsmap).backend_tokenizer  # XLM-R's pipeline
    trainer = trainers.UnigramTrainer(
        vocab_size=vocab_size - 1,  # <mask> is added last
        special_tokens=list(SPECIAL_TOKENS),
        unk_token="<unk>",
        show_progress=False,
    )
    backend.train_from_iterator(texts, trainer=trainer)
    pieces = [(piece, score) for piece, score in json.loads(backend.to_str())["model"]["vocab"]]
    return XLMRobertaTokenizer(
        vocab=[*pieces, (MASK, 0.0)], _spm_precompiled_charsmap=charsmap, mask_token=mask, model_max_length=max_length
    )


def unknown_pieces(tokenizer: Any, texts: Iterable[str]) -> "tuple[int, int]":
    """(unknown pieces, pieces) of `texts` tokenised without special tokens."""
    unknown = total = 0
    for text in texts:
        ids = tokenizer(text, add_special_tokens=False, verbose=False)["input_ids"]  # (no "longer than 512" warning)
        unknown += sum(1 for i in ids if i == tokenizer.unk_token_id)
        total += len(ids)
    return unknown, total
