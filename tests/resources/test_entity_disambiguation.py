from collections import Counter

import pytest

from luke_allennlp.resources.entity_disambiguation import EdDocument, EdMention, read_benchmark, write_benchmark
from tests.entity_disambiguation import conll_documents

# A hand-written file in the deep-ed layout: titles with underscores and commas, a candidate-less mention, a gold
# outside the candidates, a NIL mention, a BOM, Windows line ends. The document's text is put back together from
# the contexts (the right context of "JAPAN" ends before "CHINA", whose left context overlaps it).
HANDWRITTEN = (
    "\ufeff1 SOCCER\t1 SOCCER\tJAPAN\tSOCCER -\tGET LUCKY WIN ,\tCANDIDATES\t15573,0.2,Japan_national_football_team"
    "\t1,0.7,Japan\tGT:\t2,15573,0.2,Japan national football team\r\n"
    "1 SOCCER\t1 SOCCER\tCHINA\tLUCKY WIN ,\tIN SURPRISE DEFEAT .\tCANDIDATES\t5,0.9,China\tGT:\t-1,6,China,_national_team\r\n"
    "1 SOCCER\t1 SOCCER\tSURPRISE\tCHINA IN\tDEFEAT .\tCANDIDATES\tEMPTYCAND\tGT:\t-1\r\n"
    "1 SOCCER\t1 SOCCER\tDEFEAT\tIN SURPRISE\t.\tCANDIDATES\tEMPTYCAND\tGT:\t-1,7,Defeat (film)\r\n"
    "2 X\t2 X\tAT&amp;T\t\t\tCANDIDATES\t8,1.0,AT&amp;T\tGT:\t1,8,1.0,AT&amp;T\n"
)


def test_reads_the_documented_layout(tmp_path):
    (tmp_path / "aida.csv").write_text(HANDWRITTEN, encoding="utf-8")
    stats = Counter()
    first, second = read_benchmark(tmp_path / "aida.csv", stats)
    assert first.id == "1 SOCCER" and first.text == "SOCCER - JAPAN GET LUCKY WIN , CHINA IN SURPRISE DEFEAT ."
    assert [first.text[m.start : m.end] for m in first.mentions] == ["JAPAN", "CHINA", "DEFEAT"]  # SURPRISE is NIL
    japan, china, defeat = first.mentions
    assert japan.candidates == [("Japan", 0.7), ("Japan national football team", 0.2)]  # by p(e|m)
    assert japan.gold == "Japan national football team"
    assert (china.gold, china.candidates) == ("China, national team", [("China", 0.9)])
    assert (defeat.gold, defeat.candidates) == ("Defeat (film)", [])
    assert (second.text, second.mentions) == ("AT&amp;T", [EdMention(0, 8, "AT&T", [("AT&T", 1.0)])])
    assert (stats["documents"], stats["mentions"], stats["nil_mentions"], stats["contexts_not_overlapping"]) == (
        2,
        4,
        1,
        0,
    )


@pytest.mark.parametrize(
    "line, message",
    [
        ("d\td\tm\tl\tr\tCANDIDATES\tEMPTYCAND\tGT:", "expected 'doc<TAB>doc"),
        ("d\td\tm\tl\tr\tCANDS\tEMPTYCAND\tGT:\t-1", "expected 'doc<TAB>doc"),
        ("d\td\tm\tl\tr\tCANDIDATES\t1,high,X\tGT:\t-1", "candidate '1,high,X' is not 'wikipedia_id,p"),
        ("d\td\tm\tl\tr\tCANDIDATES\t1,0.5\tGT:\t-1", "candidate '1,0.5' has no title"),
        ("d\td\tm\tl\tr\tCANDIDATES\t1,0.5,X\tGT:\tX", "gold 'X' is neither"),
        ("d\td\t \tl\tr\tCANDIDATES\t1,0.5,X\tGT:\t-1", "empty document id or mention"),
    ],
)
def test_malformed_lines_are_named(tmp_path, line, message):
    good = "d\td\tm\tl\tr\tCANDIDATES\t1,0.5,X\tGT:\t1,1,0.5,X"
    (tmp_path / "bad.csv").write_text(f"{good}\n\n{line}\n")
    with pytest.raises(ValueError, match=f"bad.csv, line 3: {message}"):
        read_benchmark(tmp_path / "bad.csv")


def test_round_trip_on_real_documents(shared_data, tmp_path):
    documents = conll_documents(shared_data / "conll2003" / "eng.testa", 6)
    assert sum(len(d.mentions) for d in documents) > 100
    write_benchmark(documents, tmp_path / "wide.csv", context_words=100)
    stats = Counter()
    read = read_benchmark(tmp_path / "wide.csv", stats)
    nil = sum(1 for d in documents for m in d.mentions if m.gold is None)
    assert stats["nil_mentions"] == nil > 0
    for original, back in zip(documents, read):
        # The text between the first mention's left context and the last one's right context comes back whole.
        first, last = original.mentions[0], original.mentions[-1]
        words = original.text.split(" ")
        begin = len(original.text[: first.start].split(" ")) - 1
        end = len(original.text[: last.end].split(" ")) + 100
        assert back.text == " ".join(words[max(0, begin - 100) : end])
        shift = len(" ".join(words[: max(0, begin - 100)])) + (1 if begin > 100 else 0)
        expected = [
            EdMention(m.start - shift, m.end - shift, m.gold, m.candidates) for m in original.mentions if m.gold
        ]
        assert back.mentions == expected
    # Narrow contexts leave gaps between distant mentions: the text is shorter, but every mention keeps its words.
    write_benchmark(documents, tmp_path / "narrow.csv", context_words=3)
    stats = Counter()
    narrow = read_benchmark(tmp_path / "narrow.csv", stats)
    assert stats["contexts_not_overlapping"] > 0
    for original, back in zip(documents, narrow):
        names = [original.text[m.start : m.end] for m in original.mentions if m.gold]
        assert [back.text[m.start : m.end] for m in back.mentions] == names


def test_writer_rejects_text_it_cannot_write(tmp_path):
    with pytest.raises(ValueError, match="words separated by single spaces"):
        write_benchmark([EdDocument("d", "two  spaces", [])], tmp_path / "x.csv")
    with pytest.raises(ValueError, match="not on word boundaries"):
        write_benchmark([EdDocument("d", "New York", [EdMention(1, 3)])], tmp_path / "x.csv")
