"""
The SQuAD reader's entity inputs in other languages (mLUKE-E): candidates of the passage's own language from a real
Japanese dump's mention dictionary, through a multilingual entity vocabulary built by the mLUKE vocabulary builder;
and English candidates translated into German through the vocabulary's inter-language links, on XQuAD's German file
as distributed.
"""

import json

import pytest

from data_readers.luke_squad import LukeSquadReader
from luke_allennlp.data.crosslingual_mentions import language_of_file
from luke_allennlp.resources.entity_vocab import EntityVocab
from luke_allennlp.testing import write_tiny_checkpoint
from tests.conftest import SUPER_BOWL_50_LINKS
from tests.data_readers.test_luke_squad import entities
from tests.wikipedia.japanese_dump import ARTICLES, jsquad_paragraphs, write_japanese_dump


@pytest.mark.parametrize(
    "name, language",
    [
        ("xquad.de.json", "de"),
        ("/data/xquad/xquad.zh.json", "zh"),
        ("dev-context-de-question-en.json", "de"),
        ("test-context-zh-question-ar.json", "zh"),
        ("dev-v1.1.json", None),
        ("xquad.json", None),
    ],
)
def test_the_language_of_xquad_and_mlqa_file_names(name, language):
    assert language_of_file(name) == language


# Japanese titles of the dump's link targets -> English titles: the sitelinks of a Wikidata dump for the builder.
SITELINKS = {
    "日本": "Japan",
    "北海道": "Hokkaido",
    "台湾": "Taiwan",
    "中国": "China",
    "オーストリア": "Austria",
    "フランス": "France",
    "ドイツ": "Germany",
    "スペイン": "Spain",
    "日本共産党": "Japanese Communist Party",
    "ハノーファー": "Hanover",
    "オランダ": "Netherlands",
    "ポルトガル": "Portugal",
}


@pytest.fixture(scope="module")
def japanese(tmp_path_factory, shared_data, tiny_luke_japanese_dir):
    """A Japanese dump of real JSQuAD text, its mention dictionary (SQLite and JSON), a multilingual (ja, en) entity
    vocabulary built from the dump, an English vocabulary and Wikidata sitelinks, a tiny mLUKE with it, and the
    JSQuAD questions of the dump's articles in a file named as MLQA's."""
    from luke_allennlp.resources.mentions.json_dictionary import MentionDictionary
    from luke_allennlp.wikipedia.mention_dictionary import build_mention_store
    from luke_allennlp.wikipedia.multilingual_entity_vocab import build_multilingual_entity_vocab

    root = tmp_path_factory.mktemp("japanese-xling")
    write_japanese_dump(root / "jawiki.xml", shared_data / "jglue")
    build_mention_store(root / "jawiki.xml", root / "jawiki.sqlite", include_missing_pages=True)
    MentionDictionary.from_store(MentionDictionary.from_file(root / "jawiki.sqlite")).save(root / "jawiki.json")
    english = ["[PAD]\t0", "[UNK]\t0", "[MASK]\t0"] + [f"{title}\t5" for title in SITELINKS.values()]
    (root / "enwiki-vocab.tsv").write_text("\n".join(english) + "\n")
    items = [
        json.dumps({"id": f"Q{i}", "sitelinks": {"jawiki": {"title": ja}, "enwiki": {"title": en}}})
        for i, (ja, en) in enumerate(SITELINKS.items(), 1)
    ]
    (root / "wikidata.json").write_text("[\n" + ",\n".join(items) + "\n]\n")
    vocab, summary = build_multilingual_entity_vocab(
        [root / "jawiki.xml", root / "enwiki-vocab.tsv"],
        wikidata=root / "wikidata.json",
        languages=["ja", "en"],
        include_missing_pages=True,
    )
    vocab.save_jsonl(root / "vocab.jsonl")
    model = write_tiny_checkpoint(
        root / "mluke", "mluke", tokenizer=tiny_luke_japanese_dir, entity_vocab=root / "vocab.jsonl"
    )
    squad = json.loads((shared_data / "jglue" / "jsquad-v1.3" / "valid-v1.3.json").read_text(encoding="utf-8"))
    articles = [article for article in squad["data"] if article["title"] in ARTICLES]
    (root / "test-context-ja-question-ja.json").write_text(json.dumps({"version": "v1.3", "data": articles}))
    return {
        "root": root,
        "model": model,
        "summary": summary,
        "data": root / "test-context-ja-question-ja.json",
        "paragraphs": jsquad_paragraphs(shared_data / "jglue"),
    }


def test_japanese_passages_get_the_japanese_dumps_candidates_as_multilingual_entities(japanese):
    root = japanese["root"]
    merge = japanese["summary"]["merge"]
    assert merge["wikidata_links_joined"] >= 8 and merge["conflicts"] == 0
    found = {}
    for dictionary in ("jawiki.sqlite", "jawiki.json"):
        reader = LukeSquadReader(
            str(japanese["model"]), max_seq_length=256, mention_dictionary={"ja": str(root / dictionary)}
        )
        instances = list(reader.read(str(japanese["data"])))  # the language from the file name
        stats = reader.stats
        assert stats["questions"] == len(instances) > 50 and stats["pages_not_in_dictionary"] == 0
        assert stats["contexts"] == stats["contexts_with_candidates"] > 5 and stats["contexts_without_candidates"] == 0
        vocab = reader.entity_vocab
        found[dictionary] = [
            (text, vocab.title(i, language="ja"), vocab.title(i, language="en"))
            for instance in instances
            for text, i in _mentions(instance, reader)
        ]
    assert found["jawiki.sqlite"] == found["jawiki.json"]
    mentions = found["jawiki.sqlite"]
    # Names linked on the pages, found in their passages without spaces, each the entity of its Japanese title,
    # which the vocabulary merged with its English article; a redirect's name (日共) the entity it leads to.
    assert ("北海道", "北海道", "Hokkaido") in mentions and ("ドイツ", "ドイツ", "Germany") in mentions
    assert all(ja in SITELINKS and en == SITELINKS[ja] for _, ja, en in mentions if ja != en)
    assert {text for text, _, _ in mentions} >= {"日本", "北海道", "ドイツ"}


def _mentions(instance, reader):
    """(subword text, entity id) of the first window's entities."""
    mask = instance["entity_attention_mask"].tensor[0]
    ids = instance["entity_ids"].tensor[0][mask].tolist()
    starts, ends = instance["entity_start_positions"].tensor[0][mask], instance["entity_end_positions"].tensor[0][mask]
    words = instance["word_ids"].tensor[0]
    return [(reader.tokenizer.decode(words[s : e + 1]).replace(" ", ""), i) for s, e, i in zip(starts, ends, ids)]


@pytest.fixture(scope="module")
def tiny_mluke_xquad_dir(tmp_path_factory, xlmr_tokenizer_dir):
    """A tiny mLUKE whose vocabulary holds the targets of SUPER_BOWL_50_LINKS as English titles; those with a
    German article (most under the same title, "California" as "Kalifornien") also as German titles of one id."""
    directory = tmp_path_factory.mktemp("tiny-mluke-xquad")
    german = {
        "Denver Broncos": "Denver Broncos",
        "Carolina Panthers": "Carolina Panthers",
        "Super Bowl": "Super Bowl",
        "National Football League": "National Football League",
        "California": "Kalifornien",
        "New England Patriots": "New England Patriots",
    }
    lines = [{"id": i, "entities": [[name, None]], "count": 0} for i, name in enumerate(EntityVocab.SPECIAL_TOKENS)]
    for i, title in enumerate(sorted(set(SUPER_BOWL_50_LINKS.values())), start=3):
        pairs = [[title, "en"]] + ([[german[title], "de"]] if title in german else [])
        lines.append({"id": i, "entities": pairs, "count": 1})
    (directory / "entity_vocab.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    return write_tiny_checkpoint(
        directory / "model", "mluke", tokenizer=xlmr_tokenizer_dir, entity_vocab=directory / "entity_vocab.jsonl"
    )


def test_english_candidates_translated_into_german_on_xquad(
    tiny_mluke_xquad_dir, squad_mention_dictionary, shared_data, caplog
):
    """XQuAD's German file as distributed (its titles English, as SQuAD's): the passages of "Super_Bowl_50" get the
    English page's candidates that have a German article, found by their German titles and by the English names;
    the other articles' pages are in no dictionary (counted)."""
    reader = LukeSquadReader(
        str(tiny_mluke_xquad_dir),
        mention_dictionary={"en": str(squad_mention_dictionary)},
        translate_candidates_from="en",
    )
    vocab = reader.entity_vocab
    with caplog.at_level("INFO"):
        instances = list(reader.read(str(shared_data / "xquad" / "xquad.de.json")))
    stats = reader.stats
    assert stats["questions"] == len(instances) == 177 and stats["contexts"] == 30
    assert stats["contexts_with_candidates"] == stats["contexts_with_translated_candidates"] == 5
    assert stats["contexts_without_candidates"] == 25
    assert "30 contexts, 5 with entity candidates (5 translated), 25 without" in caplog.text
    super_bowl = [i for i in instances if i["metadata"].metadata["title"] == "Super_Bowl_50"]
    found = {
        (text, vocab.title(i, language="de")) for instance in super_bowl for text, i in _mentions(instance, reader)
    }
    assert found >= {
        ("Broncos", "Denver Broncos"),
        ("Panthers", "Carolina Panthers"),
        ("SuperBowl", "Super Bowl"),
        ("NFL", "National Football League"),
        ("NewEnglandPatriots", "New England Patriots"),
    }
    # Entities without a German article are not translated: "AFC" (in "AFC-Championship-Spiel") finds nothing.
    assert all(vocab.get(title, language="de") is not None for _, title in found)
    assert not any(text == "AFC" for text, _ in found)

    # The English file with the same reader: the English page's own candidates.
    english = list(reader.read(str(shared_data / "xquad" / "xquad.en.json")))
    assert reader.stats["contexts_with_candidates"] == 5 and reader.stats["contexts_with_translated_candidates"] == 0
    first = entities(english[0], 0, reader, vocab)
    assert ("AFC", "American Football Conference") in first or ("Panthers", "Carolina Panthers") in first


def test_per_language_dictionaries_need_a_language(tiny_mluke_xquad_dir, squad_mention_dictionary, squad_slice):
    reader = LukeSquadReader(str(tiny_mluke_xquad_dir), mention_dictionary={"en": str(squad_mention_dictionary)})
    with pytest.raises(ValueError, match="slice.json: which language are its passages in"):
        list(reader.read(str(squad_slice)))
    reader = LukeSquadReader(
        str(tiny_mluke_xquad_dir), mention_dictionary={"en": str(squad_mention_dictionary)}, language="en"
    )
    assert len(list(reader.read(str(squad_slice)))) == 55 and reader.stats["contexts_with_candidates"] == 2
    with pytest.raises(ValueError, match="translate_from='de': no mention dictionary of that language"):
        LukeSquadReader(
            str(tiny_mluke_xquad_dir),
            mention_dictionary={"en": str(squad_mention_dictionary)},
            translate_candidates_from="de",
        )


def test_a_passage_in_a_language_given_to_text_to_instance(tiny_mluke_xquad_dir, squad_mention_dictionary):
    """As the predictor passes an input's "language": a German passage gets the German titles of the English page's
    targets ("Kalifornien" for California), the same text without a language the English page's names only."""
    reader = LukeSquadReader(
        str(tiny_mluke_xquad_dir),
        mention_dictionary={"en": str(squad_mention_dictionary)},
        translate_candidates_from="en",
    )
    vocab = reader.entity_vocab
    german = reader.text_to_instance(
        "Wer gewann?", "Die Broncos gewannen in Kalifornien.", title="Super_Bowl_50", language="de"
    )
    assert [(text, vocab.title(i, language="en")) for text, i in _mentions(german, reader)] == [
        ("Broncos", "Denver Broncos"),
        ("Kalifornien", "California"),
    ]
    english = reader.text_to_instance(
        "Wer gewann?", "Die Broncos gewannen in Kalifornien.", title="Super_Bowl_50", language="en"
    )
    assert [text for text, _ in _mentions(english, reader)] == ["Broncos"]
    with pytest.raises(ValueError, match="q7: which language is the passage in"):
        reader.text_to_instance("Wer gewann?", "Die Broncos gewannen.", title="Super_Bowl_50", question_id="q7")
