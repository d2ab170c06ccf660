"""
Sentence splitting of a paragraph, offline (nothing is downloaded).

Two splitters give the character spans of the sentences of one paragraph:

- `RuleSentenceSplitter` (the default): a sentence ends at `.`, `!`, `?`, `…`, Arabic `؟` or the Devanagari
  danda `।` (with closing quotes or brackets) followed by whitespace and, after any opening quotes or brackets
  (Spanish `¿` `¡` included), a digit or a letter that is not lower-case (letters of caseless scripts count); not
  after an initial (`J. R. R. Tolkien`, `1850 г.`), a dotted abbreviation (`U.S.`, `e.g.`, `z.B.`, `т.е.`) or a
  common abbreviation of English, German, Dutch, Spanish, French, Italian, Bulgarian or Russian (`Dr.`, `St.`,
  `Jan.`, `Nr.`, `bzw.`, `Sra.`, `т.нар.`, `напр.`, `проф.`). In languages
  that write ordinals with a dot (German, the Nordic and most Central European languages: `language`), a number of
  one or two digits before the dot is an ordinal (`am 3. Oktober`, `im 19. Jahrhundert`), not a sentence end.
  Japanese and Chinese full stops (`。` `！` `？` `．`, with closing `」` `』` `）`) end a sentence without a
  following space, but one inside quotes that the text goes on after (`「本当？」と聞いた。`) does not. Khmer's `។` and
  `៕` end a sentence before whitespace.
  Thai has no sentence punctuation (a space separates phrases and names as well as sentences): a sentence holding
  Thai script is handed to PyThaiNLP's CRF segmenter (`sent_tokenize(engine="crfcut")`, its model ships in the
  wheel: nothing is downloaded; the `thai` extra installs it with python-crfsuite). It splits finer than the
  sentences of the text (clauses: 194 sentences where XQuAD's English originals of the same 30 paragraphs have 117),
  cutting 2 of 177 answers (benchmarks/RESULTS.md). Without the extra, a Thai paragraph stays one sentence (the
  corpus builder then splits what is longer than a sequence) and a warning says so once (`thai_words`, the NER
  predictor's Thai words, shares the loader and the warning). Lao (no maintained
  segmenter: LaoNLP splits at `.`, which the rules do too) and Khmer without `។` are one sentence per paragraph.
  Limits: an abbreviation not in the lists before a capitalised word ends a sentence.
- `SpacySentenceSplitter`: spaCy's rule-based `sentencizer` on `spacy.blank(language)` (`xx`, spaCy's multi-language
  pipeline, where the language's tokenizer needs packages not installed, as Japanese's SudachiPy). It tokenises
  every word first, which doubles the corpus builder's time per page (benchmarks/corpus_speed.py), and its
  vocabulary grows with every new word form, so it is rebuilt every `refresh_every` paragraphs to keep memory flat
  over a dump. It knows no abbreviations or ordinals, and leaves Spanish `¿` `¡` at the end of the sentence before.
"""

import functools
import logging
import re
from types import ModuleType
from typing import Callable, List, Optional, Tuple

import regex

logger = logging.getLogger(__name__)

Span = Tuple[int, int]

_ABBREVIATIONS = frozenset(
    "mr mrs ms dr prof st jr sr gen col lt sgt capt cmdr adm maj rev hon gov sen rep pres fr mt ft no nos vol vols "
    "pp p vs v al eg ie cf approx ca c fl b d op ed eds jan feb mar apr jun jul aug sep sept oct nov dec inc "
    "ltd co corp bros dept univ assn est fig figs eq ch sec art mgr supt messrs mme mlle "
    # German, Dutch, Spanish, French, Italian
    "bzw usw vgl nr str jh jhd geb gest hrsg evtl ggf sog inkl mio mrd bd bde abs bspw dt engl frz lat ehem "
    "dhr mevr mw blz bijv resp ong sra srta dra ud uds pág págs núm avda mm mmes ste env sig sigg dott ecc "
    # Bulgarian and Russian (not "им", "те": words; nor "гг.", "др.", which often end a sentence)
    "тнар напр вж гр ул бул пл проф доц акад д-р г-н г-жа ок млн млрд хил стр изд св см ср тыс руб англ "
    "лат нем франц".split()
)
# Languages whose ordinal numbers are written with a dot ("3." = third).
ORDINAL_DOT_LANGUAGES = frozenset("de da no nb nn fi is fo et lv lt cs sk pl hu sl hr sr bs tr".split())
# The end of a sentence candidate: terminal punctuation, closing quotes/brackets, whitespace; or a CJK full stop.
_CANDIDATE = re.compile(r"([.!?…؟।॥‼⁇⁈⁉។៕]+)[\"'”’»)\]」』]*(\s+)|[。！？．｡]+[」』”’）〕】》〉]*")
_CJK_CLOSERS = "」』”’）〕】》〉"
_ORDINAL = re.compile(r"\d{1,2}$")
_LETTER = r"[^\W\p{M}]\p{M}*"  # one letter or digit with its combining marks (decomposed "É")
_DOTTED = regex.compile(rf"(?:{_LETTER}\.)+(?:{_LETTER})?\.?$")
_OPENERS = "\"'“‘„‚«‹([¿¡「『（"
THAI = re.compile("[\u0e00-\u0e7f]")  # Thai script


class RuleSentenceSplitter:
    """
    Sentence spans of a paragraph by punctuation and capitalisation rules (see the module).

    # Parameters

    language : `Optional[str]`, optional (default = `None`)
        The text's language code (`de`, `ja`, ...): languages of `ORDINAL_DOT_LANGUAGES` read `3.` as an ordinal.
    """

    def __init__(self, language: Optional[str] = None) -> None:
        self.ordinal_dots = (language or "").split("-")[0] in ORDINAL_DOT_LANGUAGES

    def __call__(self, text: str) -> List[Span]:
        spans, start = [], 0
        for match in _CANDIDATE.finditer(text):
            end = match.end()
            if match.group(2) is not None:  # western punctuation: look at what follows and at the word before
                if end >= len(text) or not self._starts_sentence(text, end):
                    continue
                if match.group(1) == "." and self._abbreviation(text, start, match.start(), self.ordinal_dots):
                    continue
                end = match.start(2)
            elif (
                end < len(text) and text[end - 1] in _CJK_CLOSERS and not (text[end].isspace() or text[end] in _OPENERS)
            ):
                continue  # a quoted question or exclamation the sentence goes on after (「本当？」と聞いた。)
            if end > start:
                spans.append((start, end))
            start = match.end()
        spans.append((start, len(text)))
        spans = _strip(text, spans)
        if THAI.search(text) and thai_sentences() is not None:
            spans = [
                piece for s, e in spans for piece in (_thai_spans(text, s, e) if THAI.search(text, s, e) else [(s, e)])
            ]
        return [(s, e) for s, e in spans if e > s]

    @staticmethod
    def _starts_sentence(text: str, at: int) -> bool:
        while at < len(text) and text[at] in _OPENERS:
            at += 1
        return at < len(text) and text[at].isalnum() and not text[at].islower()  # caseless scripts count

    @staticmethod
    def _abbreviation(text: str, start: int, end: int, ordinal_dots: bool = False) -> bool:
        """Whether the word ending at `end` (before a period) is an initial, an abbreviation or (`ordinal_dots`) an
        ordinal number."""
        word = text[max(text.rfind(" ", start, end), text.rfind("\n", start, end), start - 1) + 1 : end].lstrip(
            _OPENERS
        )
        if not word:
            return False
        if word[0].isalpha() and regex.fullmatch(_LETTER, word):  # an initial
            return True
        if ordinal_dots and _ORDINAL.match(word):
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

            try:
                self._nlp = spacy.blank(self.language)
            except ImportError as error:  # e.g. Japanese's tokenizer needs SudachiPy
                logger.warning(
                    "spaCy's %r pipeline cannot be built (%s); using its multi-language one", self.language, error
                )
                self.language = "xx"
                self._nlp = spacy.blank(self.language)
            self._nlp.add_pipe("sentencizer")
            self._calls = 0
        self._calls += 1
        doc = self._nlp(text)
        return [(s, e) for s, e in _strip(text, [(sent.start_char, sent.end_char) for sent in doc.sents]) if e > s]


@functools.lru_cache(maxsize=None)
def pythainlp_tokenize() -> Optional[ModuleType]:
    """PyThaiNLP's `pythainlp.tokenize` (Thai sentences and words), or None (warned once, for both) where the `thai`
    extra is not installed."""
    try:
        import pythainlp.tokenize.crfcut  # noqa: F401  (it loads python-crfsuite and the model: fail here, not later)
        from pythainlp import tokenize
    except ImportError as error:
        logger.warning(
            "Thai text is split by the rules alone (a paragraph is one sentence, words end at spaces): PyThaiNLP "
            "cannot be loaded (%s); pip install 'luke_allennlp[thai]'",
            error,
        )
        return None
    return tokenize


def thai_sentences() -> Optional[Callable[[str], List[str]]]:
    """PyThaiNLP's CRF sentence segmenter, or None where the `thai` extra is not installed."""
    tokenize = pythainlp_tokenize()
    return None if tokenize is None else functools.partial(tokenize.sent_tokenize, engine="crfcut")


def thai_words() -> Optional[Callable[[str], List[str]]]:
    """PyThaiNLP's dictionary word segmenter (`newmm`, maximal matching on the dictionary shipped in the wheel),
    without the whitespace, or None where the `thai` extra is not installed."""
    tokenize = pythainlp_tokenize()
    return (
        None if tokenize is None else functools.partial(tokenize.word_tokenize, engine="newmm", keep_whitespace=False)
    )


def _thai_spans(text: str, start: int, end: int) -> List[Span]:
    """The spans of PyThaiNLP's sentences in `text[start:end]`: each piece is found in the text, and a sentence runs
    to the next one's start, so no character is lost whatever whitespace the segmenter keeps."""
    cuts, at = [], start
    for piece in thai_sentences()(text[start:end]):
        piece = piece.strip()
        found = text.find(piece, at, end) if piece else -1
        if found >= 0:
            cuts.append(found)
            at = found + len(piece)
    bounds = [start] + [cut for cut in cuts if cut > start] + [end]
    return _strip(text, list(zip(bounds, bounds[1:])))


def _strip(text: str, spans: List[Span]) -> List[Span]:
    """The spans without their leading and trailing whitespace."""
    stripped = []
    for start, end in spans:
        piece = text[start:end]
        stripped.append((start + len(piece) - len(piece.lstrip()), end - len(piece) + len(piece.rstrip())))
    return stripped


def sentence_splitter(name: str = "rules", language: Optional[str] = None):
    """The splitter `name` ("rules" or "spacy") for text in `language` (a Wikipedia language code; None: English)."""
    if name == "rules":
        return RuleSentenceSplitter(language)
    if name == "spacy":
        return SpacySentenceSplitter(language or "en")
    raise ValueError(f"sentence_splitter must be 'rules' or 'spacy', not {name!r}")
