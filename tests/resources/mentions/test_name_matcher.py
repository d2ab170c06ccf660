from collections import Counter

from luke_allennlp.resources.mentions.name_matcher import NameMatcher


def test_name_matcher_longest_match_word_boundaries_no_overlap():
    matcher = NameMatcher({"New York": 1, "New York City": 2, "York": 3, "York City": 4, "U.S.": 5, "Levi's": None})
    text = "New York City and new york, Yorkshire, York. The U.S. team at Levi's; New York City's mayor"
    found = [(text[s:e], name) for s, e, name in matcher.find(text)]
    # Longest at "New" (not "New York"); lower case does not match; "York" not inside "Yorkshire"; "U.S." ends with
    # a non-word character; "York City" is inside the first match, so not a match of its own.
    assert found == [
        ("New York City", "New York City"),
        ("York", "York"),
        ("U.S.", "U.S."),
        ("Levi's", "Levi's"),
        ("New York City", "New York City"),
    ]
    assert [name for _, _, name in NameMatcher({"New York": 1, "York City": 2}).find("New York City")] == ["New York"]
    assert NameMatcher({"York": 1}).find("NewYork York_ x") == []


def test_matching_and_counting_agree_on_what_an_occurrence_is():
    """The mention dictionary counts every occurrence (link probability), the matcher takes the longest without
    overlaps; both see names at the same token boundaries."""
    from luke_allennlp.wikipedia.mention_dictionary import _init_matcher, count_unlinked_occurrences

    names = {"New York", "New York City", "York", "York City", "U.S.", "AT&T", "C", "Levi's", "Foo ", " Bar"}
    text = (
        "New York City and new york, Yorkshire, York. The U.S.-based AT&T (AT&T's) C++ and C at Levi's, NewYork "
        "York_ Foo  Bar"
    )
    _init_matcher(names)
    counted = count_unlinked_occurrences(text, [])
    matcher = NameMatcher(names)
    occurrences = matcher.occurrences(text)
    assert sorted(Counter(name for _, _, name in occurrences).items()) == sorted(counted.items())
    assert counted == {
        "New York": 1,
        "New York City": 1,
        "York": 2,
        "York City": 1,
        "U.S.": 1,
        "AT&T": 2,
        "C": 2,
        "Levi's": 1,
    }
    # Every match is an occurrence, and every occurrence is inside a match (the longest one at its token).
    found = matcher.find(text)
    assert set(found) <= set(occurrences)
    assert all(any(s <= start and end <= e for s, e, _ in found) for start, end, _ in occurrences)
    # Names with white space at an end occur nowhere (a token never starts or ends with white space).
    assert not {"Foo ", " Bar"} & {name for _, _, name in found}


def test_cjk_characters_find_names_inside_text_without_spaces():
    from luke_allennlp.resources.mentions.name_matcher import NameMatcher

    names = {"男性": 1, "ジャンボジェット": 2, "New York": 3, "York": 4}
    text = "二人の男性がジャンボジェット機を見ています。New York, Yorkshire"
    assert NameMatcher(names).find(text) == [(22, 30, "New York")]  # one token before "。": no Japanese name
    assert NameMatcher(names, cjk_characters=True).find(text) == [
        (3, 5, "男性"),
        (6, 14, "ジャンボジェット"),
        (22, 30, "New York"),
    ]


def test_counting_sees_japanese_names_where_the_japanese_readers_match_them():
    """Link probabilities count a name's occurrences where the readers of text without spaces (`cjk_characters`)
    find it, every occurrence overlaps included; in text without kana or ideographs, where the English readers do."""
    from luke_allennlp.wikipedia.mention_dictionary import _init_matcher, count_unlinked_occurrences

    names = {"日本", "日本共産党", "東京", "York", "Tokyo"}
    text = "日本共産党は東京都の日本の政党。東京で、New York と Tokyo東京; Yorkshire"
    _init_matcher(names)
    counted = count_unlinked_occurrences(text, [(0, 5)])  # the first 日本共産党 is a link
    occurrences = NameMatcher(names, cjk_characters=True).occurrences(text)
    assert counted == Counter(name for start, end, name in occurrences if (start, end) != (0, 5))
    assert counted == {"日本": 2, "東京": 3, "York": 1, "Tokyo": 1}  # "日本" inside the linked 日本共産党 counts


def test_names_with_combining_marks_match_whole_words():
    """A word keeps its combining marks: a name is found at word boundaries in decomposed Latin, Devanagari, Thai,
    Arabic and Hebrew, never at a mark inside a word ("Mu" of decomposed "München", "ह" of "हिन्दी")."""
    import unicodedata

    from luke_allennlp.resources.mentions.name_matcher import TOKEN

    munich = unicodedata.normalize("NFD", "München")
    cases = [
        (f"Er flog nach {munich}.", munich, "Mu"),
        ("वह हिन्दी बोलती है", "हिन्दी", "ह"),
        ("เขา กิน ข้าว ที่ บ้าน", "ข้าว", "ข"),
        ("تعلمت العَرَبِيَّة هنا", "العَرَبِيَّة", "الع"),
        ("אני מדבר עִבְרִית היום", "עִבְרִית", "ע"),
    ]
    for text, name, prefix in cases:
        assert name in TOKEN.findall(text) and prefix not in TOKEN.findall(text)
        for cjk_characters in (False, True):
            matcher = NameMatcher({name: 1, prefix: 2}, cjk_characters=cjk_characters)
            assert [text[s:e] for s, e, _ in matcher.find(text)] == [name]
            assert [found for _, _, found in matcher.occurrences(text)] == [name]
