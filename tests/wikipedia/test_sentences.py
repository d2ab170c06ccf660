import pytest

from luke_allennlp.wikipedia.sentences import RuleSentenceSplitter, SpacySentenceSplitter, sentence_splitter

TEXT = (
    'Dr. Smith joined the U.S. Army in 1950. J. R. R. Tolkien wrote "The Hobbit." It sold well! Did it? '
    "Yes, e.g. in 3 countries. 東京は首都。大阪もある。 (It ends here.) Last one"
)


def test_rule_splitter():
    split = [TEXT[s:e] for s, e in RuleSentenceSplitter()(TEXT)]
    assert split == [
        "Dr. Smith joined the U.S. Army in 1950.", 'J. R. R. Tolkien wrote "The Hobbit."', "It sold well!", "Did it?",
        "Yes, e.g. in 3 countries.", "東京は首都。", "大阪もある。", "(It ends here.)", "Last one",
    ]  # fmt: skip


def test_spacy_splitter_spans_are_stripped_and_it_is_rebuilt():
    splitter = SpacySentenceSplitter(refresh_every=1)
    text = "  One sentence here.  Another one follows.  "
    assert [text[s:e] for s, e in splitter(text)] == ["One sentence here.", "Another one follows."]
    first = splitter._nlp
    splitter("Again.")
    assert splitter._nlp is not first


def test_unknown_splitter():
    with pytest.raises(ValueError, match="rules' or 'spacy'"):
        sentence_splitter("punkt")
