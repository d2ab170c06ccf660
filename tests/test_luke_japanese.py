"""The tiny LUKE-Japanese checkpoint: the layout of studio-ousia/luke-japanese-base(-lite), built offline."""

import json

import pytest
import torch

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
    unknown = sum(ids.count(words.unk_token_id) for ids in words(texts)["input_ids"])
    assert 0 < unknown < 0.001 * sum(map(len, texts))  # the rarest characters (coverage 0.9995) are <unk>


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
