"""The tiny LUKE-Japanese checkpoint: the layout of studio-ousia/luke-japanese-base(-lite), built offline."""

import itertools
import json
import unicodedata
from typing import List

import pytest
import torch
import transformers

from luke_allennlp.data.tokenization import load_fast_tokenizer
from luke_allennlp.luke_japanese import jglue_training_texts, jsquad_titles
from luke_allennlp.modeling import LukeEncoder


def test_layout_of_the_released_checkpoints(tiny_luke_japanese_dir, tiny_luke_japanese_lite_dir, shared_data):
    for directory in (tiny_luke_japanese_dir, tiny_luke_japanese_lite_dir):
        assert {"config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json",
                "sentencepiece.bpe.model", "entity_vocab.json"} <= {p.name for p in directory.iterdir()}  # fmt: skip
        assert json.loads((directory / "tokenizer_config.json").read_text())["tokenizer_class"] == "MLukeTokenizer"
        config = json.loads((directory / "config.json").read_text())
        assert config["model_type"] == "luke" and config["use_entity_aware_attention"] is True
        assert (config["bos_token_id"], config["pad_token_id"], config["eos_token_id"]) == (0, 1, 2)
        assert (config["max_position_embeddings"], config["type_vocab_size"], config["layer_norm_eps"]) == (
            514,
            1,
            1e-5,
        )
        # XLM-R's ids over 8,000 SentencePiece pieces: <mask> after them, then <ent> and <ent2> (the base's 32770, 32771).
        words = load_fast_tokenizer(str(directory))
        assert (words.bos_token_id, words.pad_token_id, words.eos_token_id, words.unk_token_id) == (0, 1, 2, 3)
        assert words.convert_tokens_to_ids(["<mask>", "<ent>", "<ent2>"]) == [8001, 8002, 8003]
        assert config["vocab_size"] == 8004 == max(words.get_vocab().values()) + 1
    # The full version: "ja:title" keys of JSQuAD's 59 article titles, [MASK2] appended last.
    entities = json.loads((tiny_luke_japanese_dir / "entity_vocab.json").read_text())
    titles = jsquad_titles(shared_data / "jglue")
    assert len(titles) == 59 and titles[:2] == ["梅雨", "グスタフ・マーラー"] and "Google 検索" in titles
    assert list(entities.items())[:5] == [
        ("[PAD]", 0),
        ("[UNK]", 1),
        ("[MASK]", 2),
        ("ja:梅雨", 3),
        ("ja:グスタフ・マーラー", 4),
    ]
    assert entities["[MASK2]"] == 62 == len(entities) - 1
    assert json.loads((tiny_luke_japanese_dir / "config.json").read_text())["entity_vocab_size"] == 63
    # The lite version: the special entities alone, in the conversion's order.
    lite = json.loads((tiny_luke_japanese_lite_dir / "entity_vocab.json").read_text())
    assert lite == {"[MASK]": 0, "[UNK]": 1, "[PAD]": 2, "[MASK2]": 3}
    assert json.loads((tiny_luke_japanese_lite_dir / "config.json").read_text())["entity_vocab_size"] == 4


def test_the_sentencepiece_model_is_trained_on_jglue_training_text(shared_data, tiny_luke_japanese_dir):
    texts = jglue_training_texts(shared_data / "jglue")
    assert len(texts) == 12451 * 2 + 8939 * 6  # JSTS's sentence pairs, JCommonsenseQA's questions and 5 choices
    assert texts[0] == "川べりでサーフボードを持った人たちがいます。"
    words = load_fast_tokenizer(str(tiny_luke_japanese_dir))
    pieces = words.tokenize(texts[0])
    assert pieces[0].startswith("▁") and "".join(pieces).lstrip("▁") == texts[0]  # no spaces, no unknown pieces
    sample = texts[::20]  # JSTS's and JCommonsenseQA's
    unknown = sum(ids.count(words.unk_token_id) for ids in words(sample)["input_ids"])
    assert unknown < 0.0005 * sum(map(len, sample))  # only the rarest characters (coverage 0.9995) are <unk>


def test_bad_jglue_lines_and_a_missing_directory_are_named(tmp_path):
    with pytest.raises(FileNotFoundError, match="jsts-v1.3/train-v1.3.json not found"):
        jglue_training_texts(tmp_path)
    (tmp_path / "jsts-v1.3").mkdir()
    (tmp_path / "jsts-v1.3" / "train-v1.3.json").write_text(
        '{"sentence1": "a", "sentence2": "b"}\n{"sentence1": "c"}\n'
    )
    with pytest.raises(ValueError, match=r"train-v1.3.json, line 2: expected a JSON object with .*sentence2"):
        jglue_training_texts(tmp_path)


def test_lite_checkpoint_runs_words_alone(tiny_luke_japanese_lite_dir):
    luke = LukeEncoder.from_pretrained(str(tiny_luke_japanese_lite_dir)).eval()
    assert luke.missing_from_checkpoint == []
    ids = load_fast_tokenizer(str(tiny_luke_japanese_lite_dir))("二人の男性がジャンボジェット機を見ています。")[
        "input_ids"
    ]
    output = luke(torch.tensor([ids]), torch.ones(1, len(ids), dtype=torch.long))
    assert output.last_hidden_state.shape == (1, len(ids), 32)


def jglue_sentences(shared_data, per_file: int = 100) -> List[str]:
    """Real Japanese text: the first sentences of JGLUE's valid files and JSQuAD's first contexts (Wikipedia)."""
    lines = []
    for name, fields in (("jsts-v1.3", ("sentence1", "sentence2")), ("jnli-v1.3", ("sentence1", "sentence2")),
                         ("jcommonsenseqa-v1.3", ("question", "choice0"))):  # fmt: skip
        with open(shared_data / "jglue" / name / "valid-v1.3.json", encoding="utf-8") as f:
            for line in itertools.islice(f, per_file):
                lines.extend(json.loads(line)[key] for key in fields)
    squad = json.loads((shared_data / "jglue" / "jsquad-v1.3" / "valid-v1.3.json").read_text(encoding="utf-8"))
    return lines + [article["paragraphs"][0]["context"] for article in squad["data"][:20]]


@pytest.fixture(scope="module")
def saved_by_transformers(tiny_luke_japanese_dir, tmp_path_factory):
    """tiny_luke_japanese_dir as transformers 5 saves it (`MLukeTokenizer`, `LukeModel`): tokenizer.json and a
    tokenizer_config.json holding the entity vocabulary; no sentencepiece.bpe.model, no entity_vocab.json."""
    directory = tmp_path_factory.mktemp("luke-japanese-saved")
    transformers.MLukeTokenizer.from_pretrained(str(tiny_luke_japanese_dir)).save_pretrained(str(directory))
    transformers.LukeModel.from_pretrained(str(tiny_luke_japanese_dir)).save_pretrained(str(directory))
    return directory


def test_a_directory_transformers_5_saved_loads_as_model_name(tiny_luke_japanese_dir, saved_by_transformers, shared_data,
                                                              tmp_path, monkeypatch):  # fmt: skip
    from luke_allennlp.data.checkpoint_vocab import checkpoint_entity_vocab
    from luke_allennlp.modeling.loading import special_entity_ids
    from tests.commands.test_build_tiny_checkpoint import run_command

    assert {p.name for p in saved_by_transformers.iterdir()} == {"config.json", "model.safetensors", "tokenizer.json",
                                                                  "tokenizer_config.json"}  # fmt: skip
    # transformers 5 adds the special entities and "▁<ent>", "▁<ent2>" to the saved word tokenizer (ids 8004-8009,
    # beyond the word table): the word tokenizer read here has the released ids all the same.
    added = [t["content"] for t in json.loads((saved_by_transformers / "tokenizer.json").read_text())["added_tokens"]]
    assert "[MASK]" in added and "▁<ent>" in added
    ours, released = load_fast_tokenizer(str(saved_by_transformers)), load_fast_tokenizer(str(tiny_luke_japanese_dir))
    assert ours.get_vocab() == released.get_vocab() and max(ours.get_vocab().values()) == 8003
    for line in jglue_sentences(shared_data, per_file=20) + ["[MASK]と[UNK]は単語ではない。"]:
        assert ours(line)["input_ids"] == released(line)["input_ids"], line
    # The entity vocabulary from tokenizer_config.json, ja: prefixes read as the language.
    vocab = checkpoint_entity_vocab(str(saved_by_transformers))
    assert vocab.get("梅雨", language="ja") == vocab["梅雨"] == 3 and len(vocab) == 63 and vocab["[MASK2]"] == 62
    assert special_entity_ids(str(saved_by_transformers), {"[PAD]": 9, "[MASK]": 9}) == {"[PAD]": 0, "[MASK]": 2}
    luke = LukeEncoder.from_pretrained(str(saved_by_transformers))
    assert luke.missing_from_checkpoint == [] and luke.config.vocab_size == 8004
    # ... and as the tokenizer of a new tiny checkpoint: the same layout, without the sentencepiece model file.
    run_command("build-tiny-checkpoint", str(tmp_path / "again"), "--kind", "luke-japanese", "--tokenizer",
                str(saved_by_transformers), monkeypatch=monkeypatch)  # fmt: skip
    assert not (tmp_path / "again" / "sentencepiece.bpe.model").exists()
    assert load_fast_tokenizer(str(tmp_path / "again")).get_vocab() == released.get_vocab()
    assert json.loads((tmp_path / "again" / "config.json").read_text())["vocab_size"] == 8004


def test_lite_saved_by_transformers_keeps_its_special_entity_ids(tiny_luke_japanese_lite_dir, tmp_path):
    from luke_allennlp.modeling.loading import special_entity_ids

    transformers.MLukeTokenizer.from_pretrained(str(tiny_luke_japanese_lite_dir)).save_pretrained(str(tmp_path))
    assert not (tmp_path / "entity_vocab.json").exists()
    defaults = {"[PAD]": 0, "[UNK]": 1, "[MASK]": 2}  # LUKE's ids, not the lite ones
    assert special_entity_ids(str(tmp_path), defaults) == {"[PAD]": 2, "[UNK]": 1, "[MASK]": 0}


def test_encoder_matches_transformers_luke_model(tiny_luke_japanese_dir, saved_by_transformers):
    from luke_allennlp.data.checkpoint_vocab import checkpoint_entity_vocab

    text = "梅雨は、北海道と小笠原諸島を除く日本、朝鮮半島南部、中国の南部から長江流域にかけての沿海部でみられる。"
    for directory in (tiny_luke_japanese_dir, saved_by_transformers):
        words = load_fast_tokenizer(str(directory))
        vocab = checkpoint_entity_vocab(str(directory))
        ids = words(text)["input_ids"]
        batch = dict(input_ids=torch.tensor([ids]), attention_mask=torch.ones(1, len(ids), dtype=torch.long),
                     entity_ids=torch.tensor([[vocab.get("梅雨", language="ja"), vocab.mask_id]]),
                     entity_attention_mask=torch.ones(1, 2, dtype=torch.long),
                     entity_position_ids=torch.tensor([[[1, 2, -1], [5, 6, 7]]]))  # fmt: skip
        ours = LukeEncoder.from_pretrained(str(directory)).eval()
        reference = transformers.LukeModel.from_pretrained(str(directory)).eval()
        with torch.no_grad():
            actual, expected = ours(**batch), reference(**batch)
        assert (actual.last_hidden_state - expected.last_hidden_state).abs().max() < 1e-5
        assert (actual.entity_last_hidden_state - expected.entity_last_hidden_state).abs().max() < 1e-5


def test_word_ids_are_sentencepieces_and_transformers_mluke_tokenizers(tiny_luke_japanese_dir, shared_data):
    """On real JGLUE text, the word ids equal the SentencePiece model's own (fairseq's offset: piece i is i + 1, its
    <unk> 0 is 3), as luke-japanese was pretrained with; and transformers 5's MLukeTokenizer's wherever the text is
    already normal: that tokenizer skips SentencePiece's normaliser (NFKC: full-width "１" and "（" stay unknown there;
    runs of spaces are not collapsed)."""
    import sentencepiece

    pieces = sentencepiece.SentencePieceProcessor(model_file=str(tiny_luke_japanese_dir / "sentencepiece.bpe.model"))
    words = load_fast_tokenizer(str(tiny_luke_japanese_dir))
    mluke = transformers.MLukeTokenizer.from_pretrained(str(tiny_luke_japanese_dir))
    lines = jglue_sentences(shared_data)
    compared = unknown = 0
    for line in lines:
        ours = words(line)["input_ids"]
        assert ours == [0] + [i + 1 if i else 3 for i in pieces.encode(line)] + [2], line
        if unicodedata.normalize("NFKC", line) != line or "  " in line:
            continue
        theirs = mluke(line)["input_ids"]
        assert len(ours) == len(theirs), line
        # transformers 5's MLukeTokenizer numbers a character the pieces lack 0 (<s>), not <unk> (3).
        assert all(a == b or (a == 3 and b == 0) for a, b in zip(ours, theirs)), line
        compared += 1
        unknown += ours.count(3)
    assert len(lines) == 620 and compared > 450 and unknown < 30
    encoded = mluke("梅雨は日本の気象である。", entities=["ja:梅雨"], entity_spans=[(0, 2)])
    assert encoded["entity_ids"] == [3]


def japanese_task_files(shared_data, directory):
    """The hand-picked names of tests/data_readers/japanese.py in JSQuAD paragraphs and JGLUE captions, as an Open
    Entity file (paper format), a KBP37 file and a pre-segmented CoNLL file."""
    from tests.data_readers.japanese import conll_lines, japanese_mentions

    texts = japanese_mentions(shared_data / "jglue")
    typing = [{"sent": text, "start": s, "end": e, "labels": [kind]} for text, ms in texts for _, (s, e), kind in ms]
    (directory / "typing.json").write_text(json.dumps(typing, ensure_ascii=False), encoding="utf-8")
    blocks, conll = [], []
    tags = {"location": "LOC", "person": "PER", "organization": "ORG", "object": "MISC", "entity": "MISC"}
    for number, (text, mentions) in enumerate(texts, start=1):
        kept = [
            m for i, m in enumerate(mentions) if not any(o[1][0] < m[1][1] and m[1][0] < o[1][1] for o in mentions[:i])
        ]
        conll += ["-DOCSTART- O", ""] + conll_lines(text, kept, tags) + [""]
        if len(kept) >= 2:
            (_, (hs, he), _), (_, (ts, te), _) = sorted(kept[:2], key=lambda m: m[1])
            tagged = f"{text[:hs]}<e1>{text[hs:he]}</e1>{text[he:ts]}<e2>{text[ts:te]}</e2>{text[te:]}"
            blocks.append(
                f'{number}\t"{tagged}"\n{"no_relation" if number % 2 else "per:cities_of_residence(e1,e2)"}\n'
            )
    (directory / "relations.txt").write_text("\n".join(blocks), encoding="utf-8")
    (directory / "ner.txt").write_text("\n".join(conll), encoding="utf-8")
    return {"typing": directory / "typing.json", "relations": directory / "relations.txt", "ner": directory / "ner.txt"}


# (config, checkpoint fixture, data, overrides): the full and the lite checkpoint as MODEL_NAME of the entity tasks.
CONFIG_RUNS = [
    pytest.param("entity_typing/open_entity.jsonnet", "tiny_luke_japanese_lite_dir", "typing", {}, id="typing-lite"),
    pytest.param("ner/conll2003.jsonnet", "tiny_luke_japanese_dir", "ner",
                 {"dataset_reader.words_without_spaces": True, "dataset_reader.encoding": "iob2"}, id="ner"),
    pytest.param("relation_classification/kbp37.jsonnet", "tiny_luke_japanese_dir", "relations", {}, id="kbp37"),
    pytest.param("entity_typing/open_entity.jsonnet", "tiny_luke_japanese_dir", "typing", {}, id="typing",
                 marks=pytest.mark.slow),
]  # fmt: skip


@pytest.mark.parametrize("config,checkpoint,data,overrides", CONFIG_RUNS)
def test_entity_task_configs_train_on_japanese_text(config, checkpoint, data, overrides, shared_data, tmp_path,
                                                    monkeypatch, request):  # fmt: skip
    from allennlp.commands.train import train_model_from_file

    from tests.conftest import REPO_ROOT, set_config_env

    files = japanese_task_files(shared_data, tmp_path)
    set_config_env(monkeypatch, request.getfixturevalue(checkpoint), files[data])
    small = {"trainer.num_epochs": 1, "data_loader.batch_sampler.batch_size": 8, "dataset_reader.max_seq_length": 128}
    train_model_from_file(
        str(REPO_ROOT / "configs" / config), str(tmp_path / "run"), overrides=json.dumps({**small, **overrides})
    )
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert metrics["training_loss"] > 0 and any(key.startswith("validation_") and "f1" in key for key in metrics)
