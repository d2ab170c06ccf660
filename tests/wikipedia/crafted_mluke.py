"""
Small German and Japanese dumps written for the tests (our own text, from words the tiny XLM-R tokenizer of
`luke_allennlp.testing.save_xlmr_tokenizer` knows), and a hand-written multilingual entity vocabulary in LUKE's
JSONL (titles of several languages sharing one id, as mLUKE's), for the mLUKE corpus and pretraining tests.

German (localised namespaces `Kategorie`, `Datei`): a link through a redirect (`BRD` -> Deutschland), a link to a
missing page (`Havel`), an inter-language link (`[[ja:ベルリン]]`), a category, a German ordinal (`3. Oktober`) that
must not end a sentence, and `[[Spree]]`, which in the vocabulary is the German river (id 9) while an English
"Spree" is another entity (id 7): only the dump's language finds the right one.
Japanese: sentences ended by `。` without spaces, a redirect (`東京` -> 東京都), a link outside the vocabulary
(`山梨県`), a category (`カテゴリ`).
"""

import json
from pathlib import Path

from luke_allennlp.wikipedia.dump import WikiPage, write_dump

GERMAN_NAMESPACES = {6: "Datei", 14: "Kategorie"}
JAPANESE_NAMESPACES = {6: "ファイル", 14: "カテゴリ"}

BERLIN = """'''Berlin''' ist die Hauptstadt der [[BRD|Bundesrepublik Deutschland]] und zugleich ein eigenes Land. \
Die Stadt liegt an der [[Spree]] und hat etwa 3,7 Millionen Einwohner. Am 3. Oktober 1990 wurde die Stadt \
wieder die Hauptstadt von [[Deutschland]].
[[Kategorie:Stadt]]
[[ja:ベルリン]]"""
DEUTSCHLAND = """Der Rhein fließt durch die Schweiz, Österreich und [[Deutschland]]. Die Hauptstadt ist [[Berlin]], \
die Stadt an der [[Spree]] und der [[Havel]]. Angela Merkel war von 2005 bis 2021 Bundeskanzlerin. Tokio ist die \
Hauptstadt von [[Japan]]."""

GERMAN_PAGES = [
    WikiPage("Berlin", 1, 0, BERLIN),
    WikiPage("Deutschland", 2, 0, DEUTSCHLAND),
    WikiPage("Spree", 3, 0, "Die Spree fließt durch Berlin."),
    WikiPage("BRD", 4, 0, "#WEITERLEITUNG [[Deutschland]]", redirect="Deutschland"),
    WikiPage("Japan", 5, 0, ""),
    WikiPage("Kategorie:Stadt", 6, 14, "Städte."),
]

TOKYO = """'''東京都'''は[[日本]]の首都であり、政府の所在地である。[[富士山]]は[[静岡県]]と[[山梨県]]にまたがる\
活火山である。
[[カテゴリ:日本]]"""
JAPAN = """[[東京]]は日本の首都である。[[夏目漱石]]は明治時代の小説家で、代表作に『吾輩は猫である』がある。"""

JAPANESE_PAGES = [
    WikiPage("東京都", 101, 0, TOKYO),
    WikiPage("日本", 102, 0, JAPAN),
    WikiPage("東京", 103, 0, "#転送 [[東京都]]", redirect="東京都"),
    WikiPage("富士山", 104, 0, "富士山は活火山である。"),
    WikiPage("静岡県", 105, 0, "静岡県は日本の県である。"),
]

# id -> [title, language] pairs (LUKE's JSONL; the special entities have no language).
ENTITIES = {
    0: [["[PAD]", None]],
    1: [["[UNK]", None]],
    2: [["[MASK]", None]],
    3: [["Berlin", "de"], ["Berlin", "en"], ["ベルリン", "ja"]],
    4: [["Deutschland", "de"], ["Germany", "en"], ["ドイツ", "ja"]],
    5: [["Japan", "de"], ["Japan", "en"], ["日本", "ja"]],
    6: [["Tokio", "de"], ["Tokyo", "en"], ["東京都", "ja"]],
    7: [["Spree", "en"]],  # another entity than the German river
    8: [["Fuji", "de"], ["Mount Fuji", "en"], ["富士山", "ja"]],
    9: [["Spree", "de"], ["Spree (river)", "en"]],
    10: [["静岡県", "ja"], ["Shizuoka", "en"]],
    11: [["夏目漱石", "ja"], ["Natsume Sōseki", "de"], ["Natsume Sōseki", "en"]],
}


def write_multilingual_vocab(path: Path) -> Path:
    """The vocabulary above in LUKE's JSONL (counts: 10 - id)."""
    lines = [
        json.dumps({"id": i, "entities": pairs, "count": 0 if i < 3 else 10 - i}, ensure_ascii=False)
        for i, pairs in ENTITIES.items()
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def write_german_dump(path: Path) -> Path:
    write_dump(path, GERMAN_PAGES, GERMAN_NAMESPACES)
    return path


def write_japanese_dump(path: Path) -> Path:
    write_dump(path, JAPANESE_PAGES, JAPANESE_NAMESPACES)
    return path
