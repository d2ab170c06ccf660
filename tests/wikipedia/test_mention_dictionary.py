import json
from collections import Counter

import pytest

from luke_allennlp.resources.mentions.json_dictionary import MentionDictionary
from luke_allennlp.wikipedia.mention_dictionary import (
    _init_matcher,
    build_mention_dictionary,
    count_unlinked_occurrences,
)
from tests.wikipedia.crafted import write_crafted_dump


@pytest.fixture(scope="module")
def crafted_dump(tmp_path_factory):
    return write_crafted_dump(tmp_path_factory.mktemp("dump") / "crafted.xml.gz")


def test_names_per_page_and_link_probabilities(crafted_dump):
    dictionary = build_mention_dictionary(crafted_dump, min_link_probability=0.5)
    assert dictionary.pages == {
        "Lantern": {"candle": "Candle", "paper lanterns": "Paper lantern", "China": "China", "Lamps": "Lantern"},
        "Candle": {"candle": "Candle", "wick": "Wick", "China": "China", "Rome": "Rome"},
        # "lanterns" is below 0.5; "Rome" names both Rome and Rome (band) on this page
        "China": {"China": "China", "wick": "Wick"},
    }
    # linked / occurring: "candle" also occurs unlinked on Wick; "Rome" is linked 3 times and opens Rome;
    # "lanterns" occurs alone on Lantern and inside the anchor "paper lanterns"
    expected = {"China": 1.0, "candle": 2 / 3, "wick": 2 / 3, "Rome": 3 / 4, "Lamps": 1.0, "paper lanterns": 1.0}
    for name, probability in expected.items():
        assert dictionary.link_probability(name) == pytest.approx(probability, abs=1e-6)
    assert dictionary.link_probability("lanterns") == 0.0  # below the threshold, dropped
    assert dictionary.link_probability("never linked") == 0.0
    stats = dictionary.stats
    assert (stats["pages"], stats["names"], stats["pages_with_names"], stats["page_names"]) == (5, 11, 3, 10)
    assert (
        stats["ambiguous_names_dropped"],
        stats["low_probability_names_dropped"],
        stats["low_probability_page_names_dropped"],
    ) == (1, 1, 1)
    # The infobox's "Ignored" is a name of Lantern too (links_in="page"), to a missing page.
    assert (
        stats["names_to_missing_pages"],
        stats["names_through_redirect_loops"],
        stats["page_names_outside_text"],
    ) == (4, 1, 1)
    # Every link: 18 to articles (17 of the running text, one in the infobox), and the category.
    assert (stats["links"], stats["links_counted"], stats["text_links"]) == (19, 18, 17)
    assert stats["other_links"] == {"category": 1} and stats["links_not_counted"] == {}
    text_only = build_mention_dictionary(crafted_dump, min_link_probability=0.5, links_in="text")
    assert text_only.pages == dictionary.pages
    assert (text_only.stats["links_counted"], text_only.stats["links_not_counted"]) == (17, {"template": 1})
    assert text_only.stats["names_to_missing_pages"] == 3


def test_names_outside_the_running_text(tmp_path):
    """Names a page shows in an infobox or a table are its names too; where the running text links a name, the
    text's target wins; a name never linked in running text has no link probability and is dropped."""
    from luke_allennlp.wikipedia.dump import WikiPage, write_dump

    write_dump(
        tmp_path / "dump.xml",
        [
            WikiPage(
                "Lyon",
                1,
                0,
                "{{Infobox|country=[[France]]|river=[[Rhône (river)|Rhône]]|mayor=[[Grégory Doucet]]}}\n"
                "[[Lyon]] lies on the [[Rhône]]. France is large.\n{|\n| [[Paris]] || [[Rhône]]\n|}",
            ),
            WikiPage("Paris", 2, 0, "[[Paris]] is the capital of [[France]]."),
            WikiPage("France", 3, 0, "France is in Europe."),
            WikiPage("Rhône", 4, 0, "A department."),
            WikiPage("Rhône (river)", 5, 0, "A river."),
            WikiPage("Grégory Doucet", 6, 0, "A mayor."),
        ],
    )
    dictionary = build_mention_dictionary(tmp_path / "dump.xml", min_link_probability=0.0)
    assert dictionary.pages["Lyon"] == {"Lyon": "Lyon", "Rhône": "Rhône", "France": "France", "Paris": "Paris"}
    # Linked once in running text, twice unlinked there (the infobox's link is not counted).
    assert dictionary.link_probability("France") == pytest.approx(1 / 3, abs=1e-6)
    assert dictionary.stats["page_names_never_linked_in_text"] == 1  # "Grégory Doucet"
    assert build_mention_dictionary(tmp_path / "dump.xml", min_link_probability=0.0, links_in="text").pages["Lyon"] == {
        "Lyon": "Lyon",
        "Rhône": "Rhône",
    }


def test_save_load_and_lookup_by_any_title_form(crafted_dump, tmp_path):
    dictionary = build_mention_dictionary(crafted_dump, include_missing_pages=True)
    assert dictionary.pages["Lantern"]["oil"] == "Oil lamp" and "unit of light" not in dictionary.pages["Candle"]
    dictionary.save(tmp_path / "mentions.json")
    data = json.loads((tmp_path / "mentions.json").read_text())
    assert (data["version"], data["min_link_probability"], data["dump"]) == (2, 0.01, str(crafted_dump))
    loaded = MentionDictionary.from_file(tmp_path / "mentions.json")
    assert loaded.names_for_page("china") == loaded.names_for_page(" China_") == dictionary.pages["China"]
    assert loaded.names_for_page("Unknown page") == {}
    assert loaded.link_probability("lanterns") == pytest.approx(1 / 3, abs=1e-6)
    assert loaded.candidates("Rome") == dictionary.candidates("Rome") == [("Rome", 2 / 3), ("Rome (band)", 1 / 3)]


def test_candidates_by_hand_count(crafted_dump):
    """p(entity | name) over every page, through redirects; targets that are no article are not entities."""
    dictionary = build_mention_dictionary(crafted_dump)
    # By hand from tests/wikipedia/crafted.py: China 3 links to China; candle 2 and wick 2; Rome 2 to Rome and 1 to
    # the missing "Rome (band)"; Lamps -> Lamp -> Lantern and lanterns -> Lantern light -> Lamp -> Lantern.
    assert dictionary.entities == {
        "China": [["China", 3]],
        "Lamps": [["Lantern", 1]],
        "Rome": [["Rome", 2]],
        "candle": [["Candle", 2]],
        "lanterns": [["Lantern", 1]],
        "paper lanterns": [["Paper lantern", 1]],
        "wick": [["Wick", 2]],
    }
    assert dictionary.candidates("Rome") == [("Rome", 1.0)] and dictionary.candidates("Latin") == []
    stats = dictionary.stats  # 12 + 4 to missing pages (oil, Nowhere land, Latin, Rome (band)) + 1 loop = 17 links
    assert (
        stats["entity_links"],
        stats["entity_links_to_missing_pages"],
        stats["entity_links_through_redirect_loops"],
    ) == (12, 4, 1)
    with_missing = build_mention_dictionary(crafted_dump, include_missing_pages=True)
    assert with_missing.candidates("Rome") == [("Rome", 2 / 3), ("Rome (band)", 1 / 3)]
    assert with_missing.candidates("oil") == [("Oil lamp", 1.0)] and with_missing.stats["entity_links"] == 16
    # The threshold drops names, and their candidates with them ("lanterns": 1 of 3 occurrences linked).
    assert "lanterns" not in build_mention_dictionary(crafted_dump, min_link_probability=0.5).entities
    # Without case and white space, for uncased tokenizers: "CHINA" is no name, but folds to "China".
    assert dictionary.candidates("CHINA") == [] and dictionary.candidates("CHINA", ignore_case=True) == [("China", 1.0)]
    assert dictionary.candidates("Paper  Lanterns", ignore_case=True) == [("Paper lantern", 1.0)]


def test_page_titles_keep_only_those_pages(crafted_dump):
    dictionary = build_mention_dictionary(crafted_dump, page_titles=["China", "Atlantis"], num_workers=2)
    assert list(dictionary.pages) == ["China"]
    assert dictionary.stats["requested_pages_not_in_dump"] == 1
    assert dictionary.link_probability("candle") == pytest.approx(2 / 3, abs=1e-6)  # still from every page


def test_occurrences_are_counted_at_word_boundaries_case_sensitively():
    _init_matcher({"New York", "York", "AT&T", "C"})
    text = "New York and new york, Yorkshire, York. AT&T (AT&T's) C++ and C"
    counts = count_unlinked_occurrences(text, [(0, 8)])  # the first "New York" is a link
    assert counts == {"York": 2, "AT&T": 2, "C": 2}


def test_the_206_page_dump(shared_data):
    dump = shared_data / "wikipedia" / "enwiki-pages-articles-shortened-206.xml.bz2"
    dictionary = build_mention_dictionary(dump, page_titles=["Aristotle", "Angola"], include_missing_pages=True)
    aristotle = dictionary.names_for_page("Aristotle")
    assert aristotle["Plato"] == "Plato" and aristotle["Alexander the Great"] == "Alexander the Great"
    assert (dictionary.stats["links"], dictionary.stats["text_links"], dictionary.stats["links_counted"]) == (
        32374,
        22605,
        30203,
    )
    assert 0 < dictionary.link_probability("Plato") <= 1


def test_link_probabilities_count_a_japanese_names_occurrences_inside_text_without_spaces(shared_data, tmp_path):
    """On real Japanese Wikipedia text (tests/wikipedia/japanese_dump.py: ten articles' paragraphs, 16 linked names),
    a name's link probability is its links over its occurrences anywhere in the running text, here counted
    independently by a plain substring search (every name is kana or ideographs, so each character boundary is a
    token boundary). Counted at `\\w+` runs, which in Japanese are whole clauses, all 16 came out at 1.0 and
    `min_link_probability` filtered nothing."""
    from tests.wikipedia.japanese_dump import write_japanese_dump

    dump = write_japanese_dump(tmp_path / "jawiki.xml", shared_data / "jglue")
    dictionary = build_mention_dictionary(tmp_path / "jawiki.xml", min_link_probability=0.0, include_missing_pages=True)
    texts = ["\n\n".join(paragraphs) for paragraphs in dump["paragraphs"].values()]
    links = Counter(anchor for pairs in dump["links"].values() for anchor, _ in pairs)
    assert len(links) == 16
    for name, linked in links.items():
        occurrences = sum(text.count(name) for text in texts)  # (no name overlaps itself in this text)
        assert dictionary.link_probability(name) == pytest.approx(linked / occurrences, abs=1e-6), name
    assert dictionary.link_probability("日本") == pytest.approx(7 / 14, abs=1e-6)  # also inside 日本共産党, 日本海
    assert dictionary.link_probability("フランス") == pytest.approx(1 / 4, abs=1e-6)
    filtered = build_mention_dictionary(tmp_path / "jawiki.xml", min_link_probability=0.6, include_missing_pages=True)
    assert sorted(name for name in links if filtered.link_probability(name) > 0) == sorted(
        name for name, linked in links.items() if linked / sum(t.count(name) for t in texts) >= 0.6
    )
    assert sum(filtered.link_probability(name) > 0 for name in links) == 9  # of 16
