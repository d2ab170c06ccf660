"""
LUKE-Japanese checkpoints: the layout of the released ones, and a tiny random one built offline in that layout.

The released `studio-ousia/luke-japanese-base`, `-large` and their `-lite` versions were converted to transformers by
the original LUKE's `convert_luke_to_huggingface_model.py` with `--tokenizer-class MLukeTokenizer`, which gives:

- The word tokenizer of XLM-R's format over a Japanese SentencePiece unigram model (`sentencepiece.bpe.model`,
  `tokenizer.json`): `<s>` 0, `<pad>` 1, `</s>` 2, `<unk>` 3, the pieces shifted by one (fairseq's dictionary),
  `<mask>` after them, then `<ent>` and `<ent2>` added (base: `<ent>` 32770, `<ent2>` 32771, `vocab_size` 32772).
  `tokenizer_config.json` names `MLukeTokenizer`.
- `entity_vocab.json` keyed `"ja:title"` (the conversion prefixes every title with its language, as for mLUKE), the
  special entities unprefixed: `[PAD]` 0, `[UNK]` 1, `[MASK]` 2 and `[MASK2]` appended last (base: 570,505 entries,
  `entity_emb_size` 256). The `-lite` versions keep the special entities alone: `{"[MASK]": 0, "[UNK]": 1,
  "[PAD]": 2, "[MASK2]": 3}`, `entity_vocab_size` 4.
- `config.json` of `model_type` `luke` with `use_entity_aware_attention` true, `bos/pad/eos_token_id` 0/1/2,
  `max_position_embeddings` 514, `type_vocab_size` 1, `layer_norm_eps` 1e-5.

Nothing Japanese can be downloaded offline, so `write_tiny_luke_japanese_checkpoint` builds that layout from a
SentencePiece model trained on JGLUE's training text (`save_japanese_tokenizer`) and a random LUKE of tiny size.
It writes `sentencepiece.bpe.model` as the releases have it, but needs none: a word tokenizer given as a
`tokenizer.json` alone (what transformers 5 saves) works as well.
"""

import json
import os
import tempfile
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional, Sequence, Union

PathLike = Union[str, os.PathLike]

# The special entities of a `-lite` checkpoint, in the order the conversion writes them.
LITE_ENTITY_VOCAB = {"[MASK]": 0, "[UNK]": 1, "[PAD]": 2, "[MASK2]": 3}
# Two layers of width 32 (seconds a step on a CPU), the rest of luke-japanese-base's config.
TINY_JAPANESE = dict(hidden_size=32, entity_emb_size=16, num_hidden_layers=2, num_attention_heads=4,
                     intermediate_size=37, max_position_embeddings=514, type_vocab_size=1, layer_norm_eps=1e-5,
                     use_entity_aware_attention=True)  # fmt: skip
# JGLUE's training files (as distributed) and their text fields.
JGLUE_TRAINING_TEXT = {
    "jsts-v1.3/train-v1.3.json": ("sentence1", "sentence2"),
    "jcommonsenseqa-v1.3/train-v1.3.json": ("question", "choice0", "choice1", "choice2", "choice3", "choice4"),
}
JSQUAD_VALID = "jsquad-v1.3/valid-v1.3.json"


def jglue_training_texts(jglue_dir: PathLike) -> List[str]:
    """The sentences of JSTS's and JCommonsenseQA's training files (JGLUE v1.3 as distributed), in file order."""
    texts = []
    for name, fields in JGLUE_TRAINING_TEXT.items():
        path = Path(jglue_dir) / name
        if not path.is_file():
            raise FileNotFoundError(f"{path} not found: pass the JGLUE directory (e.g. ../shared/data/jglue)")
        with open(path, encoding="utf-8") as f:
            for line_number, line in enumerate(f, start=1):
                if not line.strip():
                    continue
                try:
                    example = json.loads(line)
                    texts.extend(example[key] for key in fields)
                except (ValueError, KeyError, TypeError) as error:
                    raise ValueError(
                        f"{path}, line {line_number}: expected a JSON object with {fields}: {error}"
                    ) from error
    return texts


def jsquad_titles(jglue_dir: PathLike) -> List[str]:
    """The article titles of JSQuAD's valid file: real Japanese Wikipedia titles (`_` written as a space)."""
    path = Path(jglue_dir) / JSQUAD_VALID
    data = json.loads(path.read_text(encoding="utf-8"))["data"]
    return [article["title"].replace("_", " ") for article in data]


def save_japanese_tokenizer(
    directory: PathLike,
    texts: Iterable[str],
    vocab_size: int = 8000,
    character_coverage: float = 0.9995,
    keep_model_file: bool = True,
) -> int:
    """
    Trains a SentencePiece unigram model on `texts` (e.g. `jglue_training_texts`) and saves it as luke-japanese's
    word tokenizer is: an `XLMRobertaTokenizer` (fairseq's ids: `<s>` 0, `<pad>` 1, `</s>` 2, `<unk>` 3, the pieces
    shifted by one, `<mask>` last). transformers 5 saves `tokenizer.json` alone; `keep_model_file` also copies the
    trained `sentencepiece.bpe.model` beside it, as the releases ship it. `character_coverage` 0.9995 is
    SentencePiece's advice for Japanese: the rarest characters become `<unk>`. Returns the tokenizer's size.
    """
    import shutil

    import sentencepiece as spm
    from transformers import XLMRobertaTokenizer

    with tempfile.TemporaryDirectory() as work:
        corpus = Path(work) / "corpus.txt"
        corpus.write_text("\n".join(texts), encoding="utf-8")
        spm.SentencePieceTrainer.train(
            input=str(corpus), model_prefix=str(Path(work) / "sentencepiece.bpe"), vocab_size=vocab_size,
            model_type="unigram", character_coverage=character_coverage, minloglevel=2,
        )  # fmt: skip
        tokenizer = XLMRobertaTokenizer.from_pretrained(
            work, model_max_length=512
        )  # converts sentencepiece.bpe.model, fairseq's ids
        tokenizer.save_pretrained(str(directory))
        if keep_model_file:
            shutil.copyfile(Path(work) / "sentencepiece.bpe.model", Path(directory) / "sentencepiece.bpe.model")
    return len(tokenizer)


def japanese_entity_vocab(titles: Sequence[str], language: str = "ja") -> Dict[str, int]:
    """luke-japanese's `entity_vocab.json` over `titles`: `[PAD]` 0, `[UNK]` 1, `[MASK]` 2, `"ja:title"` keys in
    order, `[MASK2]` last."""
    entities = {"[PAD]": 0, "[UNK]": 1, "[MASK]": 2}
    for title in titles:
        entities.setdefault(f"{language}:{title}", len(entities))
    entities["[MASK2]"] = len(entities)
    return entities


def write_tiny_luke_japanese_checkpoint(
    directory: PathLike,
    lite: bool = False,
    seed: int = 0,
    tokenizer: Optional[PathLike] = None,
    jglue_dir: Optional[PathLike] = None,
    entity_vocab: Optional[PathLike] = None,
    **config: Any,
) -> Path:
    """
    A random LUKE in the layout of `studio-ousia/luke-japanese-base` (`lite`: `-base-lite`), see the module.

    # Parameters

    directory : `PathLike`
        Where to write `config.json`, `model.safetensors`, the `MLukeTokenizer` files and `entity_vocab.json`.
    lite : `bool`, optional (default = `False`)
        Keep the four special entities alone, as the `-lite` checkpoints do.
    tokenizer : `PathLike`, optional
        An XLM-R-style SentencePiece tokenizer directory (`tokenizer.json` suffices); default: one trained here on the
        training text of `jglue_dir` (`save_japanese_tokenizer`, 8,000 pieces).
    jglue_dir : `PathLike`, optional
        JGLUE v1.3 as distributed: the tokenizer's training text and the default entity titles (the article titles
        of JSQuAD's valid file).
    entity_vocab : `PathLike`, optional
        An entity vocabulary: a luke-japanese `entity_vocab.json` (`ja:title` keys), or the TSV or JSONL of
        `build-entity-vocab` over a Japanese dump (written with `ja:` prefixes). Default: the entity vocabulary of
        `tokenizer` where it is a LUKE checkpoint, else JSQuAD's article titles. Ignored when `lite`.
    config : `Any`
        Overrides of the tiny sizes (`TINY_JAPANESE`), e.g. the base shape.
    """
    import torch

    from luke_allennlp.commands.export_luke import write_luke_tokenizer
    from luke_allennlp.data.entity_vocab import EntityVocab
    from luke_allennlp.data.tokenization import load_fast_tokenizer
    from luke_allennlp.modeling import LukeConfig, LukeEncoder
    from luke_allennlp.modeling.loading import entity_vocab_file

    if tokenizer is None and jglue_dir is None:
        raise ValueError("a tiny luke-japanese checkpoint needs a SentencePiece tokenizer or the JGLUE directory")
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    if not lite and entity_vocab is None and tokenizer is not None:
        entity_vocab = entity_vocab_file(str(tokenizer))  # a LUKE checkpoint's own, if the tokenizer is one
    if not lite and entity_vocab is None and jglue_dir is None:
        raise ValueError(f"{tokenizer} has no entity vocabulary: pass one, or the JGLUE directory (JSQuAD's titles)")
    if lite:
        entities = dict(LITE_ENTITY_VOCAB)
    elif entity_vocab is not None:
        if os.fspath(entity_vocab).endswith(".json"):  # a released entity_vocab.json: "ja:title" keys
            vocab = EntityVocab.from_language_prefixed_json(entity_vocab)
        else:
            vocab = EntityVocab.from_file(entity_vocab, language="ja")
        entities = vocab.to_transformers_json(language_prefixed=True)
        entities.setdefault("[MASK2]", max(entities.values()) + 1)  # the conversion appends it
    else:
        entities = japanese_entity_vocab(jsquad_titles(jglue_dir))
    with tempfile.TemporaryDirectory() as work:
        if tokenizer is None:
            save_japanese_tokenizer(work, jglue_training_texts(jglue_dir))
            tokenizer = work
        words = load_fast_tokenizer(str(tokenizer))
        if type(words.backend_tokenizer.model).__name__ != "Unigram":
            raise ValueError(f"{tokenizer}: luke-japanese's word tokenizer is a SentencePiece unigram model, not "
                             f"{type(words.backend_tokenizer.model).__name__}")  # fmt: skip
        write_luke_tokenizer(words, entities, str(directory), source_dir=str(tokenizer))
    # The word table reaches the last id, <ent2> (len() of transformers 5's MLukeTokenizer counts added tokens twice).
    vocab_size = max(load_fast_tokenizer(str(directory)).get_vocab().values()) + 1
    torch.manual_seed(seed)
    sizes = {**TINY_JAPANESE, "vocab_size": vocab_size, "pad_token_id": words.pad_token_id,
             "bos_token_id": words.bos_token_id, "eos_token_id": words.eos_token_id,
             "entity_vocab_size": max(entities.values()) + 1, **config}  # fmt: skip
    LukeEncoder(LukeConfig(**sizes)).save_pretrained(str(directory))
    return directory
