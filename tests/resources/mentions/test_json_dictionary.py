import json

import pytest

from luke_allennlp.resources.mentions.json_dictionary import MentionDictionary


def test_version_1_files_are_read_but_have_no_candidates(tmp_path):
    (tmp_path / "old.json").write_text(
        json.dumps({"version": 1, "pages": {"A": {"a": "A"}}, "link_probability": {"a": 0.5}})
    )
    old = MentionDictionary.from_file(tmp_path / "old.json")
    assert old.names_for_page("A") == {"a": "A"} and old.link_probability("a") == 0.5
    with pytest.raises(ValueError, match=r"old\.json is a version-1 mention dictionary.*rebuild it"):
        old.candidates("a")


@pytest.mark.parametrize(
    "content, message",
    [
        ("{not json", r"bad\.json, line 1: not JSON"),
        (
            '{"version": 3, "pages": {}, "link_probability": {}}',
            r"not a mention dictionary of version 1 or 2 \(version: 3\)",
        ),
        ('{"version": 1, "pages": [], "link_probability": {}}', r"the 'pages' entry is missing or not a dict"),
        ('{"version": 2, "pages": {}, "link_probability": {}}', r"the 'entities' entry is missing or not a dict"),
    ],
)
def test_bad_dictionary_files_are_named(tmp_path, content, message):
    (tmp_path / "bad.json").write_text(content)
    with pytest.raises(ValueError, match=message):
        MentionDictionary.from_file(tmp_path / "bad.json")
