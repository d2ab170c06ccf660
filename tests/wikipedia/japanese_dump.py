"""
A small Japanese Wikipedia dump made at test time from real Japanese Wikipedia text: the first paragraphs of ten
JSQuAD articles (JGLUE v1.3's contexts are "title [SEP] paragraph" from Japanese Wikipedia), the title in bold at the
start as Wikipedia writes it, and wiki links added on real names of that text: plain (`[[北海道]]`), piped to
another title (`[[タイ王国|タイ]]`), and through two redirect pages written beside them (`日共` -> 日本共産党, an
abbreviation the article itself gives; `ハノーバー` -> ハノーファー, a spelling it gives). Each name's first
occurrence in a page is linked; names without a page in the dump are linked all the same (as in a sample dump).
"""

import json
import re
from pathlib import Path
from typing import Dict, List, Tuple

from luke_allennlp.wikipedia.dump import WikiPage, write_dump

ARTICLES = (
    "梅雨",
    "グスタフ・マーラー",
    "コンゴ共和国",
    "ラオス",
    "日本共産党",
    "オランダ",
    "ポルトガル",
    "ハノーファー",
    "豊岡市",
    "サケ",
)
PARAGRAPHS = 3
# The name in the text -> the link's target (a redirect page's title where one is written below).
LINKS = {
    "日本": "日本",
    "北海道": "北海道",
    "台湾": "台湾",
    "中国": "中国",
    "オーストリア": "オーストリア",
    "ウィーン": "ウィーン",
    "アフリカ": "アフリカ",
    "東南アジア": "東南アジア",
    "フランス": "フランス",
    "タイ": "タイ王国",
    "ドイツ": "ドイツ",
    "アムステルダム": "アムステルダム",
    "スペイン": "スペイン",
    "兵庫県": "兵庫県",
    "日共": "日共",
    "ハノーバー": "ハノーバー",
}
REDIRECTS = {"日共": "日本共産党", "ハノーバー": "ハノーファー"}


def jsquad_paragraphs(jglue: Path) -> Dict[str, List[str]]:
    """Each JSQuAD article's paragraphs, without the "title [SEP] " every context begins with."""
    squad = json.loads((jglue / "jsquad-v1.3" / "valid-v1.3.json").read_text(encoding="utf-8"))
    prefix = re.compile(r"^.*? \[SEP\] ")
    return {a["title"]: [prefix.sub("", p["context"], count=1) for p in a["paragraphs"]] for a in squad["data"]}


def link_names(text: str) -> Tuple[str, List[Tuple[str, str]]]:
    """`text` with the first occurrence of each name of `LINKS` linked (longest names first, none inside another
    link), and the (anchor, target) pairs in text order."""
    taken: List[Tuple[int, int, str]] = []
    for name in sorted(LINKS, key=len, reverse=True):
        start = text.find(name)
        while start >= 0 and any(s < start + len(name) and start < e for s, e, _ in taken):
            start = text.find(name, start + 1)
        if start >= 0:
            taken.append((start, start + len(name), name))
    out, links, last = [], [], 0
    for start, end, name in sorted(taken):
        target = LINKS[name]
        out += [text[last:start], f"[[{name}]]" if target == name else f"[[{target}|{name}]]"]
        links.append((name, target))
        last = end
    return "".join(out + [text[last:]]), links


def write_japanese_dump(path: Path, jglue: Path) -> Dict[str, object]:
    """Writes the dump (jawiki, language ja) and returns its pages' plain text (title -> paragraphs) and links
    (title -> (anchor, target) pairs)."""
    paragraphs = jsquad_paragraphs(jglue)
    pages, plain, links = [], {}, {}
    for page_id, title in enumerate(ARTICLES, start=1):
        text = "\n\n".join(paragraphs[title][:PARAGRAPHS])
        # The title in bold where the first sentence begins with it, as Wikipedia writes it; no link inside it.
        bold = len(title) if text.startswith(title) else 0
        linked, links[title] = link_names(text[bold:])
        pages.append(WikiPage(title, page_id, 0, (f"'''{title}'''" if bold else "") + linked))
        plain[title] = paragraphs[title][:PARAGRAPHS]
    for page_id, (source, target) in enumerate(REDIRECTS.items(), start=len(pages) + 1):
        pages.append(WikiPage(source, page_id, 0, f"#転送 [[{target}]]", redirect=target))
    write_dump(path, pages, {6: "ファイル", 14: "カテゴリ"}, dbname="jawiki", lang="ja")
    return {"paragraphs": plain, "links": links}
