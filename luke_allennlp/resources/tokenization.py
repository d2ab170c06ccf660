"""
Tokenizers on disk: fast subword tokenizers of a checkpoint loaded for pre-split words (the released LUKE, mLUKE and
LUKE-Japanese layouts, transformers 5's saves, bare BPE folders), `LukeTokenizer` / `MLukeTokenizer` written over a
word tokenizer and an entity vocabulary, and where a tokenizer puts its special tokens.
"""

import copy
import functools
import json
import logging
import os
import shutil
import tempfile
from typing import Any, Dict, List, Optional, Sequence, Tuple

import transformers
from transformers import AutoTokenizer, PreTrainedTokenizerFast

from luke_allennlp.resources.files import load_json

# LUKE's tokenizers have no fast version, but their word tokenizers are those of the models LUKE starts from.
FAST_WORD_TOKENIZERS = {"LukeTokenizer": "RobertaTokenizerFast", "MLukeTokenizer": "XLMRobertaTokenizerFast"}
ENTITY_SPECIAL_TOKEN_KEYS = ("entity_unk_token", "entity_pad_token", "entity_mask_token", "entity_mask2_token")
# Word tokens transformers 5's LukeTokenizer / MLukeTokenizer write into a saved tokenizer.json besides `<ent>` and
# `<ent2>`: the special entities, and `<ent>`/`<ent2>` with sentencepiece's word-start mark. No word table has rows
# for them (their ids lie beyond it, or take `<mask>`'s).
NON_WORD_TOKENS = ("[UNK]", "[PAD]", "[MASK]", "[MASK2]", "\u2581<ent>", "\u2581<ent2>")
# RoBERTa's special tokens: a folder of only `vocab.json` and `merges.txt` that has them is RoBERTa's BPE.
ROBERTA_SPECIAL_TOKENS = ("<s>", "</s>", "<pad>", "<unk>", "<mask>")
# The tokenizer_config.json key naming the language of a LukeTokenizer's entity titles (they have no prefix; English
# when absent, as the released checkpoints' are).
ENTITY_VOCAB_LANGUAGE = "entity_vocab_language"
# Word tokens LukeTokenizer adds, and the token each is initialised from (transformers' LUKE conversion).
ENTITY_MARKERS = {"<ent>": "@", "<ent2>": "#"}

logger = logging.getLogger(__name__)


@functools.lru_cache(maxsize=8)
def load_fast_tokenizer(model_name: str) -> PreTrainedTokenizerFast:
    """
    The checkpoint's fast tokenizer, able to take pre-split words (`is_split_into_words=True`): byte-level
    BPE tokenizers (RoBERTa, GPT-2, LUKE) are loaded with `add_prefix_space=True`, so that every word is
    tokenised as it would be after a space. A LUKE checkpoint (`LukeTokenizer`, `MLukeTokenizer`) gets the fast
    version of its word tokenizer (RoBERTa's BPE, XLM-R's sentencepiece) from its files, in the released layout
    (`vocab.json` and `merges.txt`, `sentencepiece.bpe.model`) or transformers 5's (`tokenizer.json`), with its
    special tokens (`<ent>`, `<ent2>` included) and without the special entities (`[MASK]`, ...), which are no word
    tokens. A folder of only `vocab.json` and `merges.txt` is RoBERTa's BPE (see `load_tokenizer`).
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
            tokenizer = fast_class.from_pretrained(model_name, **kwargs)
        finally:
            base_logger.setLevel(level)
        return _without_added_tokens(tokenizer, NON_WORD_TOKENS, _with_sentencepiece_normaliser(tokenizer, model_name))
    tokenizer = load_tokenizer(model_name)
    if not tokenizer.is_fast:
        raise ValueError(f"{model_name}: a fast (Rust) tokenizer is required for its offset and word maps")
    if getattr(tokenizer, "add_prefix_space", None) is False:
        tokenizer = load_tokenizer(model_name, add_prefix_space=True)
    return tokenizer


def load_tokenizer(model_name: str, **kwargs: Any) -> PreTrainedTokenizerFast:
    """
    The tokenizer of a directory or hub name as transformers loads it (`AutoTokenizer`, fast), and also from a
    folder that holds only `vocab.json` and `merges.txt` (RoBERTa's and GPT-2's original files), read as RoBERTa's
    byte-level BPE when its vocabulary has RoBERTa's special tokens. A folder transformers cannot read gets one line
    saying what it lacks.
    """
    if _is_bare_bpe(model_name):
        return transformers.RobertaTokenizerFast.from_pretrained(model_name, **kwargs)
    try:
        return AutoTokenizer.from_pretrained(model_name, use_fast=True, **kwargs)
    except (OSError, ValueError, KeyError, TypeError) as error:
        if not os.path.isdir(model_name):
            raise
        files = ", ".join(sorted(os.listdir(model_name))) or "nothing"
        reason = (str(error).strip().splitlines() or [""])[0].rstrip(" :")
        raise ValueError(
            f"{model_name} is no tokenizer transformers can load (it holds {files}; {type(error).__name__}: "
            f"{reason}): a tokenizer folder needs tokenizer.json (what save_pretrained writes), or a "
            "tokenizer_config.json naming the tokenizer class with that class's files, or RoBERTa's vocab.json and "
            "merges.txt"
        ) from error


def _is_bare_bpe(model_name: str) -> bool:
    """A local folder with `vocab.json` and `merges.txt` and nothing that names a tokenizer class."""
    if not os.path.isdir(model_name):
        return False
    present = set(os.listdir(model_name))
    if present & {"tokenizer.json", "tokenizer_config.json", "config.json"}:
        return False
    if not {"vocab.json", "merges.txt"} <= present:
        return False
    vocab = load_json(os.path.join(model_name, "vocab.json"))
    missing = [token for token in ROBERTA_SPECIAL_TOKENS if not isinstance(vocab, dict) or token not in vocab]
    if missing:
        raise ValueError(
            f"{model_name}: vocab.json and merges.txt alone are read as RoBERTa's byte-level BPE, but vocab.json "
            f"lacks RoBERTa's special tokens {', '.join(missing)}: add the tokenizer_config.json (and tokenizer.json) "
            "that the tokenizer's save_pretrained writes"
        )
    return True


def _without_added_tokens(
    tokenizer: PreTrainedTokenizerFast, tokens: Sequence[str], state: Optional[Dict[str, Any]] = None
) -> PreTrainedTokenizerFast:
    """
    The tokenizer without the added tokens `tokens` (its backend rebuilt without them), in place; a special token
    of its vocabulary that they displaced from the added tokens (transformers 5 gives `[PAD]` the id of `<mask>`)
    is added back, so that it stays one token in a text. `state`: the backend's state (`to_str`'s JSON) to rebuild
    from where the caller changed more of it (rebuilt even if no token of `tokens` is there).
    """
    if state is None and not any(added.content in tokens for added in tokenizer.added_tokens_decoder.values()):
        return tokenizer
    from tokenizers import AddedToken, Tokenizer

    state = state if state is not None else json.loads(tokenizer.backend_tokenizer.to_str())
    state["added_tokens"] = [added for added in state["added_tokens"] if added["content"] not in tokens]
    backend = Tokenizer.from_str(json.dumps(state))
    kept = {added["content"] for added in state["added_tokens"]}
    vocab = backend.get_vocab(with_added_tokens=False)
    lost = [token for token in tokenizer.all_special_tokens if token not in kept and token in vocab]
    backend.add_special_tokens([AddedToken(token, special=True, normalized=False) for token in lost])
    tokenizer._tokenizer = backend
    return tokenizer


def _with_sentencepiece_normaliser(tokenizer: PreTrainedTokenizerFast, model_name: str) -> Optional[Dict[str, Any]]:
    """
    Where transformers 5's `MLukeTokenizer` saved the checkpoint (its tokenizer_config.json holds the entity
    vocabulary, its `tokenizer.json`'s unigram model has no `Precompiled` normaliser), the backend's state with what
    that save lost restored: the save rebuilds the SentencePiece model without SentencePiece's normaliser (full-width "２",
    "（" of Japanese text become unknown) and with `<s>` as the unknown piece; SentencePiece's default normaliser
    (nmt_nfkc, what `XLMRobertaTokenizer`'s conversion writes), its whitespace splitting and `<unk>` come back, so
    that the ids are the released files'. None elsewhere (the released layout, transformers 4's saves).
    """
    from luke_allennlp.resources.checkpoint_tokenizer import read_tokenizer_config

    if type(tokenizer.backend_tokenizer.model).__name__ != "Unigram":
        return None
    config = read_tokenizer_config(model_name)
    if "entity_vocab" not in config:
        return None
    state = json.loads(tokenizer.backend_tokenizer.to_str())
    if '"Precompiled"' in json.dumps(state.get("normalizer")):  # a normaliser of SentencePiece's is there
        return None
    logger.warning(
        "%s: a tokenizer saved by transformers 5's MLukeTokenizer, which drops SentencePiece's normaliser: read with "
        "SentencePiece's default (nmt_nfkc) restored",
        model_name,
    )
    state["normalizer"] = {"type": "Precompiled", "precompiled_charsmap": nmt_nfkc_charsmap()}
    pre_tokenizers = [{"type": "WhitespaceSplit"}] + ([state["pre_tokenizer"]] if state.get("pre_tokenizer") else [])
    state["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": pre_tokenizers}
    unk = config.get("unk_token") or "<unk>"
    unk = str(unk.get("content") or "<unk>") if isinstance(unk, dict) else str(unk)  # (an AddedToken's form)
    pieces = [piece for piece, _ in state["model"]["vocab"]]
    if unk in pieces:
        state["model"]["unk_id"] = pieces.index(unk)
    return state


@functools.lru_cache(maxsize=1)
def nmt_nfkc_charsmap() -> str:
    """SentencePiece's default normalisation rule (nmt_nfkc) as tokenizers' `Precompiled` normaliser stores it
    (base64), taken from a model SentencePiece trains in memory on one line (milliseconds)."""
    import base64
    import io

    import sentencepiece
    from sentencepiece import sentencepiece_model_pb2

    model = io.BytesIO()
    sentencepiece.SentencePieceTrainer.train(
        sentence_iterator=iter(["a b c"]),
        model_writer=model,
        vocab_size=8,
        hard_vocab_limit=False,
        normalization_rule_name="nmt_nfkc",
        minloglevel=2,
    )
    proto = sentencepiece_model_pb2.ModelProto()
    proto.ParseFromString(model.getvalue())
    return base64.b64encode(proto.normalizer_spec.precompiled_charsmap).decode("ascii")


def tokenizer_class(model_name: str) -> Optional[str]:
    """The `tokenizer_class` named by the checkpoint's tokenizer_config.json, if any."""
    from luke_allennlp.resources.checkpoint_tokenizer import read_tokenizer_config

    return read_tokenizer_config(model_name).get("tokenizer_class")


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


def load_word_tokenizer(tokenizer_path: str) -> PreTrainedTokenizerFast:
    """The fast word tokenizer a LUKE checkpoint is written over (`write_luke_tokenizer`): RoBERTa's byte-level BPE
    or an XLM-R-style sentencepiece (Unigram) tokenizer; any other is refused in one line."""
    word_tokenizer = load_fast_tokenizer(tokenizer_path)
    if word_model(word_tokenizer) not in ("BPE", "Unigram"):
        raise ValueError(
            f"{tokenizer_path}: LukeTokenizer is RoBERTa's byte-level BPE and MLukeTokenizer XLM-R's sentencepiece; "
            f"a model trained with {type(word_tokenizer).__name__} cannot be exported as a LUKE checkpoint"
        )
    return word_tokenizer


def word_model(word_tokenizer: PreTrainedTokenizerFast) -> str:
    """The name of the tokenizer's backend model: `BPE`, `Unigram`, `WordPiece`, ..."""
    return type(word_tokenizer.backend_tokenizer.model).__name__


def write_luke_tokenizer(
    word_tokenizer: PreTrainedTokenizerFast,
    entities: Dict[str, int],
    output_dir: str,
    task: Optional[str] = None,
    source_dir: Optional[str] = None,
    language: Optional[str] = None,
) -> Any:
    """
    Writes the LUKE tokenizer of a word tokenizer and an entity vocabulary (`{title: id}`, the four special entities
    included) to `output_dir` and returns it, loaded from there: `LukeTokenizer` over a byte-level BPE,
    `MLukeTokenizer` over a sentencepiece (Unigram) tokenizer. `task` is LukeTokenizer's `task=` mode. `language`:
    the language of a `LukeTokenizer`'s bare titles (`ENTITY_VOCAB_LANGUAGE` in its tokenizer_config.json), so that
    the checkpoint's entities are read as titles of that language, not English (`EntityVocab.from_checkpoint`);
    `MLukeTokenizer`'s titles carry theirs (`"bg:Сопот"`).
    """
    special = {
        name: str(getattr(word_tokenizer, name))
        for name in ("bos_token", "eos_token", "sep_token", "cls_token", "unk_token", "pad_token", "mask_token")
    }
    os.makedirs(output_dir, exist_ok=True)
    with open(os.path.join(output_dir, "entity_vocab.json"), "w", encoding="utf-8") as f:
        json.dump(entities, f, ensure_ascii=False)
    if word_model(word_tokenizer) == "BPE":
        from transformers import LukeTokenizer

        with tempfile.TemporaryDirectory() as work:
            word_tokenizer.backend_tokenizer.model.save(work)  # the BPE's vocab.json and merges.txt
            shutil.copyfile(os.path.join(output_dir, "entity_vocab.json"), os.path.join(work, "entity_vocab.json"))
            luke_tokenizer = LukeTokenizer.from_pretrained(work, task=task, **special)
            luke_tokenizer.save_pretrained(output_dir)
            # transformers 5 saves tokenizer.json alone; LukeTokenizer of transformers 4 reads these files.
            for name in ("vocab.json", "merges.txt"):
                shutil.copyfile(os.path.join(work, name), os.path.join(output_dir, name))
        if language is not None:
            record_entity_vocab_language(output_dir, language)
        return LukeTokenizer.from_pretrained(output_dir)
    return _write_mluke_tokenizer(word_tokenizer, output_dir, task, source_dir)


def record_entity_vocab_language(directory: str, language: str) -> None:
    """Writes `ENTITY_VOCAB_LANGUAGE` into the tokenizer_config.json of `directory` (transformers keeps the key)."""
    path = os.path.join(directory, "tokenizer_config.json")
    config = load_json(path) if os.path.isfile(path) else {}
    config[ENTITY_VOCAB_LANGUAGE] = language
    with open(path, "w", encoding="utf-8") as f:
        json.dump(config, f, indent=2, ensure_ascii=False)


def _write_mluke_tokenizer(
    word_tokenizer: PreTrainedTokenizerFast, output_dir: str, task: Optional[str], source_dir: Optional[str]
) -> Any:
    """MLukeTokenizer's files: the word tokenizer's tokenizer.json with `<ent>`/`<ent2>` added (transformers 5 reads
    it; its MLukeTokenizer would number a bare sentencepiece model's pieces one off), its `sentencepiece.bpe.model`
    where the source has one (transformers 4 reads that), and a tokenizer_config.json naming MLukeTokenizer."""
    from transformers import MLukeTokenizer

    words = copy.deepcopy(word_tokenizer)
    words.add_tokens(list(ENTITY_MARKERS), special_tokens=True)
    words.save_pretrained(output_dir)
    spm = os.path.join(source_dir, "sentencepiece.bpe.model") if source_dir and os.path.isdir(source_dir) else None
    if spm and os.path.isfile(spm):
        shutil.copyfile(spm, os.path.join(output_dir, "sentencepiece.bpe.model"))
    config_path = os.path.join(output_dir, "tokenizer_config.json")
    with open(config_path, encoding="utf-8") as f:
        config = json.load(f)
    config.pop("added_tokens_decoder", None)
    config.update(
        tokenizer_class="MLukeTokenizer",
        task=task,
        entity_1_token="<ent>",
        entity_2_token="<ent2>",
        entity_unk_token="[UNK]",
        entity_pad_token="[PAD]",
        entity_mask_token="[MASK]",
        entity_mask2_token="[MASK2]",
        max_entity_length=32,
        max_mention_length=30,
    )
    with open(config_path, "w", encoding="utf-8") as f:
        json.dump(config, f, indent=2, ensure_ascii=False)
    return MLukeTokenizer.from_pretrained(output_dir)
