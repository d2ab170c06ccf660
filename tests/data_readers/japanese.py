"""Real Japanese text with mentions picked by hand: JSQuAD's contexts (Japanese Wikipedia paragraphs, "title [SEP]
paragraph") and JSTS/JNLI sentences (image captions), from JGLUE v1.3 as distributed."""

import json
from pathlib import Path
from typing import List, Tuple

# (where the text comes from, names in it with a type of Open Entity's general types): each name's first
# occurrence after the "[SEP]" of a context.
JSQUAD_MENTIONS = {
    "梅雨": (("北海道", "location"), ("小笠原諸島", "location"), ("朝鮮半島", "location"), ("台湾", "location")),
    "グスタフ・マーラー": (("グスタフ・マーラー", "person"), ("オーストリア", "location"), ("ウィーン", "location")),
    "コンゴ共和国": (("コンゴ民主共和国", "location"), ("カメルーン", "location"), ("ブラザヴィル", "location")),
    "日本共産党": (("日本共産党", "organization"), ("日本", "location")),
}
CAPTION_MENTIONS = {
    ("jsts-v1.3", 2, "sentence2"): (
        ("男性", "person"),
        ("バナナ", "object"),
    ),  # 道の上をバナナを背負った男性が歩いています。
    ("jnli-v1.3", 1, "sentence1"): (("キリン", "entity"),),  # キリンが、木の中から首を出しています。
}

Mention = Tuple[str, Tuple[int, int], str]  # (name, character span, type)


def japanese_mentions(jglue: Path) -> List[Tuple[str, List[Mention]]]:
    """(text, its mentions) for the texts above, spans found in the real text."""
    squad = json.loads((jglue / "jsquad-v1.3" / "valid-v1.3.json").read_text(encoding="utf-8"))
    contexts = {article["title"]: article["paragraphs"][0]["context"] for article in squad["data"]}
    texts = []
    for title, names in JSQUAD_MENTIONS.items():
        context = contexts[title]
        texts.append((context, [_find(context, name, context.index("[SEP]"), kind) for name, kind in names]))
    for (task, index, field), names in CAPTION_MENTIONS.items():
        lines = (jglue / task / "valid-v1.3.json").read_text(encoding="utf-8").splitlines()
        sentence = json.loads(lines[index])[field]
        texts.append((sentence, [_find(sentence, name, 0, kind) for name, kind in names]))
    return texts


def _find(text: str, name: str, after: int, kind: str) -> Mention:
    start = text.index(name, after)
    return name, (start, start + len(name)), kind


def script(character: str) -> str:
    """A character's script for a rough word split: kanji, hiragana, katakana (with the long-vowel mark), or itself."""
    import unicodedata

    name = unicodedata.name(character, "")
    if character == "ー" or name.startswith("KATAKANA"):
        return "katakana"
    for prefix in ("CJK UNIFIED", "HIRAGANA"):
        if name.startswith(prefix):
            return prefix
    return "latin" if character.isalnum() and character.isascii() else character


def conll_lines(text: str, mentions: List[Mention], tags: dict) -> List[str]:
    """`text` as a pre-segmented CoNLL sentence (`word TAG` lines, IOB2): words cut at the mentions' boundaries and
    where the script changes (a stand-in for a morphological analyser), spaces dropped; a mention's words tagged
    with `tags[its type]`."""
    import itertools

    cuts = sorted({0, len(text)} | {s for _, (s, _), _ in mentions} | {e for _, (_, e), _ in mentions})
    lines = []
    for a, b in zip(cuts, cuts[1:]):
        start, kind = next(((s, tags[k]) for _, (s, e), k in mentions if s <= a and b <= e), (None, None))
        position = a
        for _, run in itertools.groupby(text[a:b], key=script):
            word = "".join(run)
            if not word.isspace():
                lines.append(f"{word} {'O' if kind is None else ('B-' if position == start else 'I-') + kind}")
            position += len(word)
    return lines
