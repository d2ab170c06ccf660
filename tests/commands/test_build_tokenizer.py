"""`allennlp build-tokenizer` (through allennlp's entry point): both kinds on a Bulgarian dump and a text file, the
transformers 5 layout they are written in, what takes them (build-tiny-checkpoint's LUKE and mLUKE), and the
refusals."""

import json

import pytest
import torch
from transformers import AutoTokenizer

from luke_allennlp.resources.entity_vocab import EntityVocab
from luke_allennlp.resources.output import lock_output
from luke_allennlp.resources.tokenization import load_fast_tokenizer
from luke_allennlp.wikipedia.text import article_texts
from tests.test_mluke_pipeline import allennlp
from tests.wikipedia.bulgarian_dump import write_bulgarian_dump

# Old Bulgarian letters only in the text file: its lines are trained on too.
TEXT_LINES = ["\ufeffВ ѣ и ѫ са стари букви .", "", "Ѣ и Ѫ са главни ."]


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    root = tmp_path_factory.mktemp("build-tokenizer")
    dump = write_bulgarian_dump(root / "bgwiki-latest-pages-articles.xml.bz2")
    text = root / "old-letters.txt"
    text.write_text("\n".join(TEXT_LINES) + "\n", encoding="utf-8")
    return {"root": root, "dump": dump, "text": text, "texts": [*article_texts(dump), TEXT_LINES[0][1:], TEXT_LINES[2]]}


@pytest.mark.parametrize("kind", ["unigram", "bpe"])
def test_a_tokenizer_of_each_kind_from_a_dump_and_a_text_file(inputs, kind, tmp_path):
    out = tmp_path / kind
    printed = allennlp("build-tokenizer", inputs["dump"], inputs["text"], out, "--model", kind, "--vocab-size", "500")
    assert sorted(p.name for p in out.iterdir()) == ["tokenizer.json", "tokenizer_config.json"]  # transformers 5's
    assert "texts (articles, lines)                         12" in printed  # 10 articles, 2 lines
    assert "unknown pieces in the first 12 texts  0 of" in printed
    config = json.loads((out / "tokenizer_config.json").read_text())
    tokenizer = AutoTokenizer.from_pretrained(str(out))
    special = [tokenizer.convert_tokens_to_ids(t) for t in ("<s>", "<pad>", "</s>", "<unk>")]
    assert special == [0, 1, 2, 3] and tokenizer.model_max_length == 512
    if kind == "unigram":  # XLM-R's: <mask> last, ▁ before each word, every character of the text a piece
        assert config["tokenizer_class"] == "XLMRobertaTokenizer" and tokenizer.mask_token_id == len(tokenizer) - 1
        assert tokenizer.tokenize("Сопот")[0].startswith("▁")
    else:  # RoBERTa's byte-level BPE: <mask> 4, the 500 pieces reached on this text
        assert config["tokenizer_class"] == "RobertaTokenizer" and tokenizer.mask_token_id == 4
        assert len(tokenizer) == 500
    ids = [i for text in inputs["texts"] for i in tokenizer(text, add_special_tokens=False)["input_ids"]]
    assert tokenizer.unk_token_id not in ids and "ѫ" in tokenizer.decode(ids)  # (the text file's letters too)
    # "в <mask>" as RoBERTa's and XLM-R's mask token: the space before it is its own, not a piece
    tokens = tokenizer.convert_ids_to_tokens(tokenizer("роден в <mask>.")["input_ids"])
    assert (
        tokens.count("<mask>") == 1
        and tokenizer.convert_tokens_to_string([tokens[tokens.index("<mask>") - 1]]).strip() == "в"
    )
    # pre-split words (the readers'): the project's loader
    words = load_fast_tokenizer(str(out))(["Иван", "Вазов"], is_split_into_words=True)
    assert words.word_ids()[1:-1] and set(words.word_ids()[1:-1]) == {0, 1}


def test_what_takes_the_tokenizers(inputs, tmp_path):
    """build-tiny-checkpoint: a LUKE over the BPE, an mLUKE (MLukeTokenizer files) over the unigram model."""
    from luke_allennlp.modeling import LukeEncoder

    vocab = tmp_path / "bg.jsonl"  # a Bulgarian entity vocabulary: LUKE's entity_vocab.json keeps its language
    titles = ["[PAD]", "[UNK]", "[MASK]", "Сопот", "София"]
    vocab.write_text(
        "".join(json.dumps({"id": i, "entities": [[t, "bg"]], "count": 0}) + "\n" for i, t in enumerate(titles))
    )
    for kind, checkpoint in (("bpe", "luke"), ("unigram", "mluke")):
        allennlp("build-tokenizer", inputs["dump"], tmp_path / kind, "--model", kind, "--vocab-size", "400")
        allennlp("build-tiny-checkpoint", tmp_path / checkpoint, "--kind", checkpoint, "--tokenizer", tmp_path / kind,
                 "--entity-vocab", vocab)  # fmt: skip
        entities = EntityVocab.from_checkpoint(str(tmp_path / checkpoint))
        assert entities.get("Сопот", language="bg") == 3 and entities.languages == ["bg"]
        tokenizer = load_fast_tokenizer(str(tmp_path / checkpoint))
        ids = tokenizer("Иван Вазов е роден в Сопот.")["input_ids"]
        assert tokenizer.unk_token_id not in ids
        hidden = LukeEncoder.from_pretrained(str(tmp_path / checkpoint))(torch.tensor([ids])).last_hidden_state
        assert hidden.shape == (1, len(ids), 32)
    config = json.loads((tmp_path / "mluke" / "tokenizer_config.json").read_text())
    assert config["tokenizer_class"] == "MLukeTokenizer"


def test_refusals(inputs, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "x").write_text("")
    with pytest.raises(SystemExit, match=r"^allennlp build-tokenizer: error: .*out is not empty$"):
        allennlp("build-tokenizer", inputs["dump"], out)
    with pytest.raises(SystemExit, match=r"missing.txt: no such file$"):
        allennlp("build-tokenizer", tmp_path / "missing.txt", tmp_path / "new")
    with lock_output(tmp_path / "locked"):  # one writer per output
        with pytest.raises(SystemExit, match=r"locked .*(in use|being written)"):
            allennlp("build-tokenizer", inputs["text"], tmp_path / "locked")
    latin1 = tmp_path / "latin1.txt"
    latin1.write_bytes("Сопот\n".encode("utf-8") + "Ã©t\xe9\n".encode("latin-1"))
    with pytest.raises(SystemExit, match=r"latin1.txt, line 2: not UTF-8 text"):
        allennlp("build-tokenizer", latin1, tmp_path / "new")
    with pytest.raises(SystemExit, match=r"--vocab-size must be larger than the 5 special tokens, not 5"):
        allennlp("build-tokenizer", inputs["text"], tmp_path / "new", "--vocab-size", "5")
    assert not (tmp_path / "new").exists() and not (tmp_path / "locked").exists()
