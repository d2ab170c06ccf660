"""
Japanese pretraining data through the pipeline a user runs, on real Japanese Wikipedia text: a jawiki dump made from
JSQuAD's paragraphs with links on real names and two redirects (tests/wikipedia/japanese_dump.py) -> a SentencePiece
tokenizer trained on those articles -> `build-entity-vocab` -> `build-pretraining-corpus` (sentences end at `。`) ->
a few steps of `train` stage 1 from a tiny RoBERTa with that tokenizer -> `export-luke`: a checkpoint in
luke-japanese's layout (MLukeTokenizer, `ja:title` entities). allennlp's entry point runs in this process (see
tests/test_mluke_pipeline.py).
"""

import functools
import json
import re
import unicodedata

import datasets
import pytest
import torch
import transformers

from luke_allennlp.fixtures.luke_japanese import save_japanese_tokenizer
from luke_allennlp.resources.checkpoint_vocab import checkpoint_entity_vocab
from luke_allennlp.resources.entity_vocab import EntityVocab
from luke_allennlp.resources.tokenization import load_fast_tokenizer
from luke_allennlp.testing import write_tiny_checkpoint
from tests.conftest import REPO_ROOT
from tests.models.test_luke_pretraining import TINY
from tests.test_mluke_pipeline import allennlp
from tests.wikipedia.japanese_dump import ARTICLES, REDIRECTS, jsquad_paragraphs, write_japanese_dump

nfkc = functools.partial(unicodedata.normalize, "NFKC")  # SentencePiece's normaliser, as far as these texts go


@pytest.fixture(scope="module")
def data(shared_data, tmp_path_factory):
    root = tmp_path_factory.mktemp("jawiki")
    dump = write_japanese_dump(root / "jawiki-sample.xml", shared_data / "jglue")
    # The tokenizer of these articles (all their JSQuAD paragraphs), as LUKE-Japanese's was trained on Wikipedia.
    paragraphs = jsquad_paragraphs(shared_data / "jglue")
    save_japanese_tokenizer(
        root / "tokenizer",
        [p for title in ARTICLES for p in paragraphs[title]],
        vocab_size=2000,
        character_coverage=1.0,
    )
    vocab_out = allennlp(
        "build-entity-vocab", root / "jawiki-sample.xml", root / "vocab.jsonl", "--include-missing-pages"
    )
    allennlp(
        "build-pretraining-corpus",
        root / "jawiki-sample.xml",
        root / "tokenizer",
        root / "vocab.jsonl",
        root / "corpus",
    )
    return {
        "root": root,
        "dump": dump,
        "vocab_out": vocab_out,
        "tokenizer": load_fast_tokenizer(str(root / "tokenizer")),
        "vocab": EntityVocab.from_file(root / "vocab.jsonl"),
        "corpus": datasets.load_from_disk(str(root / "corpus")),
        "metadata": json.loads((root / "corpus" / "metadata.json").read_text(encoding="utf-8")),
    }


def sentences(paragraph: str):
    """The sentences of a paragraph by another route than the corpus builder's: a `。` ends one, except inside
    「」『』（）."""
    found, depth, start = [], 0, 0
    for i, character in enumerate(paragraph):
        depth += (character in "「『（") - (character in "」』）")
        if character == "。" and depth == 0:
            found.append(paragraph[start : i + 1].strip())
            start = i + 1
    return found + ([paragraph[start:].strip()] if paragraph[start:].strip() else [])


def test_entity_vocabulary_counts_links_through_redirects(data):
    vocab = data["vocab"]
    assert vocab.language == "ja" and len(vocab) == 19  # 16 linked titles and the 3 special entities
    links = [target for pairs in data["dump"]["links"].values() for _, target in pairs]
    resolved = [REDIRECTS.get(target, target) for target in links]
    assert len(links) == 24 and resolved.count("日本") == 7 and vocab.title(3) == "日本"  # the most linked first
    # [[日共]] and [[ハノーバー]] count for the articles they redirect to; the redirect titles are no entities.
    assert "日本共産党" in vocab and "ハノーファー" in vocab and "日共" not in vocab and "ハノーバー" not in vocab
    assert "タイ王国" in vocab and "タイ" not in vocab  # a piped link's target, not its anchor


def test_corpus_sentences_end_at_japanese_full_stops(data):
    metadata, tokenizer = data["metadata"], data["tokenizer"]
    expected = {
        title: [s for p in paragraphs for s in sentences(p)] for title, paragraphs in data["dump"]["paragraphs"].items()
    }
    assert metadata["language"] == "ja" and metadata["pages"] == 10 and metadata["skipped"]["redirect_pages"] == 2
    assert metadata["sentences"] + metadata["skipped"]["short_sentences"] == sum(map(len, expected.values())) == 82
    corpus = data["corpus"]
    assert corpus["page_id"] == list(range(1, 11))  # one sequence a page: each fits in 512 subwords
    for row, title in zip(corpus, ARTICLES):
        # Each sentence is tokenised on its own (its first piece begins with "▁"): the row reads as its sentences
        # joined by a space, SentencePiece's NFKC turning full-width brackets and digits half-width.
        joined = " ".join(nfkc(s) for s in expected[title])
        assert tokenizer.decode(row["word_ids"]) == re.sub(" +", " ", joined), title


def test_mentions_decode_to_their_names_and_ids_to_their_titles(data):
    corpus, tokenizer, vocab, metadata = data["corpus"], data["tokenizer"], data["vocab"], data["metadata"]
    assert (
        metadata["entities"] == metadata["links"] == 24
        and metadata["adjusted"]["mention_boundaries_inside_subwords"] == 0
    )
    for row, title in zip(corpus, ARTICLES):
        links = data["dump"]["links"][title]
        names = [
            "".join(tokenizer.convert_ids_to_tokens([row["word_ids"][p] for p in positions])).lstrip("▁")
            for positions in row["entity_position_ids"]
        ]
        assert names == [nfkc(anchor) for anchor, _ in links], title
        assert [vocab.title(i) for i in row["entity_ids"]] == [REDIRECTS.get(t, t) for _, t in links], title


def test_pretraining_steps_and_export_in_luke_japanese_layout(data):
    root = data["root"]
    write_tiny_checkpoint(root / "roberta", "roberta", tokenizer=root / "tokenizer")  # pretraining starts from it
    overrides = {**TINY, "data_loader.batch_size": 4, "data_loader.batches_per_epoch": 2}
    allennlp(
        "train",
        REPO_ROOT / "configs" / "pretraining" / "luke_base_stage1.jsonnet",
        "-s",
        root / "stage1",
        "-o",
        json.dumps(overrides),
        MODEL_NAME=str(root / "roberta"),
        CORPUS=str(root / "corpus"),
    )
    metrics = json.loads((root / "stage1" / "metrics.json").read_text())
    assert metrics["training_loss"] > 0 and {"training_masked_lm_accuracy", "training_masked_entity_accuracy"} <= set(
        metrics
    )
    allennlp("export-luke", root / "stage1" / "model.tar.gz", root / "export")
    export = root / "export"
    assert json.loads((export / "tokenizer_config.json").read_text())["tokenizer_class"] == "MLukeTokenizer"
    entities = json.loads((export / "entity_vocab.json").read_text(encoding="utf-8"))
    assert entities["ja:日本"] == 3 and entities["ja:日本共産党"] == data["vocab"]["日本共産党"]
    assert (entities["[PAD]"], entities["[UNK]"], entities["[MASK]"], entities["[MASK2]"]) == (0, 1, 2, 19)
    # As MODEL_NAME: the "ja:" prefixes read as the language, the titles found by name.
    assert checkpoint_entity_vocab(str(export)).get("北海道", language="ja") == entities["ja:北海道"]
    text = "梅雨は、北海道と小笠原諸島を除く日本で見られる。"
    tokenizer = transformers.MLukeTokenizer.from_pretrained(str(export))
    encoding = tokenizer(text, entities=["ja:北海道", "ja:日本"], entity_spans=[(4, 7), (16, 18)], return_tensors="pt")
    assert encoding["entity_ids"].tolist() == [[entities["ja:北海道"], entities["ja:日本"]]]
    model, info = transformers.LukeForMaskedLM.from_pretrained(str(export), output_loading_info=True)
    assert not info["missing_keys"] and not info["unexpected_keys"]
    with torch.no_grad():
        assert torch.isfinite(model.eval()(**encoding).logits).all()
