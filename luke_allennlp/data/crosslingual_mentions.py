"""
Entity inputs for passages in any language of a multilingual (mLUKE) entity vocabulary, as mLUKE's cross-lingual
QA experiments use them ("mLUKE-E"): the mention candidates of a passage in language X are the names linked on its
Wikipedia page in X's mention dictionary, or else the English page's candidates translated into X through the
inter-language links that the multilingual entity vocabulary holds (one id for the articles of several languages
about one thing). Either way each candidate's entity id is the multilingual vocabulary's id of its title in X.

A translated candidate (an entity with an article in X) is named in X by its X title, by that title without a
trailing disambiguation in parentheses (`Paris (Texas)` -> `Paris`), and by the names the source page links it
with (names of people, teams and places are often written alike: "Broncos"). X's own dictionary is not asked for
other names of a translated entity. A page title is found in X's dictionary as written (MLQA's titles are in the
passage's language) or through the vocabulary (XQuAD's are English: `Super_Bowl_50` -> `Super Bowl 50` ->
its id -> its German title).

The language of a file is given, or read from the file names of XQuAD (`xquad.de.json`) and MLQA
(`dev-context-de-question-en.json`, `test-context-ar-question-ar.json`).
"""

import logging
import os
import re
import urllib.parse
from typing import Dict, List, Mapping, Optional, Tuple, Union

from luke_allennlp.data.entity_mentions import MentionLinker, Mentions
from luke_allennlp.data.inputs import TokenizedText
from luke_allennlp.resources.entity_vocab import EntityVocab
from luke_allennlp.resources.hf_datasets import source_name
from luke_allennlp.resources.mentions.name_matcher import NameMatcher
from luke_allennlp.resources.titles import normalize_title

logger = logging.getLogger(__name__)

_CODE = r"[a-z]{2,3}(?:-[a-z]+)?"
# XQuAD (`xquad.de.json`, the Hub's configuration `xquad.de`) and MLQA (`dev-context-de-question-en.json`, the
# Hub's `mlqa.de.en`): the passages' language.
FILE_NAME_LANGUAGE = (
    re.compile(rf"^xquad\.({_CODE})(?:\.json)?$"),
    re.compile(rf"^(?:dev|test)-context-({_CODE})-question-"),
    re.compile(rf"^mlqa\.({_CODE})\.{_CODE}$"),
)
_DISAMBIGUATION = re.compile(r"\s+\([^()]*\)$")

# Where a passage's candidates came from: its own language's dictionary, translated ones, or none.
OWN, TRANSLATED, NONE = "own", "translated", "none"


def language_of_file(path: Union[str, "os.PathLike[str]"]) -> Optional[str]:
    """The passages' language by XQuAD's or MLQA's file name convention, or their Hub configuration's (None if the name
    follows neither)."""
    name = source_name(os.fspath(path))
    for pattern in FILE_NAME_LANGUAGE:
        match = pattern.match(name)
        if match:
            return match.group(1)
    return None


class CrossLingualLinker:
    """
    Mention candidates of pages in several languages, mapped into one (multilingual) entity vocabulary.

    # Parameters

    model_name : `str`
        The checkpoint (its entity vocabulary and config).
    mention_dictionaries : `Union[str, Mapping[str, str]]`
        One mention dictionary file (for passages of any language) or `{language: file}` (SQLite or JSON, as
        `allennlp build-mention-dictionary` writes them).
    entity_vocab : `str`, optional (default = `None`)
        The entity vocabulary; `None`: the checkpoint's.
    min_link_probability : `float`, optional (default = `0.01`)
        Names linked less often than this where they occur are not looked for (translated ones: their source names).
    max_mention_length : `int`, optional (default = `30`)
        Longest mention in subwords.
    translate_from : `str`, optional (default = `None`)
        A language of `mention_dictionaries` whose page candidates are translated into the passage's language when
        that language's dictionary lacks the page (or there is none); needs a multilingual entity vocabulary.
    """

    def __init__(
        self,
        model_name: str,
        mention_dictionaries: Union[str, Mapping[str, str]],
        entity_vocab: Optional[str] = None,
        min_link_probability: float = 0.01,
        max_mention_length: int = 30,
        translate_from: Optional[str] = None,
    ) -> None:
        files: Dict[Optional[str], str]
        if isinstance(mention_dictionaries, str):
            files = {None: mention_dictionaries}
        elif isinstance(mention_dictionaries, Mapping) and mention_dictionaries:
            files = dict(mention_dictionaries)  # type: ignore[arg-type]
        else:
            raise ValueError(f"mention_dictionary must be a file or {{language: file}}, not {mention_dictionaries!r}")
        self.linkers: Dict[Optional[str], MentionLinker] = {}
        vocab: Optional[EntityVocab] = None
        for language, path in files.items():
            linker = MentionLinker(
                model_name, path, entity_vocab, min_link_probability, max_mention_length, language=language, vocab=vocab
            )
            vocab = linker.entity_vocab
            self.linkers[language] = linker
        assert vocab is not None
        self.entity_vocab = vocab
        self.multilingual = vocab.language is None
        self._languages = vocab.languages
        if translate_from is not None:
            if translate_from not in files:
                raise ValueError(
                    f"translate_from={translate_from!r}: no mention dictionary of that language "
                    f"(the dictionaries are of {sorted(map(str, files))})"
                )
            if not self.multilingual:
                raise ValueError(
                    f"translate_from={translate_from!r} needs a multilingual entity vocabulary "
                    f"(mLUKE's, titles of several languages sharing ids); {model_name}'s is of "
                    f"{vocab.language!r}"
                )
        self.translate_from = translate_from
        self.min_link_probability = min_link_probability
        self._matchers: Dict[Tuple[str, Optional[str]], Tuple[Optional[NameMatcher], str]] = {}

    def by_language(self) -> bool:
        """Whether the dictionaries are per language (then every passage needs one)."""
        return None not in self.linkers

    def page_matcher(self, title: str, language: Optional[str]) -> Tuple[Optional[NameMatcher], str]:
        """
        The names of page `title` in `language` with their entity ids (None for entities outside the vocabulary),
        and where they came from: `OWN` (the language's dictionary), `TRANSLATED` (`translate_from`'s page), `NONE`
        (no candidates: the matcher is None).
        """
        key = (title, language)
        if key not in self._matchers:
            self._matchers[key] = self._page_matcher(urllib.parse.unquote(title), language)
        return self._matchers[key]

    def find(self, matcher: NameMatcher, text: TokenizedText) -> Mentions:
        return next(iter(self.linkers.values())).find(matcher, text)

    def _page_matcher(self, title: str, language: Optional[str]) -> Tuple[Optional[NameMatcher], str]:
        own = self.linkers.get(language) if self.by_language() else self.linkers[None]
        if own is not None:
            names = self._page_names(own, title, language)
            if names:
                return NameMatcher(own.entity_ids(names, language), cjk_characters=True), OWN
        if self.translate_from is not None and language is not None and language != self.translate_from:
            names = self._page_names(self.linkers[self.translate_from], title, self.translate_from)
            translated = self._translate(names, language)
            if translated:
                return NameMatcher(translated, cjk_characters=True), TRANSLATED
        logger.warning(
            "page %r has no mention candidates in %s: no entities for its passages",
            title,
            language or "the mention dictionary",
        )
        return None, NONE

    def _page_names(self, linker: MentionLinker, title: str, language: Optional[str]) -> Dict[str, str]:
        """The names linked on the page (those above `min_link_probability`), found by its title as written or by
        its title in `language` through the vocabulary."""
        names = linker.dictionary.names_for_page(title)
        if not names and language is not None and self.multilingual:
            translated = self.translate_title(title, language)
            if translated is not None and translated != normalize_title(title):
                names = linker.dictionary.names_for_page(translated)
        return {
            name: target
            for name, target in names.items()
            if linker.dictionary.link_probability(name) >= self.min_link_probability
        }

    def translate_title(self, title: str, language: str) -> Optional[str]:
        """The title of the entity of `title` (a title of any language of the vocabulary, `translate_from`'s first)
        in `language`, or None."""
        title = normalize_title(title)
        for source in [self.translate_from, *self._languages]:
            entity_id = self.entity_vocab.get(title, language=source)
            if entity_id is not None:
                return title_in(self.entity_vocab, entity_id, language)
        return None

    def _translate(self, names: Dict[str, str], language: str) -> Dict[str, Optional[int]]:
        """The source page's candidates as names in `language`, for the entities that have an article there: each
        entity's title in `language` (and that title without a disambiguation in parentheses), then the source
        names themselves (names of people, teams and places are often written alike: "Broncos")."""
        assert self.translate_from is not None
        translated: Dict[str, Optional[int]] = {}
        kept: List[Tuple[str, int]] = []
        for name, target in sorted(names.items()):
            entity_id = self.entity_vocab.get(target, language=self.translate_from)
            title = title_in(self.entity_vocab, entity_id, language) if entity_id is not None else None
            if title is None or entity_id is None:
                continue
            for found in _title_names(title):
                translated.setdefault(found, entity_id)
            kept.append((name, entity_id))
        for name, entity_id in kept:
            translated.setdefault(name, entity_id)
        return translated


def title_in(vocab: EntityVocab, entity_id: int, language: str) -> Optional[str]:
    """The entity's title in `language`, None if it has none there (an article only some languages have)."""
    title = vocab.title(entity_id, language=language)
    return title if vocab.get(title, language=language) == entity_id else None


def _title_names(title: str) -> List[str]:
    bare = _DISAMBIGUATION.sub("", title)
    return [title] + ([bare] if bare and bare != title else [])
