"""
Sentence splitters on real text of many scripts: which one the predictors and the corpus builder use (issue 39).

Real text with no gold sentence boundaries, so two checks that need none:

- XQuAD (../shared/data/xquad, 12 languages, professional translations of the same English paragraphs): how often a
  paragraph gets as many sentences as its English original (translators keep the sentences; the English count is
  that of the splitter under test, which every splitter gets right on this news-like English), and the mean distance;
- XQuAD, JSQuAD (Japanese Wikipedia) and SQuAD (English Wikipedia): answers cut by a sentence boundary (an answer is
  a short phrase: a boundary inside one is a false split: "U.S.", "3. Oktober", "J. R. R.");
- the clean running text of the 206-page English Wikipedia dump: sentences and time.

Candidates (the ones importable are run): the hand-written rules the project had (`RuleSentenceSplitter`), sentencex
(Wikimedia's, Rust, ~300 languages' terminal punctuation and abbreviations), spaCy's `sentencizer` (blank pipeline),
pysbd and blingfire (both unreleased since 2021). `python benchmarks/sentence_splitters.py [--extra-path DIR]`.
"""

import argparse
import json
import re
import sys
import time
from pathlib import Path
from typing import Callable, Dict, List, Tuple

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from luke_allennlp.fixtures.tiny_checkpoints import shared_data_dir  # noqa: E402

Span = Tuple[int, int]
XQUAD_LANGUAGES = ("ar", "de", "el", "en", "es", "hi", "ro", "ru", "th", "tr", "vi", "zh")


def candidates(language: str) -> Dict[str, Callable[[str], List[Span]]]:
    """Each importable splitter for `language`, as text -> sentence spans."""
    from luke_allennlp.wikipedia.sentences import RuleSentenceSplitter, SpacySentenceSplitter

    found: Dict[str, Callable[[str], List[Span]]] = {"rules": RuleSentenceSplitter(language)}
    try:
        import sentencex

        def sentencex_spans(text: str) -> List[Span]:
            return [(b["start_index"], b["end_index"]) for b in sentencex.get_sentence_boundaries(language, text)]

        found["sentencex"] = sentencex_spans
    except ImportError:
        pass
    found["spacy"] = SpacySentenceSplitter(language)
    try:
        import pysbd

        segmenter = pysbd.Segmenter(language=language if language in pysbd.languages.LANGUAGE_CODES else "en")
        segmenter.char_span = True

        def pysbd_spans(text: str) -> List[Span]:
            return [(s.start, s.end) for s in segmenter.segment(text)]

        found["pysbd"] = pysbd_spans
    except (ImportError, ValueError):
        pass
    try:
        import blingfire

        def blingfire_spans(text: str) -> List[Span]:
            return [tuple(o) for o in blingfire.text_to_sentences_and_offsets(text)[1]]

        found["blingfire"] = blingfire_spans
    except ImportError:
        pass
    return found


def boundaries(spans: List[Span]) -> List[int]:
    """The positions between two sentences (each sentence's start but the first)."""
    return [start for start, _ in spans[1:]]


def cut_answers(spans: List[Span], answers: List[Tuple[int, int]]) -> int:
    cuts = boundaries(spans)
    return sum(any(start < cut < end for cut in cuts) for start, end in answers)


def squad_paragraphs(path: Path, strip_title: bool = False) -> List[Tuple[str, List[Tuple[int, int]]]]:
    """(context, answer character spans) of each paragraph of a SQuAD-format file."""
    data = json.loads(path.read_text(encoding="utf-8-sig"))["data"]
    paragraphs = []
    for article in data:
        for paragraph in article["paragraphs"]:
            context, offset = paragraph["context"], 0
            if strip_title:  # JSQuAD: "title [SEP] paragraph"
                match = re.match(r"^.*? \[SEP\] ", context)
                offset = match.end() if match else 0
            answers = [
                (a["answer_start"] - offset, a["answer_start"] - offset + len(a["text"]))
                for qa in paragraph["qas"]
                for a in qa["answers"]
                if a["answer_start"] >= offset
            ]
            paragraphs.append((context[offset:], answers))
    return paragraphs


def xquad(data: Path) -> None:
    english = squad_paragraphs(data / "xquad" / "xquad.en.json")
    english_counts = {name: [len(split(p)) for p, _ in english] for name, split in candidates("en").items()}
    print("XQuAD: paragraphs with the English count of sentences (mean |difference|), answers cut")
    rows = {}
    for language in XQUAD_LANGUAGES:
        paragraphs = squad_paragraphs(data / "xquad" / f"xquad.{language}.json")
        for name, split in candidates(language).items():
            same = distance = cut = answers = 0
            for (text, spans), reference in zip(paragraphs, english_counts[name]):
                found = split(text)
                same += len(found) == reference
                distance += abs(len(found) - reference)
                cut += cut_answers(found, spans)
                answers += len(spans)
            rows.setdefault(name, []).append((language, same, len(paragraphs), distance / len(paragraphs), cut))
    for name, results in rows.items():
        total_same = sum(r[1] for r in results)
        total = sum(r[2] for r in results)
        print(
            f"  {name:<10} {total_same / total:6.1%}  "
            + "  ".join(f"{lang} {same}/{n} ({d:.2f}) {cut}" for lang, same, n, d, cut in results)
        )


def answers_cut(data: Path) -> None:
    for label, path, language, strip in (
        ("JSQuAD", data / "jglue" / "jsquad-v1.3" / "valid-v1.3.json", "ja", True),
        ("SQuAD dev", data / "squad1.1" / "dev-v1.1.json", "en", False),
    ):
        paragraphs = squad_paragraphs(path, strip)
        total = sum(len(a) for _, a in paragraphs)
        print(f"{label}: {len(paragraphs)} paragraphs, {total} answers; answers cut, sentences, seconds")
        for name, split in candidates(language).items():
            start, cut, sentences = time.perf_counter(), 0, 0
            for text, spans in paragraphs:
                found = split(text)
                sentences += len(found)
                cut += cut_answers(found, spans)
            print(f"  {name:<10} {cut:5d} {sentences:7d} {time.perf_counter() - start:7.2f}")


def wikipedia(data: Path) -> None:
    from luke_allennlp.wikipedia.dump import WikiDump
    from luke_allennlp.wikipedia.markup import clean_wikitext

    dump = data / "wikipedia" / "enwiki-pages-articles-shortened-206.xml.bz2"
    paragraphs = [
        p for page in WikiDump(dump) if page.is_article for p in clean_wikitext(page.text).text.split("\n") if p.strip()
    ]
    characters = sum(map(len, paragraphs))
    print(f"English Wikipedia (206-page dump): {len(paragraphs)} paragraphs, {characters:,} characters")
    for name, split in candidates("en").items():
        start = time.perf_counter()
        sentences = sum(len(split(p)) for p in paragraphs)
        seconds = time.perf_counter() - start
        print(f"  {name:<10} {sentences:7d} sentences  {characters / seconds / 1e6:6.2f} M characters/s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--extra-path", action="append", default=[], help="a folder of candidates not installed")
    args = parser.parse_args()
    sys.path[:0] = args.extra_path
    data = shared_data_dir()
    xquad(data)
    answers_cut(data)
    wikipedia(data)


if __name__ == "__main__":
    main()
