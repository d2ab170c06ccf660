import logging
from typing import Any, List, Optional

import numpy as np
import regex
from allennlp.common.util import JsonDict
from allennlp.data import DatasetReader, Instance
from allennlp.models import Model
from allennlp.predictors.predictor import Predictor
from transformers import PreTrainedTokenizerFast

from luke_allennlp.data.inputs import tokenize_words
from luke_allennlp.predictors.luke_predictor import LukePredictor
from luke_allennlp.resources.files import require, require_strings
from luke_allennlp.resources.mentions.name_matcher import CJK_TOKEN
from luke_allennlp.wikipedia.sentences import THAI, RuleSentenceSplitter, thai_words

logger = logging.getLogger(__name__)

# A word keeps its combining marks (`regex`'s `\w` holds them: decomposed accents, Devanagari vowel signs, Arabic and
# Hebrew vowel points), as does a symbol (one grapheme).
WORD = regex.compile(r"\w+(?:[-'.]+\w+)*|[^\w\s]\p{M}*")
GRAPHEME = regex.compile(r"\X")


def split_words(text: str, without_spaces: bool = False) -> List[str]:
    """Words and punctuation, roughly as CoNLL-2003 splits them ("U.S.-based" stays one word; a word keeps its
    combining marks, so decomposed "München" and Devanagari, Arabic or Hebrew words stay whole). `without_spaces`
    (Japanese, Chinese): each kana or CJK ideograph is a word of its own, runs of other letters or digits one word
    (`CJK_TOKEN`), since such text has no spaces to split at. Thai, whose spaces separate phrases rather than words,
    is split into words by PyThaiNLP's dictionary segmenter (`newmm`; the `thai` extra: without it, at spaces, with
    one warning)."""
    words = CJK_TOKEN.findall(text) if without_spaces else WORD.findall(text)
    segment = thai_words() if THAI.search(text) else None
    if segment is None:
        return words
    return [piece for word in words for piece in (segment(word) if THAI.search(word) else [word])]


def fit_words(words: List[str], tokenizer: PreTrainedTokenizerFast, room: int, where: str) -> List[str]:
    """
    `words` with each word of more than `room` subwords (a long run of text without spaces: Chinese read by a model
    that splits at spaces, a URL) cut at grapheme boundaries into pieces of at most `room` subwords, each tokenised
    alone as after a space, so that a sentence's first word always fits a sequence. A warning gives the count.
    """
    if not words:
        return words
    counts = np.diff(tokenize_words(tokenizer, words).ends, prepend=0)
    if counts.max() <= room:
        return words

    def pieces(graphemes: List[str]) -> List[str]:
        piece = "".join(graphemes)
        if len(graphemes) == 1 or len(tokenize_words(tokenizer, [piece]).ids) <= room:
            return [piece]
        half = len(graphemes) // 2
        return pieces(graphemes[:half]) + pieces(graphemes[half:])

    fitted: List[str] = []
    for word, count in zip(words, counts):
        fitted += pieces(GRAPHEME.findall(word)) if count > room else [word]
    long = int((counts > room).sum())
    logger.warning(
        "%s: %d word(s) of more subwords than max_seq_length allows (%d; the longest %d, %r...) cut into %d pieces",
        where,
        long,
        room,
        counts.max(),
        words[int(counts.argmax())][:20],
        len(fitted) - len(words) + long,
    )
    return fitted


def split_sentences(text: str, language: Optional[str] = None) -> List[str]:
    """
    Sentences of running text: at line breaks, and within a line by the corpus builder's rules
    (`luke_allennlp.wikipedia.sentences.RuleSentenceSplitter`): `.` `!` `?` `…` `؟` `।` before a capital of any script
    (Latin, Cyrillic, Greek), a letter of a caseless script (Arabic, Devanagari, CJK) or a digit, not after an
    abbreviation or an initial; `。` `！` `？` without a space (not inside quotes the sentence goes on after);
    `language` (`de`, ...) reads `3.` as an ordinal where the language writes them so. A document given as a list of
    sentences is taken as it is.
    """
    split = RuleSentenceSplitter(language)
    return [line[start:end] for line in text.splitlines() for start, end in split(line)]


@Predictor.register("luke_span_ner")
class LukeSpanNerPredictor(LukePredictor):
    """
    Named entities of a sentence, or of every sentence of a document.

    The model was trained on sentences in their documents (each input window holds the sentence and as much of its
    document as fits), and finds fewer entities in a sentence given alone: give the document, or the text around the
    sentence, when you have it.

    Inputs (JSON objects; `"id"` optional, named in errors):

    - `{"sentence": "raw text"}` or `{"words": [...]}` (a list of strings), optionally with the document context
      `"left_context"` / `"right_context"`: the text before and after the sentence, as a string of raw text or a list
      of sentences (each a string or a list of words). Output: `words`, `tags` (IOB2), `truncated` and `entities`:
      `[{"start", "end", "text", "type", "score"}]`, word indices into `words` (the sentence's only: nothing is
      predicted in the context), `end` exclusive, `text` the entity's words joined by spaces (by nothing with a
      `words_without_spaces` reader), `score` the model's probability of the type for the span. Words past
      `max_seq_length`, which the model did not see, have no tag (`tags` is shorter than `words`), and `truncated`
      counts them (0 when the sentence fits).
    - `{"document": "raw text"}` (split into sentences at line breaks and sentence-final punctuation, see
      `split_sentences`) or `{"document": [...]}` (a list of sentences, each a string or a list of words). Output:
      `{"sentences": [...]}`, one object as above for each sentence, each predicted with the rest of the document as
      its context, as `allennlp evaluate` reads a CoNLL file.

    Raw text's words (`split_words`): Thai through PyThaiNLP's dictionary (the `thai` extra). A word of more subwords
    than `max_seq_length` allows is cut into pieces that fit (`fit_words`, with a warning counting them), so a
    sentence's first word always fits; the words after the window are counted in `truncated`.

    With a reader of `words_without_spaces` (LUKE-Japanese), raw text is split into characters (`split_words`; pass
    `"words"` for another segmentation, e.g. a morphological analyser's), and an entity's `text` joins its words
    without spaces.

    # Parameters

    model : `Model`
        The span NER model.
    dataset_reader : `DatasetReader`
        Its reader (`luke_conll2003`).
    frozen : `bool`, optional (default = `True`)
        As allennlp's `Predictor`: the model in evaluation mode.
    language : `str`, optional (default = `None`)
        The documents' language code (`--predictor-args '{"language": "de"}'`): where it writes ordinals with a dot
        (German, the Nordic and Central European languages), `am 3. Oktober` does not end a sentence.
    """

    output_keys = ("words", "tags", "truncated", "entities")

    def __init__(
        self, model: Model, dataset_reader: DatasetReader, frozen: bool = True, language: Optional[str] = None
    ) -> None:
        super().__init__(model, dataset_reader, frozen)
        self.language = language

    def predict_json(self, inputs: JsonDict) -> JsonDict:
        return self.predict_batch_json([inputs])[0]

    def predict_batch_json(self, inputs: List[JsonDict]) -> List[JsonDict]:
        groups = [self._json_to_instances(json_dict) for json_dict in inputs]
        outputs = iter(self.predict_batch_instance([instance for group in groups for instance in group]))
        results = []
        for json_dict, group in zip(inputs, groups):
            sentences = [self._outputs(next(outputs)) for _ in group]
            results.append({"sentences": sentences} if "document" in json_dict else sentences[0])
        return results

    def _json_to_instance(self, json_dict: JsonDict) -> Instance:
        """allennlp's one-instance hook (used to check an input): a document's first sentence, the whole document
        checked. `_json_to_instances` gives every sentence."""
        return self._json_to_instances(json_dict)[0]

    def _json_to_instances(self, json_dict: JsonDict) -> List[Instance]:
        where = self.input_id(json_dict)
        reader = self._dataset_reader
        if "document" in json_dict:
            others = [key for key in ("sentence", "words", "left_context", "right_context") if key in json_dict]
            if others:
                raise ValueError(f'{where}: "document" is the whole text: it takes no {", ".join(others)}')
            document: Any = json_dict["document"]
            if isinstance(document, str):
                split = split_sentences(document, self.language)
                sentences = [self._words(sentence, where) for sentence in split]
            else:
                sentences = self._sentences(document, "document", where, "raw text or a list of sentences")
            return reader.document_to_instances(sentences, where)
        if "words" in json_dict:
            words = require_strings(json_dict["words"], where, '"words"')
        elif "sentence" in json_dict:
            words = self._words(require(json_dict, "sentence", str, where), where)
        else:
            raise ValueError(
                f'{where}: the input needs "sentence" (text), "words" (a list of strings) or "document" (text or a '
                "list of sentences)"
            )
        context = {key: self._context(json_dict.get(key, []), key, where) for key in ("left_context", "right_context")}
        return [reader.text_to_instance(words, **context, instance_id=where)]

    def _context(self, context: Any, key: str, where: str) -> List[List[str]]:
        """The context before or after a sentence: raw text (one run of words) or a list of sentences."""
        if isinstance(context, str):
            return [self._words(context, where)]
        return self._sentences(context, key, where, "raw text or a list of sentences")

    def _sentences(self, sentences: Any, key: str, where: str, expected: str) -> List[List[str]]:
        if not isinstance(sentences, list):
            raise ValueError(f'{where}: "{key}" must be {expected}, not {type(sentences).__name__}')
        words = []
        for number, sentence in enumerate(sentences, start=1):
            what = f'sentence {number} of "{key}"'
            if not isinstance(sentence, (str, list)):
                raise ValueError(f"{where}: {what} must be text or a list of words, not {type(sentence).__name__}")
            if isinstance(sentence, str):
                words.append(self._words(sentence, where))
            else:
                words.append(require_strings(sentence, where, what))
        return words

    def _words(self, text: str, where: str) -> List[str]:
        """Raw text's words (`split_words`), each of which fits a sequence (`fit_words`; with `words_without_spaces`
        two subwords fewer, since a subword across a word boundary belongs to both words)."""
        reader: Any = self._dataset_reader
        room = reader.max_words - (2 if self._without_spaces else 0)
        return fit_words(split_words(text, self._without_spaces), reader.tokenizer, room, where)

    @property
    def _without_spaces(self) -> bool:
        return bool(getattr(self._dataset_reader, "words_without_spaces", False))
