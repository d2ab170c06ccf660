"""
Sentence splitting of a paragraph, offline and without a model.

Two splitters give the character spans of the sentences of one paragraph:

- `RuleSentenceSplitter` (the default): a sentence ends at `.`, `!`, `?` or `…` (with closing quotes or
  brackets) followed by whitespace and, after any opening quotes or brackets, a digit or a letter that is not
  lower-case; not after an initial (`J. R. R. Tolkien`), a dotted abbreviation (`U.S.`, `e.g.`) or a common
  abbreviation (`Dr.`, `St.`, `Jan.`, `No.`). CJK full stops end a sentence without a following space.
- `SpacySentenceSplitter`: spaCy's rule-based `sentencizer` on `spacy.blank(language)`. It tokenises every word
  first, which doubles the corpus builder's time per page (benchmarks/corpus_speed.py), and its vocabulary grows
  with every new word form, so it is rebuilt every `refresh_every` paragraphs to keep memory flat over a dump.
"""

import re
from typing import List, Tuple

Span = Tuple[int, int]

_ABBREVIATIONS = frozenset(
    "mr mrs ms dr prof st jr sr gen col lt sgt capt cmdr adm maj rev hon gov sen rep pres fr mt ft no nos vol vols "
    "pp p vs v al eg ie cf approx ca c fl b d op ed eds jan feb mar apr jun jul aug sep sept oct nov dec inc "
    "ltd co corp bros dept univ assn est fig figs eq ch sec art mgr supt messrs mme mlle".split()
)  # fmt: skip
# The end of a sentence candidate: terminal punctuation, closing quotes/brackets, whitespace.
_CANDIDATE = re.compile(r"([.!?…]+)[\"'”’»)\]]*(\s+)|[。！？]+[」』”）]*")
_DOTTED = re.compile(r"(?:\w\.)+\w?\.?$")
_OPENERS = "\"'“‘«([¿¡"


class RuleSentenceSplitter:
    """Sentence spans of a paragraph by punctuation and capitalisation rules (see the module)."""

    def __call__(self, text: str) -> List[Span]:
        spans, start = [], 0
        for match in _CANDIDATE.finditer(text):
            end = match.end()
            if match.group(2) is not None:  # western punctuation: look at what follows and at the word before
                if end >= len(text) or not self._starts_sentence(text, end):
                    continue
                if match.group(1) == "." and self._abbreviation(text, start, match.start()):
                    continue
                end = match.start(2)
            if end > start:
                spans.append((start, end))
            start = match.end()
        spans.append((start, len(text)))
        return [(s, e) for s, e in _strip(text, spans) if e > s]

    @staticmethod
    def _starts_sentence(text: str, at: int) -> bool:
        while at < len(text) and text[at] in _OPENERS:
            at += 1
        return at < len(text) and text[at].isalnum() and not text[at].islower()  # caseless scripts count

    @staticmethod
    def _abbreviation(text: str, start: int, end: int) -> bool:
        """Whether the word ending at `end` (before a period) is an initial or an abbreviation."""
        word = text[max(text.rfind(" ", start, end), text.rfind("\n", start, end), start - 1) + 1 : end].lstrip(
            _OPENERS
        )
        if not word:
            return False
        if len(word) == 1 and word.isalpha():  # an initial
            return True
        return word.lower().replace(".", "") in _ABBREVIATIONS or bool(_DOTTED.match(word + "."))


class SpacySentenceSplitter:
    """spaCy's `sentencizer` on a blank pipeline (no downloaded model)."""

    def __init__(self, language: str = "en", refresh_every: int = 100_000) -> None:
        self.language = language
        self.refresh_every = refresh_every
        self._calls = 0
        self._nlp = None

    def __call__(self, text: str) -> List[Span]:
        if self._nlp is None or self._calls >= self.refresh_every:
            import spacy

            self._nlp = spacy.blank(self.language)
            self._nlp.add_pipe("sentencizer")
            self._calls = 0
        self._calls += 1
        doc = self._nlp(text)
        return [(s, e) for s, e in _strip(text, [(sent.start_char, sent.end_char) for sent in doc.sents]) if e > s]


def _strip(text: str, spans: List[Span]) -> List[Span]:
    """The spans without their leading and trailing whitespace."""
    stripped = []
    for start, end in spans:
        piece = text[start:end]
        stripped.append((start + len(piece) - len(piece.lstrip()), end - len(piece) + len(piece.rstrip())))
    return stripped


def sentence_splitter(name: str = "rules"):
    if name == "rules":
        return RuleSentenceSplitter()
    if name == "spacy":
        return SpacySentenceSplitter()
    raise ValueError(f"sentence_splitter must be 'rules' or 'spacy', not {name!r}")
