from luke_allennlp.wikipedia.name_matcher import NameMatcher


def test_name_matcher_longest_match_word_boundaries_no_overlap():
    matcher = NameMatcher({"New York": 1, "New York City": 2, "York": 3, "York City": 4, "U.S.": 5, "Levi's": None})
    text = "New York City and new york, Yorkshire, York. The U.S. team at Levi's; New York City's mayor"
    found = [(text[s:e], name) for s, e, name in matcher.find(text)]
    # Longest at "New" (not "New York"); lower case does not match; "York" not inside "Yorkshire"; "U.S." ends with
    # a non-word character; "York City" is inside the first match, so not a match of its own.
    assert found == [("New York City", "New York City"), ("York", "York"), ("U.S.", "U.S."), ("Levi's", "Levi's"),
                     ("New York City", "New York City")]  # fmt: skip
    assert [name for _, _, name in NameMatcher({"New York": 1, "York City": 2}).find("New York City")] == ["New York"]
    assert NameMatcher({"York": 1}).find("NewYork York_ x") == []
