"""
A small dump written for the tests (our own text), with every case the dump processing must handle: links
through redirects (one chained), links to missing pages, a redirect loop, a page without text, a category page,
links inside templates and references (not counted), a name with two targets on one page.

Links, by page (17 counted; the one in the infobox is not):
- Lantern: candle -> Candle, oil -> Oil lamp (missing), paper lanterns -> Paper lantern, China -> China,
  Lamps -> Lamp -> Lantern, Nowhere land (missing)
- Candle: candle -> Candle, wick -> Wick, China, Rome, Latin (missing), unit of light -> Loop one (a loop)
- China: China, lanterns -> Lantern light -> Lamp -> Lantern, Rome, wick -> Wick, Rome -> Rome (band) (missing)
Article counts: China 3, Candle 2, Lantern 2, Rome 2, Wick 2, Paper lantern 1; 4 links to missing pages, 1 to a loop.
"""

import bz2
import json
from pathlib import Path
from typing import List, Tuple

from luke_allennlp.wikipedia.dump import WikiPage, write_dump

LANTERN = """A '''lantern''' is a portable lighting device with a [[candle]] inside.<ref>{{cite book|title=Lights}}</ref> \
Some lanterns burn [[Oil lamp|oil]] instead of wax. The [[Paper lantern|paper lanterns]] of [[China]] are hung at \
festivals.
{{Infobox light|origin=[[Ignored]]}}
== See also ==
* [[Lamp]]s
* [[Nowhere land]]
[[Category:Lights]]"""
CANDLE = """A [[candle]] is a block of wax around a [[wick]]. Candles were made in [[China]] and in ancient \
[[Rome]] long ago. The word comes from [[Latin]]. It may also mean a [[Loop one|unit of light]]."""
CHINA = """[[China]] is a large country in East Asia. Paper [[Lantern light|lanterns]] are common there. Trade \
reached [[Rome]] and the [[wick]] makers of the west. A band called [[Rome (band)|Rome]] played there."""

PAGES = [
    WikiPage("Lantern", 10, 0, LANTERN),
    WikiPage("Candle", 20, 0, CANDLE),
    WikiPage("China", 30, 0, CHINA),
    WikiPage("Wick", 40, 0, "A wick draws melted wax up to the flame of a candle by capillary action."),
    WikiPage("Rome", 50, 0, "Rome is the capital of Italy."),
    WikiPage("Paper lantern", 60, 0, ""),
    WikiPage("Lamp", 70, 0, "#REDIRECT [[Lantern]]", redirect="Lantern"),
    WikiPage("Lantern light", 80, 0, "#REDIRECT [[Lamp]]", redirect="Lamp"),
    WikiPage("Loop one", 90, 0, "#REDIRECT [[Loop two]]", redirect="Loop two"),
    WikiPage("Loop two", 91, 0, "#REDIRECT [[Loop one]]", redirect="Loop one"),
    WikiPage("Category:Lights", 100, 14, "Pages about lights."),
]


def write_crafted_dump(path: Path) -> Path:
    write_dump(path, PAGES)
    return path


# --- three small Wikipedias (English, German, Japanese) and a Wikidata dump, for the multilingual vocabulary ------
#
# Running-text links after redirects (file captions, categories, inter-language links not counted):
# - en (dbname enwiki, UTF-8): Tokyo 3 (one through "Tokyo Metropolis"), Japan 2, Mount Fuji 1, Tokyo Tower 1,
#   Berlin 1
# - de (no dbname: the file name "dewiki-..." names it; ISO-8859-1; "Datei:", "Bild:", "Kategorie:"): Tokio 3
#   (one through "Tokyo"), Japan 2, München 2, Fuji (Vulkan) 1, Berlin 1
# - ja (dbname jawiki, Shift_JIS; "ファイル:", "画像:", "カテゴリ:"): 東京都 3 (one through "東京"), 日本 2, 富士山 1
#   (東京タワー only in a file caption)
# Wikidata merges Tokyo, Japan and Mount Fuji (en "Fujisan", a redirect) in all three; München has no English
# article linked; Q2000000 (en Tokyo Tower, de Tokyo -> Tokio) conflicts with Q1490. Berlin is merged by the
# inline links only. Merged: Tokyo 9, Japan 6, Mount Fuji 3, Berlin 2, München 2 (de only), Tokyo Tower 1 (en only).

EN_PAGES = [
    WikiPage("Tokyo", 1, 0, "Tokyo is the capital of [[Japan]]. The [[Tokyo Tower]] stands in its centre.\n"
                            "[[Category:Cities]]\n[[de:Tokio]]\n[[ja:東京都]]"),
    WikiPage("Japan", 2, 0, "Japan is an island country. Its capital is [[Tokyo]], and [[Mount Fuji|Fuji]] its highest "
                            "mountain.[[File:Fuji.jpg|thumb|[[Tokyo]] at night]]"),
    WikiPage("Mount Fuji", 3, 0, "Mount Fuji can be seen from [[Tokyo Metropolis|the capital]] of [[Japan]]. It is far "
                                 "from [[Berlin]]."),
    WikiPage("Tokyo Tower", 4, 0, "A tower in [[Tokyo]].\n[[ja:東京タワー]]"),
    WikiPage("Berlin", 5, 0, "Berlin is the capital of Germany.\n[[de:Berlin]]\n[[fr:Berlin]]"),
    WikiPage("Tokyo Metropolis", 6, 0, "#REDIRECT [[Tokyo]]", redirect="Tokyo"),
    WikiPage("Fujisan", 7, 0, "#REDIRECT [[Mount Fuji]]", redirect="Mount Fuji"),
]  # fmt: skip
DE_PAGES = [
    WikiPage("Tokio", 1, 0, "Tokio ist die Hauptstadt von [[Japan]].[[Datei:Tokio.jpg|mini|Blick über [[Tokio]]]]\n"
                            "[[Kategorie:Stadt in Japan]]\n[[en:Tokyo]]\n[[ja:東京都]]"),
    WikiPage("Japan", 2, 0, "Japan liegt in Ostasien. Die Hauptstadt ist [[Tokio]], der höchste Berg der "
                            "[[Fuji (Vulkan)|Fuji]].\n[[Bild:Japan.png|mini|Karte]]"),
    WikiPage("Fuji (Vulkan)", 3, 0, "Der Fuji liegt bei [[Tokio]] in [[Japan]], weit von [[München]]."),
    WikiPage("München", 4, 0, "München ist eine Stadt in Bayern. Von dort fliegt man nach [[Tokyo]] oder fährt nach "
                              "[[Berlin]]."),
    WikiPage("Berlin", 5, 0, "Berlin ist die Hauptstadt Deutschlands; [[München]] liegt im Süden.\n[[en:Berlin]]"),
    WikiPage("Tokyo", 6, 0, "#WEITERLEITUNG [[Tokio]]", redirect="Tokio"),
    WikiPage("Kategorie:Stadt in Japan", 7, 14, "Städte."),
]  # fmt: skip
JA_PAGES = [
    WikiPage("東京都", 1, 0, "東京都は[[日本]]の首都である。[[ファイル:Tokyo.jpg|thumb|[[東京タワー]]]]\n"
                             "[[カテゴリ:日本の都道府県]]\n[[en:Tokyo]]\n[[de:Tokio]]"),
    WikiPage("日本", 2, 0, "日本の首都は[[東京]]、最も高い山は[[富士山]]である。[[画像:Japan.png|thumb|地図]]"),
    WikiPage("富士山", 3, 0, "[[東京都]]から見える[[日本]]の山。\n[[en:Fujisan]]"),
    WikiPage("東京タワー", 4, 0, "[[東京都]]にある塔。"),
    WikiPage("東京", 5, 0, "#転送 [[東京都]]", redirect="東京都"),
]  # fmt: skip
WIKIDATA_ITEMS = [
    {"type": "property", "id": "P31", "labels": {"en": {"language": "en", "value": "instance of"}}},
    {
        "type": "item",
        "id": "Q1490",
        "sitelinks": {
            "enwiki": {"site": "enwiki", "title": "Tokyo"},
            "frwiki": {"site": "frwiki", "title": "Tokyo"},
            "dewiki": {"site": "dewiki", "title": "Tokio"},
            "jawiki": {"site": "jawiki", "title": "東京都"},
            "enwikiquote": {"site": "enwikiquote", "title": "Tokyo"},
        },
    },
    {
        "type": "item",
        "id": "Q17",
        "sitelinks": {
            "jawiki": {"site": "jawiki", "title": "日本"},
            "dewiki": {"site": "dewiki", "title": "Japan"},
            "enwiki": {"site": "enwiki", "title": "Japan"},
        },
    },
    {
        "type": "item",
        "id": "Q39231",
        "sitelinks": {
            "enwiki": {"site": "enwiki", "title": "Fujisan"},
            "dewiki": {"site": "dewiki", "title": "Fuji (Vulkan)"},
            "jawiki": {"site": "jawiki", "title": "富士山"},
        },
    },
    {
        "type": "item",
        "id": "Q1726",
        "sitelinks": {
            "enwiki": {"site": "enwiki", "title": "Munich"},
            "dewiki": {"site": "dewiki", "title": "München"},
        },
    },
    {
        "type": "item",
        "id": "Q42",
        "sitelinks": {
            "enwiki": {"site": "enwiki", "title": "Douglas Adams"},
            "frwiki": {"site": "frwiki", "title": "Douglas Adams"},
        },
    },
    {
        "type": "item",
        "id": "Q2000000",
        "sitelinks": {
            "enwiki": {"site": "enwiki", "title": "Tokyo Tower"},
            "dewiki": {"site": "dewiki", "title": "Tokyo"},
        },
    },
]
MULTILINGUAL_ENTITIES = [  # (titles, count), in id order from 3
    ([("Tokyo", "en"), ("Tokio", "de"), ("東京都", "ja")], 9),
    ([("Japan", "en"), ("Japan", "de"), ("日本", "ja")], 6),
    ([("Mount Fuji", "en"), ("Fuji (Vulkan)", "de"), ("富士山", "ja")], 3),
    ([("Berlin", "en"), ("Berlin", "de")], 2),
    ([("München", "de")], 2),
    ([("Tokyo Tower", "en")], 1),
]


def write_multilingual_dumps(directory: Path) -> Tuple[List[Path], Path]:
    """The English, German and Japanese dumps and the Wikidata dump (bz2) described above."""
    en = directory / "en-crafted.xml.bz2"
    write_dump(en, EN_PAGES, dbname="enwiki")
    de = directory / "dewiki-20240101-pages-articles.xml"
    write_dump(de, DE_PAGES, namespaces={6: "Datei", 14: "Kategorie"}, lang="de", encoding="ISO-8859-1")
    ja = directory / "ja-crafted.xml.gz"
    write_dump(
        ja, JA_PAGES, namespaces={6: "ファイル", 14: "カテゴリ"}, dbname="jawiki", lang="ja", encoding="Shift_JIS"
    )
    wikidata = directory / "wikidata.json.bz2"
    lines = ["["] + [json.dumps(item, ensure_ascii=False) + "," for item in WIKIDATA_ITEMS]
    lines[-1] = lines[-1].rstrip(",")
    with bz2.open(wikidata, "wt", encoding="utf-8") as f:
        f.write("\n".join(lines + ["]"]) + "\n")
    return [en, de, ja], wikidata
