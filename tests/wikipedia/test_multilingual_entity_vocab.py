import bz2
import gzip
import json

import pytest

from luke_allennlp.resources.entity_vocab import EntityVocab
from luke_allennlp.wikipedia.entity_vocab_builder import build_entity_vocab
from luke_allennlp.wikipedia.multilingual_entity_vocab import build_multilingual_entity_vocab
from tests.wikipedia.crafted import MULTILINGUAL_ENTITIES, write_multilingual_dumps

SPECIAL = [[("[PAD]", None)], [("[UNK]", None)], [("[MASK]", None)]]


@pytest.fixture(scope="module")
def dumps(tmp_path_factory):
    return write_multilingual_dumps(tmp_path_factory.mktemp("multilingual"))


def entities(vocab):
    return [
        (
            [
                (vocab.title(i, lang), lang)
                for lang in ("en", "de", "ja")
                if vocab.get(vocab.title(i, lang), language=lang) == i
            ],
            vocab.count(i),
        )
        for i in range(3, len(vocab))
    ]


def test_each_dump_is_read_in_its_language_encoding_and_namespaces(dumps):
    (en, de, ja), _ = dumps
    # de: ISO-8859-1, its language from the file name; ja: Shift_JIS, from <dbname>; localised file and category
    # namespaces (Datei, Bild, ファイル, 画像, Kategorie, カテゴリ) are no entities
    expected = {
        en: (
            "en",
            ["Tokyo", "Japan", "Berlin", "Mount Fuji", "Tokyo Tower"],
            [3, 2, 1, 1, 1],
            {"category": 1, "file": 1},
        ),
        de: (
            "de",
            ["Tokio", "Japan", "München", "Berlin", "Fuji (Vulkan)"],
            [3, 2, 2, 1, 1],
            {"category": 1, "file": 2},
        ),
        ja: ("ja", ["東京都", "日本", "富士山"], [3, 2, 1], {"category": 1, "file": 2}),
    }
    for dump, (language, titles, counts, kinds) in expected.items():
        vocab, summary = build_entity_vocab(dump)
        assert vocab.language == language
        assert list(vocab)[3:] == titles and [vocab.count(i) for i in range(3, len(vocab))] == counts
        assert {k: n for k, n in summary["other_links"].items() if k != "interlanguage"} == kinds
        assert summary["links_not_counted"] == {"media": 1} and summary["links_to_missing_pages"] == 0
    assert build_entity_vocab(de, language="xx")[0].language == "xx"


def test_entities_are_merged_across_languages(dumps, tmp_path):
    paths, wikidata = dumps
    vocab, summary = build_multilingual_entity_vocab(paths, wikidata)
    assert entities(vocab) == MULTILINGUAL_ENTITIES
    assert summary["languages"] == ["en", "de", "ja"] and summary["entities_by_languages"] == {"1": 2, "2": 1, "3": 3}
    merge = summary["merge"]
    # Wikidata: Q17, Q1490, Q39231 join 6 pairs (en "Fujisan" through its redirect, Q2000000's de "Tokyo" too);
    # Q2000000 would give Tokio a second English title: a conflict, left out. Q1726's en "Munich" is not linked.
    assert (merge["wikidata_entities"], merge["wikidata_items_in_two_or_more_languages"]) == (7, 5)
    assert (merge["wikidata_links_joined"], merge["wikidata_links_conflict"]) == (6, 1)
    assert (merge["wikidata_titles_through_redirects"], merge["wikidata_titles_not_linked"]) == (2, 1)
    assert merge["conflicts"] == 1 and merge["conflict_examples"] == [[["en", "Tokyo Tower"], ["de", "Tokio"]]]
    # 11 inline links: Berlin joined by them alone, 8 agree with Wikidata, [[fr:Berlin]] is to a language not
    # given, [[ja:東京タワー]] to a title not linked in ja's running text
    assert (merge["inline_links"], merge["inline_links_joined"], merge["inline_links_already"]) == (11, 1, 8)
    assert (merge["inline_links_to_other_languages"], merge["inline_links_not_linked"]) == (1, 1)
    # LUKE's JSONL: special entities once, without a language; one line per id with every language's title
    vocab.save_jsonl(tmp_path / "mluke.jsonl")
    lines = [json.loads(line) for line in (tmp_path / "mluke.jsonl").read_text(encoding="utf-8").splitlines()]
    assert lines[0] == {"id": 0, "entities": [["[PAD]", None]], "count": 0}
    assert lines[3] == {"id": 3, "entities": [["Tokyo", "en"], ["Tokio", "de"], ["東京都", "ja"]], "count": 9}
    loaded = EntityVocab.from_file(tmp_path / "mluke.jsonl")
    assert loaded.language is None and len(loaded) == 9 and (loaded.pad_id, loaded.unk_id, loaded.mask_id) == (0, 1, 2)
    assert loaded.get("Tokio", language="de") == loaded.get("東京都", language="ja") == 3
    mapping = loaded.to_transformers_json()  # mLUKE's entity_vocab.json keys
    assert list(mapping.items())[:6] == [
        ("[PAD]", 0),
        ("[UNK]", 1),
        ("[MASK]", 2),
        ("en:Tokyo", 3),
        ("de:Tokio", 3),
        ("ja:東京都", 3),
    ]
    assert mapping["de:München"] == 7 and mapping["en:Berlin"] == mapping["de:Berlin"] == 6 and len(mapping) == 16


def test_min_languages_min_count_and_vocab_size(dumps):
    paths, wikidata = dumps
    vocab, summary = build_multilingual_entity_vocab(paths, wikidata, min_languages=2)
    assert entities(vocab) == MULTILINGUAL_ENTITIES[:4] and summary["entities_below_min_languages"] == 2
    vocab, _ = build_multilingual_entity_vocab(paths, wikidata, min_languages=3)
    assert entities(vocab) == MULTILINGUAL_ENTITIES[:3]
    vocab, summary = build_multilingual_entity_vocab(paths, wikidata, min_count=3, vocab_size=5)
    assert entities(vocab) == MULTILINGUAL_ENTITIES[:2]
    assert (summary["entities_below_min_count"], summary["entities_over_vocab_size"]) == (3, 1)
    # without Wikidata, the inline links alone: Japan has none; ja's [[en:Fujisan]] reaches Mount Fuji through the
    # English redirect, but nothing links the German article
    vocab, _ = build_multilingual_entity_vocab(paths, min_languages=2)
    fuji = ([("Mount Fuji", "en"), ("富士山", "ja")], 2)
    assert entities(vocab) == [MULTILINGUAL_ENTITIES[0], MULTILINGUAL_ENTITIES[3], fuji]
    vocab, _ = build_multilingual_entity_vocab(paths, wikidata, inline_links=False, min_languages=2)
    assert entities(vocab) == MULTILINGUAL_ENTITIES[:3]  # Berlin only had inline links
    with pytest.raises(ValueError, match="two inputs have the same language"):
        build_multilingual_entity_vocab([paths[0], paths[1]], languages=["en", "en"])
    with pytest.raises(ValueError, match="min_languages must be at least 1"):
        build_multilingual_entity_vocab(paths, min_languages=0)


def test_merging_vocabularies_built_per_language(dumps, tmp_path):
    paths, wikidata = dumps
    files = []
    for path, language in zip(paths, ("en", "de", "ja")):
        vocab, _ = build_entity_vocab(path)
        vocab.save(tmp_path / f"{language}.jsonl")
        files.append(tmp_path / f"{language}.jsonl")
    vocab, summary = build_multilingual_entity_vocab(files, wikidata)
    # A vocabulary has no redirects to follow: Wikidata's en "Fujisan" finds nothing, so Mount Fuji joins only de
    # and ja (nor is Q2000000's de "Tokyo" found: no conflict); a vocabulary has no inline links either, so Berlin
    # stays two entities.
    assert entities(vocab)[:3] == MULTILINGUAL_ENTITIES[:2] + [([("Fuji (Vulkan)", "de"), ("富士山", "ja")], 2)]
    assert (summary["merge"]["wikidata_titles_not_linked"], summary["merge"]["conflicts"]) == (3, 0)
    assert len(vocab) == 3 + 8 and summary["inputs"][1] == {
        "vocabulary": str(files[1]),
        "language": "de",
        "linked_titles": 5,
    }
    with pytest.raises(ValueError, match="which language"):
        EntityVocab(["[PAD]", "[UNK]", "[MASK]", "X"], language="").save(tmp_path / "x.tsv")
        build_multilingual_entity_vocab([tmp_path / "x.tsv", files[0]])


def test_a_malformed_wikidata_line_is_named(dumps, tmp_path):
    paths, _ = dumps
    (tmp_path / "wd.json").write_text(
        '[\n{"type": "item", "id": "Q1", "sitelinks": {"enwiki": {"site": "enwiki"}, "jawiki": {}}},\n]\n'
    )
    with pytest.raises(ValueError, match=r"wd\.json, line 2: not a Wikidata entity with sitelinks \(KeyError"):
        build_multilingual_entity_vocab(paths, tmp_path / "wd.json")
    # a .gz cut short (a download stopped): the items before the cut count, here all but the last (Q2000000)
    _, wikidata = dumps
    data = gzip.compress(bz2.decompress(wikidata.read_bytes()))
    (tmp_path / "cut.json.gz").write_bytes(data[: len(data) - 30])
    vocab, summary = build_multilingual_entity_vocab(paths, tmp_path / "cut.json.gz")
    assert entities(vocab) == MULTILINGUAL_ENTITIES
    assert summary["merge"]["wikidata_errors"] == 1 and summary["merge"]["conflicts"] == 0
