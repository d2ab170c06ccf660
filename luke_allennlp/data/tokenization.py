"""Fast subword tokenizers for pre-split words, and where a model's special tokens go."""

import contextlib
import functools
import json
import logging
import os
import tempfile
from typing import Iterator, List, Optional, Tuple

import transformers
from transformers import AutoTokenizer, PreTrainedTokenizerFast

from luke_allennlp.data.files import load_json
from luke_allennlp_compat import special_tokens_template

# LUKE's tokenizers have no fast version, but their word tokenizers are those of the models LUKE starts from.
FAST_WORD_TOKENIZERS = {"LukeTokenizer": "RobertaTokenizerFast", "MLukeTokenizer": "XLMRobertaTokenizerFast"}
ENTITY_SPECIAL_TOKEN_KEYS = ("entity_unk_token", "entity_pad_token", "entity_mask_token", "entity_mask2_token")

logger = logging.getLogger(__name__)


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
            with _as_released(model_name) as directory:
                tokenizer = fast_class.from_pretrained(directory, **kwargs)
            tokenizer.name_or_path = model_name
            return tokenizer
        finally:
            base_logger.setLevel(level)
    tokenizer = AutoTokenizer.from_pretrained(model_name, use_fast=True)
    if not tokenizer.is_fast:
        raise ValueError(f"{model_name}: a fast (Rust) tokenizer is required for its offset and word maps")
    if getattr(tokenizer, "add_prefix_space", None) is False:
        tokenizer = AutoTokenizer.from_pretrained(model_name, use_fast=True, add_prefix_space=True)
    return tokenizer


# Tokens that transformers 5's LukeTokenizer and MLukeTokenizer add to the word tokenizer when they save it (the
# special entities, and sentencepiece's "▁<ent>", "▁<ent2>"): no words, with ids beyond the checkpoint's word table.
_SAVED_ENTITY_TOKENS = ("[UNK]", "[PAD]", "[MASK]", "[MASK2]", "▁<ent>", "▁<ent2>")


@contextlib.contextmanager
def _as_released(model_name: str) -> Iterator[str]:
    """
    `model_name`, or where transformers 5 saved its LUKE tokenizer (tokenizer.json alone, tokenizer_config.json holding
    the entity vocabulary) a temporary copy of its files repaired to tokenize as the released files do: without
    `_SAVED_ENTITY_TOKENS`; for `MLukeTokenizer`, whose transformers 5 version rebuilds its SentencePiece model without
    SentencePiece's normaliser (full-width "２", "（" of Japanese text become unknown) and with `<s>` as the unknown
    piece, with SentencePiece's default normaliser (nmt_nfkc, what `XLMRobertaTokenizer`'s conversion writes), its
    whitespace splitting and `<unk>` restored.
    """
    from luke_allennlp.modeling.loading import checkpoint_file

    config_path = checkpoint_file(model_name, "tokenizer_config.json")
    config = load_json(config_path) if config_path is not None else {}
    # (tokenizer.json only then: a hub checkpoint of the released layout is not asked for more files than before)
    tokenizer_path = checkpoint_file(model_name, "tokenizer.json") if "entity_vocab" in config else None
    if tokenizer_path is None:
        yield model_name
        return
    drop = set(_SAVED_ENTITY_TOKENS) | {str(config[key]) for key in ENTITY_SPECIAL_TOKEN_KEYS if config.get(key)}
    tokenizer = load_json(tokenizer_path)
    tokenizer["added_tokens"] = [t for t in tokenizer.get("added_tokens", []) if t["content"] not in drop]
    config["extra_special_tokens"] = [t for t in config.get("extra_special_tokens", []) if str(t) not in drop]
    for key in (*ENTITY_SPECIAL_TOKEN_KEYS, "entity_vocab", "model_specific_special_tokens"):
        config.pop(key, None)
    model = tokenizer.get("model", {})
    if model.get("type") == "Unigram" and (tokenizer.get("normalizer") or {}).get("type") != "Precompiled":
        logger.warning("%s: a tokenizer saved by transformers 5's MLukeTokenizer, which drops SentencePiece's "
                       "normaliser: read with SentencePiece's default (nmt_nfkc) restored", model_name)  # fmt: skip
        tokenizer["normalizer"] = {"type": "Precompiled", "precompiled_charsmap": _nmt_nfkc_charsmap()}
        tokenizer["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": [{"type": "WhitespaceSplit"},
                                                                            tokenizer["pre_tokenizer"]]}  # fmt: skip
        unk = str(config.get("unk_token") or "<unk>")
        model["unk_id"] = next(i for i, (piece, _) in enumerate(model["vocab"]) if piece == unk)
    with tempfile.TemporaryDirectory() as work:
        for name, content in (("tokenizer.json", tokenizer), ("tokenizer_config.json", config)):
            with open(os.path.join(work, name), "w", encoding="utf-8") as f:
                json.dump(content, f, ensure_ascii=False)
        yield work


@functools.lru_cache(maxsize=1)
def _nmt_nfkc_charsmap() -> str:
    """SentencePiece's default normalisation rule (nmt_nfkc) as tokenizers' `Precompiled` normaliser stores it (base64),
    taken from a model SentencePiece trains in memory on one line (milliseconds)."""
    import base64
    import io

    import sentencepiece
    from sentencepiece import sentencepiece_model_pb2

    model = io.BytesIO()
    sentencepiece.SentencePieceTrainer.train(sentence_iterator=iter(["a b c"]), model_writer=model, vocab_size=8,
                                             hard_vocab_limit=False, normalization_rule_name="nmt_nfkc", minloglevel=2)  # fmt: skip
    proto = sentencepiece_model_pb2.ModelProto()
    proto.ParseFromString(model.getvalue())
    return base64.b64encode(proto.normalizer_spec.precompiled_charsmap).decode("ascii")


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
