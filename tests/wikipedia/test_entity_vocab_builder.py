import pytest

from luke_allennlp.wikipedia.entity_vocab_builder import build_entity_vocab
from tests.wikipedia.crafted import write_crafted_dump


@pytest.fixture(scope="module")
def crafted_dump(tmp_path_factory):
    return write_crafted_dump(tmp_path_factory.mktemp("dump") / "crafted.xml.bz2")


def test_links_are_counted_through_redirects(crafted_dump):
    vocab, summary = build_entity_vocab(crafted_dump)
    assert list(vocab) == ["[PAD]", "[UNK]", "[MASK]", "China", "Candle", "Lantern", "Rome", "Wick", "Paper lantern"]
    assert [vocab.count(i) for i in range(len(vocab))] == [0, 0, 0, 3, 2, 2, 2, 2, 1]
    # Every link: 17 to articles counted, the category, and the infobox's (not counted: not running text).
    assert (summary["links"], summary["links_in"], summary["links_counted"]) == (19, "text", 17)
    assert (
        summary["links_to_articles"],
        summary["links_to_missing_pages"],
        summary["links_through_redirect_loops"],
    ) == (12, 4, 1)
    assert summary["other_links"] == {"category": 1} and summary["links_not_counted"] == {"template": 1}
    assert summary["redirects"]["redirect_loops"] == 2 and summary["redirects"]["chained_redirects"] == 3
    assert summary["pages"]["pages_without_text"] == 1 and summary["pages"]["non_article_pages"] == 1
    # Counting every link the page shows, the infobox's is one more to a missing page.
    _, summary = build_entity_vocab(crafted_dump, links_in="page")
    assert (
        summary["links"],
        summary["links_counted"],
        summary["links_to_missing_pages"],
        summary["links_not_counted"],
    ) == (19, 18, 5, {})
    with pytest.raises(ValueError, match="links_in must be 'text' or 'page', not 'all'"):
        build_entity_vocab(crafted_dump, links_in="all")


def test_vocab_size_min_count_and_missing_pages(crafted_dump):
    vocab, summary = build_entity_vocab(crafted_dump, vocab_size=6)
    assert list(vocab)[3:] == ["China", "Candle", "Lantern"]  # ties broken by title
    assert summary["entities_over_vocab_size"] == 3
    vocab, summary = build_entity_vocab(crafted_dump, min_count=2)
    assert "Paper lantern" not in vocab and summary["entities_below_min_count"] == 1
    vocab, _ = build_entity_vocab(crafted_dump, include_missing_pages=True)
    assert list(vocab)[-5:] == ["Latin", "Nowhere land", "Oil lamp", "Paper lantern", "Rome (band)"]
    assert "Loop one" not in vocab and "Loop two" not in vocab
    with pytest.raises(ValueError, match="vocab_size must exceed"):
        build_entity_vocab(crafted_dump, vocab_size=3)


def test_the_206_page_dump(shared_data):
    # Counts checked by hand with grep on the decompressed dump, less the links inside templates (infoboxes),
    # image captions and references: e.g. "[[Soviet Union" occurs 21 times, 3 of them inside {{...}}.
    dump = shared_data / "wikipedia" / "enwiki-pages-articles-shortened-206.xml.bz2"
    vocab, summary = build_entity_vocab(dump, num_workers=2)
    # Every `[[` of the 106 articles, counted or not: 22,605 of the running text to articles, the rest by kind or place.
    assert (summary["links"], summary["links_counted"]) == (32374, 22605)
    assert summary["links_not_counted"] == {
        "comment": 94,
        "media": 1240,
        "reference": 1180,
        "table": 3361,
        "template": 2002,
    }
    assert (
        summary["links_counted"] + sum(summary["other_links"].values()) + sum(summary["links_not_counted"].values())
        == 32374
    )
    assert [(vocab.title(i), vocab.count(i)) for i in range(3, 7)] == [
        ("Angola", 12),
        ("Aristotle", 12),
        ("Apollo", 7),
        ("Algeria", 4),
    ]
    assert len(vocab) == 3 + summary["linked_titles"] == 50
    wide, _ = build_entity_vocab(dump, vocab_size=10, include_missing_pages=True)
    assert [(wide.title(i), wide.count(i)) for i in range(3, 6)] == [
        ("Soviet Union", 18),
        ("China", 15),
        ("Delphi", 15),
    ]
    # Counting tables too, one table-heavy article's art directors lead (none of them is ever in the corpus).
    page, summary = build_entity_vocab(dump, vocab_size=5, include_missing_pages=True, links_in="page")
    assert [(page.title(i), page.count(i)) for i in range(3, 5)] == [("Cedric Gibbons", 40), ("Edwin B. Willis", 31)]
    assert summary["links_counted"] == 30203 and summary["links_not_counted"] == {"comment": 94}
