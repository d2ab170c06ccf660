"""
Tiny, randomly initialised checkpoints built offline from a config, for smoke runs, demos and tests: what
`allennlp build-tiny-checkpoint` writes (a product module: the command must not depend on the test helpers of
`luke_allennlp.testing`, which re-exports these names so the tests use them unchanged).

Each directory holds `config.json`, weights and the RoBERTa tokenizer files, so it works as `model_name` for
`LukeEncoder.from_pretrained`, the `luke` embedder and allennlp's `pretrained_transformer` components.
"""

import json
import os
from pathlib import Path
from typing import Any, Optional, Sequence, Union

import torch

ROBERTA_VOCAB_SIZE = 50265
TINY = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=37)
# The small LUKE of the learning checks (benchmarks/*_learning_check.py): trained from scratch on real data.
SMALL = dict(hidden_size=128, entity_emb_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=256,
             entity_vocab_size=4)  # fmt: skip
# The paper's base size (LUKE-base, RoBERTa-base), for a randomly initialised checkpoint of the real shape.
BASE = dict(hidden_size=768, entity_emb_size=256, num_hidden_layers=12, num_attention_heads=12, intermediate_size=3072)


def shared_data_dir() -> Path:
    """`../shared/data` beside the repository (override with LUKE_SHARED_DATA)."""
    default = Path(__file__).resolve().parents[1].parent / "shared" / "data"
    path = Path(os.environ.get("LUKE_SHARED_DATA", default))
    if not path.is_dir():
        raise FileNotFoundError(
            f"shared data not found at {path}: the folder shared/ must sit beside the checkout "
            "(or set LUKE_SHARED_DATA)"
        )
    return path


def save_roberta_tokenizer(directory: Union[str, os.PathLike]) -> None:
    """Saves the RoBERTa-base BPE tokenizer from the shared data as a fast tokenizer."""
    from transformers import RobertaTokenizerFast

    tokenizer = RobertaTokenizerFast.from_pretrained(str(shared_data_dir() / "tokenizers" / "roberta-base"))
    tokenizer.save_pretrained(str(directory))


def write_tiny_checkpoint(
    directory: Union[str, os.PathLike],
    kind: str = "luke",
    seed: int = 0,
    tokenizer: Optional[Union[str, os.PathLike]] = None,
    entity_vocab: Optional[Union[str, os.PathLike]] = None,
    **config: Any,
) -> Path:
    """
    Writes a tiny random checkpoint of `kind` "luke" (`LukeEncoder.save_pretrained`), "roberta" or "bert"
    (`transformers` models) with the RoBERTa tokenizer of the shared data, or the fast tokenizer of the
    directory `tokenizer` (whose size then sets the word vocabulary), or "xlnet" (`XLNetModel`) with a small
    sentencepiece tokenizer trained in the call (see `save_xlnet_tokenizer`), or "mluke" (laid out as a released
    `studio-ousia/mluke-*` checkpoint, see `write_tiny_mluke_checkpoint`). For "luke", `entity_vocab` (an
    entity vocabulary file, `EntityVocab.from_file`) sets the entity table's size and is saved as
    `entity_vocab.json`. `config` overrides the tiny sizes (e.g. `**BASE`). "luke-japanese" and "luke-japanese-lite"
    are laid out as `studio-ousia/luke-japanese-base(-lite)` over a SentencePiece model trained on the shared JGLUE
    training text, or over `tokenizer` (see `luke_allennlp.luke_japanese`).
    """
    if kind in ("luke-japanese", "luke-japanese-lite"):
        from luke_allennlp.luke_japanese import write_tiny_luke_japanese_checkpoint

        jglue = None if tokenizer is not None else shared_data_dir() / "jglue"
        return write_tiny_luke_japanese_checkpoint(directory, kind.endswith("-lite"), seed, tokenizer, jglue,
                                                   entity_vocab, **config)  # fmt: skip
    if kind == "mluke":
        return write_tiny_mluke_checkpoint(directory, seed, tokenizer, entity_vocab, **config)
    if kind != "luke" and entity_vocab is not None:
        raise ValueError(f"an entity vocabulary is for a LUKE checkpoint, not a {kind} one")
    if kind == "xlnet" and tokenizer is not None:
        raise ValueError("an xlnet checkpoint gets its own sentencepiece tokenizer, not --tokenizer")
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(seed)
    word_tokenizer = None
    if tokenizer is not None:
        from luke_allennlp.data.tokenization import load_fast_tokenizer, load_tokenizer

        if (Path(tokenizer) / "tokenizer_config.json").exists() or (Path(tokenizer) / "tokenizer.json").exists():
            word_tokenizer = load_fast_tokenizer(str(tokenizer))
        else:  # bare BPE files (vocab.json, merges.txt), as the shared data's roberta-base, as they are
            word_tokenizer = load_tokenizer(str(tokenizer))
        # The largest id, not len(): a vocabulary may have gaps (RoBERTa's vocab.json has 50,262 entries, ids to 50,264).
        vocab_size = max(word_tokenizer.get_vocab().values()) + 1
        config = {"vocab_size": vocab_size, "pad_token_id": word_tokenizer.pad_token_id, **config}
    sizes = {**TINY, "vocab_size": ROBERTA_VOCAB_SIZE, **config}
    if kind == "luke":
        from luke_allennlp.modeling import LukeConfig, LukeEncoder

        vocab = None
        if entity_vocab is not None:
            from luke_allennlp.data.entity_vocab import EntityVocab

            vocab = EntityVocab.from_file(entity_vocab)
            sizes["entity_vocab_size"] = len(vocab)
        sizes = {"entity_vocab_size": 40, "entity_emb_size": 16, "max_position_embeddings": 514,
                 "type_vocab_size": 1, "layer_norm_eps": 1e-5, **sizes}  # fmt: skip
        if vocab is not None:
            (directory / "entity_vocab.json").write_text(json.dumps(vocab.to_transformers_json(), ensure_ascii=False))
        LukeEncoder(LukeConfig(**sizes)).save_pretrained(str(directory))
    elif kind == "roberta":
        from transformers import RobertaConfig, RobertaModel

        RobertaModel(RobertaConfig(max_position_embeddings=514, type_vocab_size=1, **sizes)).save_pretrained(directory)
    elif kind == "bert":
        from transformers import BertConfig, BertModel

        BertModel(BertConfig(**{"max_position_embeddings": 512, "pad_token_id": 1, **sizes})).save_pretrained(directory)
    elif kind == "xlnet":
        from transformers import XLNetConfig, XLNetModel

        vocab_size = save_xlnet_tokenizer(directory)
        xlnet = {"d_model": TINY["hidden_size"], "n_layer": TINY["num_hidden_layers"], "n_head": TINY["num_attention_heads"],
                 "d_inner": TINY["intermediate_size"], "vocab_size": vocab_size, "use_mems_eval": False, **config}  # fmt: skip
        XLNetModel(XLNetConfig(**xlnet)).save_pretrained(directory)
        return directory
    else:
        raise ValueError(f"kind must be luke, mluke, roberta, bert or xlnet, not {kind!r}")
    if word_tokenizer is not None:
        word_tokenizer.save_pretrained(str(directory))
    else:
        save_roberta_tokenizer(directory)
    return directory


# The entities of `write_tiny_mluke_checkpoint`'s default vocabulary: each id's titles in several languages, as mLUKE's
# vocabulary merges them through inter-language links (a title with its own colon included).
MLUKE_SAMPLE_ENTITIES = (
    (("Tokyo", "en"), ("東京都", "ja"), ("Tokio", "es"), ("Токио", "ru")),
    (("Berlin", "en"), ("Berlin", "de"), ("ベルリン", "ja"), ("Берлин", "ru")),
    (("Germany", "en"), ("Deutschland", "de"), ("Alemania", "es"), ("Duitsland", "nl")),
    (("Angela Merkel", "en"), ("Angela Merkel", "de"), ("Ангела Меркель", "ru")),
    (("Moscow", "en"), ("Москва", "ru"), ("Moskau", "de")),
    (("Star Wars: Episode IV – A New Hope", "en"), ("Krieg der Sterne", "de")),
    (("Apple Inc.", "en"), ("Apple", "fr")),
    (("Apple", "en"), ("Pomme", "fr")),
)


def write_tiny_mluke_checkpoint(
    directory: Union[str, os.PathLike],
    seed: int = 0,
    tokenizer: Optional[Union[str, os.PathLike]] = None,
    entity_vocab: Optional[Union[str, os.PathLike]] = None,
    **config: Any,
) -> Path:
    """
    A tiny random LUKE laid out as a released `studio-ousia/mluke-*` checkpoint: `MLukeTokenizer` files (tokenizer.json
    with `<ent>` and `<ent2>` added, `sentencepiece.bpe.model`, a tokenizer_config.json naming MLukeTokenizer),
    `entity_vocab.json` keyed by `language:title` with `[PAD]` 0, `[UNK]` 1, `[MASK]` 2 and `[MASK2]` last (as
    transformers' conversion of mLUKE writes it), and a `config.json` whose `vocab_size` counts the `<ent>`/`<ent2>`
    rows. `tokenizer` is an XLM-R-style sentencepiece tokenizer directory (default: one trained in the call, see
    `save_xlmr_tokenizer`); `entity_vocab` LUKE's JSONL (multilingual lines), TSV or an mLUKE `entity_vocab.json`
    (default: `MLUKE_SAMPLE_ENTITIES`). `config` overrides the tiny sizes.
    """
    import tempfile

    from luke_allennlp.commands.export_luke import write_luke_tokenizer
    from luke_allennlp.data.entity_vocab import EntityVocab
    from luke_allennlp.data.tokenization import load_fast_tokenizer
    from luke_allennlp.modeling import LukeConfig, LukeEncoder

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    if entity_vocab is None:
        entities = {name: i for i, name in enumerate(EntityVocab.SPECIAL_TOKENS)}
        for entity_id, pairs in enumerate(MLUKE_SAMPLE_ENTITIES, start=len(entities)):
            entities.update({f"{language}:{title}": entity_id for title, language in pairs})
    else:
        read = (
            EntityVocab.from_language_prefixed_json
            if os.fspath(entity_vocab).endswith(".json")
            else EntityVocab.from_file
        )
        entities = read(entity_vocab).to_transformers_json(language_prefixed=True)
    entities.setdefault("[MASK2]", max(entities.values()) + 1)  # transformers' conversion of mLUKE appends it
    with tempfile.TemporaryDirectory() as work:
        if tokenizer is None:
            save_xlmr_tokenizer(work)
            tokenizer = work
        words = load_fast_tokenizer(str(tokenizer))
        if type(words.backend_tokenizer.model).__name__ != "Unigram":
            raise ValueError(
                f"{tokenizer}: mLUKE's word tokenizer is XLM-R's sentencepiece, not {type(words).__name__}"
            )
        write_luke_tokenizer(words, entities, str(directory), source_dir=str(tokenizer))
    # The word table reaches the last id, <ent2> (len() of transformers 5's MLukeTokenizer counts added tokens twice).
    vocab_size = max(load_fast_tokenizer(str(directory)).get_vocab().values()) + 1
    torch.manual_seed(seed)
    sizes = {**TINY, "entity_emb_size": 16, "max_position_embeddings": 514, "type_vocab_size": 1, "layer_norm_eps": 1e-5,
             "vocab_size": vocab_size, "pad_token_id": words.pad_token_id, "bos_token_id": words.bos_token_id,
             "eos_token_id": words.eos_token_id, "entity_vocab_size": max(entities.values()) + 1, **config}  # fmt: skip
    LukeEncoder(LukeConfig(**sizes)).save_pretrained(str(directory))
    return directory


def write_tiny_luke_mlm(
    directory: Union[str, os.PathLike], entity_titles: Sequence[str], seed: int = 0, **config: Any
) -> Path:
    """
    A tiny random LUKE with both pretraining heads (`LukeForPretraining.save_pretrained`: transformers'
    `LukeForMaskedLM` layout, the masked-entity head included), the RoBERTa tokenizer, and `entity_vocab.json`
    holding `entity_titles` (ids in order), as entity disambiguation starts from. `config` overrides the tiny sizes.
    """
    import json

    from luke_allennlp.modeling import LukeConfig, LukeForPretraining

    directory = Path(directory)
    torch.manual_seed(seed)
    sizes = {"entity_emb_size": 16, "max_position_embeddings": 514, "type_vocab_size": 1, "layer_norm_eps": 1e-5,
             **TINY, **config, "vocab_size": ROBERTA_VOCAB_SIZE, "entity_vocab_size": len(entity_titles)}  # fmt: skip
    LukeForPretraining(LukeConfig(**sizes)).save_pretrained(str(directory))
    save_roberta_tokenizer(directory)
    (directory / "entity_vocab.json").write_text(json.dumps({title: i for i, title in enumerate(entity_titles)}))
    return directory


def save_xlnet_tokenizer(directory: Union[str, os.PathLike], vocab_size: int = 2000) -> int:
    """
    Trains a small sentencepiece unigram model offline on the SQuAD dev passages of the shared data, with
    XLNet's special pieces at XLNet's ids (`<unk>` 0, `<s>` 1, `</s>` 2, `<cls>` 3, `<sep>` 4, `<pad>` 5,
    `<mask>` 6, `<eod>` 7, `<eop>` 8), and saves it as an `XLNetTokenizerFast`. Returns its vocabulary size.
    """
    import tempfile

    import sentencepiece as spm
    from transformers import XLNetTokenizerFast

    squad = json.loads((shared_data_dir() / "squad1.1" / "dev-v1.1.json").read_text(encoding="utf-8"))
    texts = [p["context"] for article in squad["data"][:12] for p in article["paragraphs"]]
    with tempfile.TemporaryDirectory() as work:
        corpus = Path(work) / "corpus.txt"
        corpus.write_text("\n".join(texts), encoding="utf-8")
        spm.SentencePieceTrainer.train(
            input=str(corpus), model_prefix=str(Path(work) / "spiece"), vocab_size=vocab_size, model_type="unigram",
            character_coverage=1.0, user_defined_symbols=["<cls>", "<sep>", "<pad>", "<mask>", "<eod>", "<eop>"],
            minloglevel=2,
        )  # fmt: skip
        tokenizer = XLNetTokenizerFast.from_pretrained(work)  # reads spiece.model
        tokenizer.save_pretrained(str(directory))
    return len(tokenizer)


def save_xlmr_tokenizer(
    directory: Union[str, os.PathLike], texts: Optional[Sequence[str]] = None, vocab_size: int = 2000
) -> int:
    """
    Trains a small sentencepiece unigram model offline, as XLM-R's (and mLUKE's) word tokenizer is, and saves it as
    an `XLMRobertaTokenizer` with XLM-R's special ids (`<s>` 0, `<pad>` 1, `</s>` 2, `<unk>` 3, `<mask>` last: the
    sentencepiece pieces are shifted by one, as fairseq's dictionary does) plus its `sentencepiece.bpe.model`.
    `texts` defaults to the SQuAD dev passages of the shared data with the multilingual sentences of
    `tests/fixtures/data/multilingual/sentences.txt` (German, Spanish, Dutch, Japanese, Russian, ...), so that
    non-Latin scripts get pieces of their own. Returns the tokenizer's size.
    """
    import shutil
    import tempfile

    import sentencepiece as spm
    from transformers import XLMRobertaTokenizer

    if texts is None:
        squad = json.loads((shared_data_dir() / "squad1.1" / "dev-v1.1.json").read_text(encoding="utf-8"))
        texts = [p["context"] for article in squad["data"][:12] for p in article["paragraphs"]]
        multilingual = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "data" / "multilingual"
        if (multilingual / "sentences.txt").is_file():
            texts += (multilingual / "sentences.txt").read_text(encoding="utf-8").splitlines()
    with tempfile.TemporaryDirectory() as work:
        corpus = Path(work) / "corpus.txt"
        corpus.write_text("\n".join(texts), encoding="utf-8")
        spm.SentencePieceTrainer.train(
            input=str(corpus), model_prefix=str(Path(work) / "sentencepiece.bpe"), vocab_size=vocab_size,
            model_type="unigram", character_coverage=1.0, minloglevel=2,
        )  # fmt: skip
        tokenizer = XLMRobertaTokenizer.from_pretrained(work)  # converts sentencepiece.bpe.model, fairseq's ids
        tokenizer.save_pretrained(str(directory))
        # transformers 5 saves tokenizer.json alone; transformers 4 and MLukeTokenizer's export read the model file.
        shutil.copyfile(Path(work) / "sentencepiece.bpe.model", Path(directory) / "sentencepiece.bpe.model")
    return len(tokenizer)
