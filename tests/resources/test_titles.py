import json

import pytest

from luke_allennlp.resources.titles import Namespaces, is_language_prefix, normalize_title, read_page_titles


@pytest.mark.parametrize(
    "title, expected",
    [
        ("Super_Bowl_50", "Super Bowl 50"),
        ("  new   York#History ", "New York"),
        ("iPod", "IPod"),
        ("Beyonc%C3%A9", "Beyoncé"),
        ("100% (song)", "100% (song)"),
        ("\u200eParis\u00a0Metro", "Paris Metro"),
        ("ßtraße", "ßtraße"),
        ("élan", "Élan"),
        ("C++", "C++"),
        ("#Only a section", ""),
        ("", ""),
    ],
)
def test_normalize_title(title, expected):
    assert normalize_title(title) == expected


def test_namespaces_and_interwiki_prefixes():
    namespaces = Namespaces({"Portail": 100})
    assert namespaces.split("Category:Cats") == (14, None, "Cats")
    assert namespaces.split("category_talk : Cats") == (15, None, " Cats")
    assert namespaces.split("Portail:Chats") == (100, None, "Chats")
    assert namespaces.split("fr:Chat") == (None, "fr", "Chat")
    assert namespaces.split("wikt:cat") == (None, "wikt", "cat")
    assert namespaces.split("Star Wars: Episode IV") == (0, None, "Star Wars: Episode IV")
    assert namespaces.namespace_of("File:x.jpg") == 6
    assert is_language_prefix("zh-yue") and is_language_prefix("simple") and not is_language_prefix("wikt")


def test_case_rules():
    assert normalize_title("iPhone_X", case="case-sensitive") == "iPhone X"
    assert normalize_title("istanbul", language="tr") == "İstanbul" and normalize_title("istanbul") == "Istanbul"
    assert Namespaces(case="case-sensitive").normalize("élan") == "élan"
    assert Namespaces(language="ja").split("画像:x.png")[0] == 6 and Namespaces().split("画像:x.png")[0] == 0


def test_page_titles_from_squad_json_or_one_a_line(tmp_path):
    (tmp_path / "squad.json").write_text(
        json.dumps({"data": [{"title": "China", "paragraphs": []}, {"title": "Atlantis"}]})
    )
    assert read_page_titles(tmp_path / "squad.json") == ["China", "Atlantis"]
    (tmp_path / "titles.txt").write_text("China\n\nAtlantis\n")
    assert read_page_titles(tmp_path / "titles.txt") == ["China", "Atlantis"]
