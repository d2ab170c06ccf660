"""The corpus builder over German and Japanese dumps with an XLM-R-style sentencepiece tokenizer and a multilingual
entity vocabulary (mLUKE): the dump's language selects its titles, sentences end at `。`, mentions cover the `▁`
piece of their first word."""

import json

import datasets
import pytest

from luke_allennlp.resources.tokenization import load_fast_tokenizer
from luke_allennlp.testing import save_xlmr_tokenizer
from luke_allennlp.wikipedia.corpus import build_pretraining_corpus
from luke_allennlp.wikipedia.corpus_rows import CorpusOptions
from tests.wikipedia.crafted_mluke import write_german_dump, write_japanese_dump, write_multilingual_vocab


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    root = tmp_path_factory.mktemp("mluke-corpus-inputs")
    save_xlmr_tokenizer(root / "xlmr")
    return {
        "de": write_german_dump(root / "de.xml"),
        "ja": write_japanese_dump(root / "ja.xml"),
        "tokenizer": str(root / "xlmr"),
        "vocab": write_multilingual_vocab(root / "vocab.jsonl"),
    }


def build(inputs, out, dump, language_override=None, **options):
    metadata = build_pretraining_corpus(
        inputs[dump],
        inputs["tokenizer"],
        inputs["vocab"],
        out,
        CorpusOptions(language=language_override or dump, **options),
    )
    return datasets.load_from_disk(str(out)), metadata


def pieces(row, tokenizer):
    """Each entity's subwords."""
    return [
        tokenizer.convert_ids_to_tokens([row["word_ids"][p] for p in positions])
        for positions in row["entity_position_ids"]
    ]


def test_german_dump_finds_the_german_titles(inputs, tmp_path):
    corpus, metadata = build(inputs, tmp_path / "de", "de")
    tokenizer = load_fast_tokenizer(inputs["tokenizer"])
    assert corpus["page_id"] == [1, 2]
    assert [tokenizer.decode(row) for row in corpus["word_ids"]] == [
        "Berlin ist die Hauptstadt der Bundesrepublik Deutschland und zugleich ein eigenes Land. Die Stadt liegt an "
        "der Spree und hat etwa 3,7 Millionen Einwohner. Am 3. Oktober 1990 wurde die Stadt wieder die Hauptstadt von "
        "Deutschland.",
        "Der Rhein fließt durch die Schweiz, Österreich und Deutschland. Die Hauptstadt ist Berlin, die Stadt an der "
        "Spree und der Havel. Angela Merkel war von 2005 bis 2021 Bundeskanzlerin. Tokio ist die Hauptstadt von Japan.",
    ]
    # BRD -> Deutschland (4) through the redirect; [[Spree]] is the German river (9), not the English "Spree" (7).
    assert corpus["entity_ids"] == [[4, 9, 4], [4, 3, 9, 5]]
    assert pieces(corpus[0], tokenizer) == [
        ["▁B", "un", "de", "s", "re", "p", "ub", "li", "k", "▁De", "ut", "s", "ch", "land"],
        ["▁S", "p", "re", "e"],
        ["▁De", "ut", "s", "ch", "land"],
    ]
    assert corpus[1]["entity_position_ids"][3] == [116, 117, 118, 119, 120]  # the last five subwords but "."
    assert pieces(corpus[1], tokenizer)[3] == ["▁", "J", "a", "p", "an"]
    assert metadata["language"] == "de"
    assert (metadata["sentences"], metadata["entities"], metadata["links"]) == (8, 7, 10)
    skipped = metadata["skipped"]
    # Havel is missing; Kategorie:Stadt and [[ja:ベルリン]] are not entities; the Spree page links nothing.
    assert skipped["links_to_missing_pages"] == 1 and skipped["non_entity_links"] == 2
    assert skipped["sequences_without_entities"] == 1
    assert metadata["markup_links"] == {"category": 1, "interlanguage": 1}
    assert metadata["adjusted"]["mention_boundaries_inside_subwords"] == 0


def test_japanese_dump_splits_at_full_stops_and_keeps_the_word_start_piece(inputs, tmp_path):
    corpus, metadata = build(inputs, tmp_path / "ja", "ja")
    tokenizer = load_fast_tokenizer(inputs["tokenizer"])
    assert corpus["page_id"] == [101, 102]
    # One sequence a page, of two sentences (each tokenised on its own, so each begins with a word start).
    assert [tokenizer.decode(row) for row in corpus["word_ids"]] == [
        "東京都は日本の首都であり、政府の所在地である。 富士山は静岡県と山梨県にまたがる活火山である。",
        "東京は日本の首都である。 夏目漱石は明治時代の小説家で、代表作に『吾輩は猫である』がある。",
    ]
    # 東京 -> 東京都 (6) through the redirect; 山梨県 has no page; 日本 is the id of Japan in every language.
    assert corpus["entity_ids"] == [[5, 8, 10], [6, 11]]
    # A mention at a word start takes the "▁" piece before its characters; one inside a word (日本 after は) does not.
    assert pieces(corpus[0], tokenizer) == [["日", "本"], ["▁", "富", "士", "山"], ["静", "岡", "県"]]
    assert pieces(corpus[1], tokenizer) == [["▁", "東", "京"], ["▁", "夏", "目", "漱", "石"]]
    assert corpus[1]["entity_position_ids"][0] == [0, 1, 2]
    assert metadata["sentences"] == 6 and metadata["skipped"]["links_to_missing_pages"] == 1
    assert metadata["markup_links"] == {"category": 1}
    # transformers 5 saves tokenizer.json alone: the sentencepiece model is copied for export-luke (transformers 4).
    assert (tmp_path / "ja" / "tokenizer" / "sentencepiece.bpe.model").is_file()


def test_multilingual_vocabulary_needs_the_dumps_language(inputs, tmp_path):
    from luke_allennlp.resources.entity_vocab import EntityVocab
    from luke_allennlp.wikipedia.corpus import _check_language

    with pytest.raises(
        ValueError, match=r"no titles in the dump's language 'fr', only in de, en, ja: pass .* --language"
    ):
        build(inputs, tmp_path / "fr", "de", language_override="fr")
    assert not (tmp_path / "fr").exists()  # nothing half-built is left
    vocab = EntityVocab.from_file(inputs["vocab"])
    with pytest.raises(ValueError, match=r"multilingual entity vocabulary \(de, en, ja\) and the dump does not say"):
        _check_language(vocab, inputs["vocab"], None)


def test_a_monolingual_vocabulary_is_looked_up_by_title(inputs, tmp_path):
    """A vocabulary of one language (e.g. the TSV of build-entity-vocab over one dump) is read by title alone."""
    (tmp_path / "vocab.tsv").write_text("[PAD]\t0\n[UNK]\t0\n[MASK]\t0\nSpree\t2\nBerlin\t1\n", encoding="utf-8")
    metadata = build_pretraining_corpus(
        inputs["de"], inputs["tokenizer"], tmp_path / "vocab.tsv", tmp_path / "c", CorpusOptions(language="de")
    )
    corpus = datasets.load_from_disk(str(tmp_path / "c"))
    assert corpus["entity_ids"] == [[3], [4, 3]] and metadata["language"] == "de"
    assert json.loads((tmp_path / "c" / "metadata.json").read_text())["skipped"]["links_outside_vocabulary"] == 4


def test_built_multilingual_vocabulary_gives_one_id_across_languages(inputs, tmp_path):
    """build-entity-vocab's merge feeding the corpus builder: the German [[Japan]] and the Japanese [[日本]] link
    one entity (merged by a Wikidata item), [[Deutschland]] and [[東京]] (→ 東京都) entities of one language each."""
    import bz2

    from luke_allennlp.wikipedia.multilingual_entity_vocab import build_multilingual_entity_vocab

    wikidata = tmp_path / "wikidata.json.bz2"
    items = [
        {
            "id": "Q17",
            "sitelinks": {
                "dewiki": {"site": "dewiki", "title": "Japan"},
                "jawiki": {"site": "jawiki", "title": "日本"},
            },
        }
    ]
    wikidata.write_bytes(bz2.compress(("[\n" + ",\n".join(json.dumps(i) for i in items) + "\n]\n").encode()))
    vocab, summary = build_multilingual_entity_vocab(
        [inputs["de"], inputs["ja"]], wikidata=wikidata, languages=["de", "ja"], include_missing_pages=True
    )
    vocab.save(tmp_path / "vocab.jsonl")
    japan = vocab.get("Japan", language="de")
    assert japan is not None and japan == vocab.get("日本", language="ja")
    assert vocab.get("Deutschland", language="de") not in (None, japan)
    tokyo = vocab.get("東京都", language="ja")
    assert tokyo is not None and vocab.get("東京", language="ja") is None  # a redirect, followed
    built = {**inputs, "vocab": tmp_path / "vocab.jsonl"}
    german, _ = build(built, tmp_path / "de", "de")
    japanese, _ = build(built, tmp_path / "ja", "ja")
    german_ids = [i for row in german["entity_ids"] for i in row]
    japanese_ids = [i for row in japanese["entity_ids"] for i in row]
    assert japan in german_ids and japan in japanese_ids
    assert tokyo in japanese_ids and tokyo not in german_ids
    assert vocab.get("Deutschland", language="de") in german_ids


def test_a_tsv_vocabulary_takes_the_dumps_language(inputs, tmp_path, caplog):
    """A TSV (no languages) with a Japanese dump is Japanese in the corpus's entity_vocab.jsonl (was recorded as
    English, the language a language-prefixed export writes: "en:東京都"); a JSONL vocabulary keeps its own languages (warned when they are not the dump's)."""
    from luke_allennlp.resources.entity_vocab import EntityVocab

    (tmp_path / "vocab.tsv").write_text("[PAD]\t0\n[UNK]\t0\n[MASK]\t0\n東京都\t2\n日本\t1\n", encoding="utf-8")
    build_pretraining_corpus(
        inputs["ja"], inputs["tokenizer"], tmp_path / "vocab.tsv", tmp_path / "c", CorpusOptions(language="ja")
    )
    saved = EntityVocab.from_file(tmp_path / "c" / "entity_vocab.jsonl")
    assert saved.language == "ja" and saved.get("東京都", language="ja") == 3
    EntityVocab.from_file(tmp_path / "vocab.tsv").save_jsonl(tmp_path / "english.jsonl")
    with caplog.at_level("WARNING"):
        build_pretraining_corpus(
            inputs["ja"], inputs["tokenizer"], tmp_path / "english.jsonl", tmp_path / "e", CorpusOptions(language="ja")
        )
    assert "titles are of language 'en', the dump's is 'ja'" in caplog.text
    assert EntityVocab.from_file(tmp_path / "e" / "entity_vocab.jsonl").language == "en"
