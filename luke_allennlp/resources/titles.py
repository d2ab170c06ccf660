"""
Page titles as MediaWiki stores them, namespaces, and interwiki prefixes; a list of titles read from a file.

MediaWiki shows `[[new_York]]`, `[[New  York]]` and `[[New York#History]]` as links to the same page
"New York": underscores and runs of whitespace are one space, the first letter is upper-cased (on wikis with
`<case>first-letter</case>`, Wikipedia's default; not on `case-sensitive` ones, and with a dotted `İ` for `i`
on the Turkic-language wikis) and the `#section` is not part of the title. Each dump's `<siteinfo>` gives its
case rule and localised namespace names (`Kategorie:`, `ファイル:`), kept in its `Namespaces`.
"""

import json
import os
import re
from typing import Dict, List, Optional, Tuple
from urllib.parse import unquote

# Everything MediaWiki folds into one space in a title (it stores it as "_"), and the direction marks it removes.
_SPACES = re.compile(r"[\s_\u00a0\u1680\u180e\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+")
_DIRECTION_MARKS = re.compile(r"[\u200e\u200f\u202a-\u202e]")
_PERCENT_ESCAPE = re.compile(r"%[0-9A-Fa-f]{2}")  # never part of a MediaWiki title, so always URL-encoding


FIRST_LETTER, CASE_SENSITIVE = "first-letter", "case-sensitive"  # siteinfo's <case>
# Wikis whose language upper-cases "i" to "İ" (MediaWiki's Turkish, Azerbaijani, Crimean Tatar, Karakalpak,
# Tatar and Gagauz language classes).
_DOTTED_I_LANGUAGES = frozenset("tr az crh kaa tt gag".split())


def normalize_title(title: str, case: str = FIRST_LETTER, language: str = "") -> str:
    """
    The canonical form of a page title: URL-encoding decoded (`Beyonc%C3%A9`), underscores and whitespace runs
    -> one space, trimmed, `#section` stripped, first character upper-cased as MediaWiki does
    (`"super_Bowl_50"` -> `"Super Bowl 50"`) unless `case` is `"case-sensitive"`; `language` (a wiki's
    language code) only matters for the Turkic wikis' `i` -> `İ`.
    """
    if "%" in title and _PERCENT_ESCAPE.search(title):
        title = unquote(title)
    title = title.split("#", 1)[0]
    title = _SPACES.sub(" ", _DIRECTION_MARKS.sub("", title)).strip()
    if title and case != CASE_SENSITIVE:
        first = "İ" if title[0] == "i" and language in _DOTTED_I_LANGUAGES else title[0].upper()
        # MediaWiki keeps a first letter whose upper case is several characters (ß -> SS).
        if len(first) == 1:
            title = first + title[1:]
    return title


# The English namespace names and aliases, for dumps whose siteinfo lists none; siteinfo's names are added.
DEFAULT_NAMESPACES: Dict[str, int] = {
    "media": -2,
    "special": -1,
    "talk": 1,
    "user": 2,
    "user talk": 3,
    "wikipedia": 4,
    "wikipedia talk": 5,
    "project": 4,
    "project talk": 5,
    "wp": 4,
    "file": 6,
    "file talk": 7,
    "image": 6,
    "image talk": 7,
    "mediawiki": 8,
    "mediawiki talk": 9,
    "template": 10,
    "template talk": 11,
    "help": 12,
    "help talk": 13,
    "category": 14,
    "category talk": 15,
    "portal": 100,
    "portal talk": 101,
    "book": 108,
    "book talk": 109,
    "draft": 118,
    "draft talk": 119,
    "timedtext": 710,
    "timedtext talk": 711,
    "module": 828,
    "module talk": 829,
}
FILE_NAMESPACE = 6  # [[File:x.jpg|...]] embeds a file
CATEGORY_NAMESPACE = 14
# Localised aliases that siteinfo does not list (it gives each namespace's one local name): the old "Image"
# namespace of the larger wikis, still common in their pages' markup.
NAMESPACE_ALIASES: Dict[str, Dict[str, int]] = {
    "de": {"bild": 6},
    "ja": {"画像": 6},
    "ru": {"изображение": 6},
    "es": {"imagen": 6},
    "it": {"immagine": 6},
    "pt": {"imagem": 6},
    "nl": {"afbeelding": 6},
    "ar": {"صورة": 6},
    "zh": {"图像": 6, "圖像": 6, "文件": 6, "檔案": 6},
}

# Interwiki prefixes to sister projects (a link to another wiki is never an entity of this one).
SISTER_PROJECTS = frozenset(
    "wikipedia w wiktionary wikt wikinews n wikibooks b wikiquote q wikisource s wikispecies species "
    "wikiversity v wikivoyage voy wikimedia foundation wmf commons meta m metawikipedia mw mediawikiwiki "
    "wikidata d phabricator phab incubator outreach google imdb".split()
)
# Wikipedia language codes are 2-3 letters, optionally with subtags (zh-yue, be-tarask); a few are longer.
_LANGUAGE_CODE = re.compile(r"[a-z]{2,3}(?:-[a-z]{2,8})*")
_LONG_LANGUAGE_CODES = frozenset(
    "simple bat-smg fiu-vro roa-rup zh-classical zh-min-nan nds-nl map-bms cbk-zam".split()
)


def is_language_prefix(prefix: str) -> bool:
    """Whether an interwiki prefix (lower-cased) names a Wikipedia language (`fr`, `zh-yue`, `simple`)."""
    return prefix not in SISTER_PROJECTS and (prefix in _LONG_LANGUAGE_CODES or bool(_LANGUAGE_CODE.fullmatch(prefix)))


class Namespaces:
    """
    Which namespace a link target belongs to, from the dump's `<siteinfo>` (plus the English defaults, which
    every wiki accepts), and whether its prefix is an interwiki one (`fr:Paris`, `wikt:word`). Prefixes are
    case-insensitive. Also the wiki's title rule (`normalize`): its `case` and `language`.
    """

    def __init__(self, names: Optional[Dict[str, int]] = None, case: str = FIRST_LETTER, language: str = "") -> None:
        self.names = dict(DEFAULT_NAMESPACES)
        self.case = case
        self.language = ""
        self.set_language(language)
        for name, key in (names or {}).items():
            self.add(name, key)

    def set_language(self, language: str) -> None:
        """The wiki's language: its namespace aliases are added, its title rule used."""
        self.language = language
        for name, key in NAMESPACE_ALIASES.get(language, {}).items():
            self.names.setdefault(name, key)

    def normalize(self, title: str) -> str:
        """`normalize_title` with this wiki's case rule."""
        return normalize_title(title, self.case, self.language)

    def add(self, name: str, key: int) -> None:
        name = _SPACES.sub(" ", name).strip().lower()
        if name:
            self.names[name] = key

    def split(self, title: str) -> Tuple[Optional[int], Optional[str], str]:
        """`(namespace key or None, interwiki prefix or None, rest)` of a (raw) link target."""
        prefix, colon, rest = title.partition(":")
        if not colon:
            return 0, None, title
        key = _SPACES.sub(" ", prefix).strip().lower()
        if key in self.names:
            return self.names[key], None, rest
        raw = prefix.strip()
        if key in SISTER_PROJECTS or key in _LONG_LANGUAGE_CODES or (raw.islower() and _LANGUAGE_CODE.fullmatch(raw)):
            return None, key, rest
        return 0, None, title  # "Star Wars: Episode IV" is an article title with a colon

    def namespace_of(self, title: str) -> int:
        """The namespace of a page title (for old exports without `<ns>`); interwiki-looking prefixes count as 0."""
        key, _, _ = self.split(title)
        return 0 if key is None else key


def read_page_titles(path: "os.PathLike[str] | str") -> List[str]:
    """Page titles from a file: a SQuAD JSON file (its articles' titles), or one title per line."""
    path = os.fspath(path)
    with open(path, encoding="utf-8") as f:
        text = f.read()
    if not text.lstrip().startswith("{"):
        return [line.strip() for line in text.splitlines() if line.strip()]
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise ValueError(f"{path}, line {error.lineno}: not JSON ({error.msg})") from None
    articles = data.get("data") if isinstance(data, dict) else None
    if not isinstance(articles, list) or not all(isinstance(a, dict) and "title" in a for a in articles):
        raise ValueError(
            f'{path}: a JSON file of titles must be in SQuAD\'s format, {{"data": [{{"title": ...}}, ...]}}'
        )
    return [article["title"] for article in articles]
