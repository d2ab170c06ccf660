"""
Entity inputs from a mention dictionary (the LUKE paper's Appendix C): names of the dictionary found in a text become
entities over the subwords they cover, with ids from the checkpoint's entity vocabulary. Shared by the SQuAD reader
(the names linked on the passage's page) and the sentence-level readers (any name of the dictionary, its most linked
entity).
"""

import logging
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Set, Tuple

import numpy as np
from allennlp.common.file_utils import cached_path
from allennlp.data.fields import Field

from luke_allennlp.data.inputs import TokenizedText, tensor_fields
from luke_allennlp.modeling.checkpoint_files import read_config
from luke_allennlp.resources.entity_vocab import EntityVocab
from luke_allennlp.resources.mentions.name_matcher import NameMatcher

logger = logging.getLogger(__name__)


@dataclass
class Mentions:
    """The entity mentions found in a text: (entity id, first subword, last subword), and what was skipped."""

    entities: List[Tuple[int, int, int]] = field(default_factory=list)
    not_in_entity_vocab: int = 0
    too_long: int = 0


def entity_tensor_fields(pad_id: int, table: np.ndarray, mask: np.ndarray, types: np.ndarray) -> Dict[str, Field]:
    """The entity fields of `stack_window_entities`'s arrays: ids, mask, token types, first and last positions."""
    return tensor_fields(
        pad_id,
        entity_ids=table[..., 0],
        entity_attention_mask=mask,
        entity_type_ids=types,
        entity_start_positions=table[..., 1],
        entity_end_positions=table[..., 2],
    )


def check_entity_limits(max_entities: int, max_mention_length: int) -> None:
    if max_entities < 1 or max_mention_length < 1:
        raise ValueError(
            f"max_entities ({max_entities}) and max_mention_length ({max_mention_length}) must be positive"
        )


class MentionLinker:
    """
    A mention dictionary and the checkpoint's entity vocabulary, which must fit its entity table.

    # Parameters

    model_name : `str`
        The checkpoint (its `entity_vocab.json` and config).
    mention_dictionary : `str`
        The file written by `allennlp build-mention-dictionary` (SQLite or JSON).
    entity_vocab : `str`, optional (default = `None`)
        The entity vocabulary (any format `EntityVocab.from_file` reads); `None`: the checkpoint's.
    min_link_probability : `float`, optional (default = `0.01`)
        Names linked less often than this where they occur are not looked for.
    max_mention_length : `int`, optional (default = `30`)
        Longest mention in subwords; longer matches are skipped (counted).
    language : `str`, optional (default = `None`)
        The dictionary's language: with a multilingual (mLUKE) entity vocabulary, targets are that language's
        titles (`Spree` in German is the river, whatever an English "Spree" is); `None`: a title of any language.
    vocab : `EntityVocab`, optional (default = `None`)
        The entity vocabulary already read (by another linker of the same checkpoint): `entity_vocab` unread.
    """

    def __init__(
        self,
        model_name: str,
        mention_dictionary: str,
        entity_vocab: Optional[str] = None,
        min_link_probability: float = 0.01,
        max_mention_length: int = 30,
        language: Optional[str] = None,
        vocab: Optional[EntityVocab] = None,
    ) -> None:
        from luke_allennlp.resources.checkpoint_vocab import checkpoint_entity_vocab
        from luke_allennlp.resources.mentions.json_dictionary import MentionDictionary

        self.dictionary = MentionDictionary.from_file(cached_path(mention_dictionary))
        self.language = language
        self.entity_vocab = vocab if vocab is not None else checkpoint_entity_vocab(model_name, entity_vocab)
        config = read_config(model_name)
        rows = config.get("entity_vocab_size") if config.get("model_type") == "luke" else None
        if vocab is None and rows is not None and len(self.entity_vocab) > rows:
            raise ValueError(
                f"the entity vocabulary has {len(self.entity_vocab)} ids but {model_name}'s entity table {rows} rows"
            )
        built_with = self.dictionary.min_link_probability
        if min_link_probability < built_with:
            logger.warning(
                "%s has no names below its min_link_probability %g, whatever the reader's (%g)",
                mention_dictionary,
                built_with,
                min_link_probability,
            )
        self.min_link_probability = min_link_probability
        self.max_mention_length = max_mention_length
        self._page_matchers: Dict[str, Optional[NameMatcher]] = {}
        self._text_matcher: Optional[NameMatcher] = None
        self._languages: Optional[Set[str]] = None

    def page_matcher(self, title: str) -> Optional[NameMatcher]:
        """The names linked on page `title` with their entity ids (None for targets not in the entity vocabulary),
        those below `min_link_probability` left out; None if the dictionary does not have the page."""
        if title not in self._page_matchers:
            names = self.dictionary.names_for_page(title)
            if not names:
                logger.warning("page %r is not in the mention dictionary: no entities for its passages", title)
                self._page_matchers[title] = None
            else:
                keep = {
                    name: target
                    for name, target in names.items()
                    if self.dictionary.link_probability(name) >= self.min_link_probability
                }
                self._page_matchers[title] = NameMatcher(self.entity_ids(keep, self.language))
        return self._page_matchers[title]

    def entity_id(self, title: str, language: Optional[str] = None) -> Optional[int]:
        """The id of a title of the dictionary (of `language`, or the linker's, if the vocabulary is multilingual
        and knows it there; a title of any language otherwise), None if the vocabulary has none."""
        language = language or self.language
        if language is not None and self.entity_vocab.language is None:
            found = self.entity_vocab.get(title, language=language)
            if found is not None or language in self._vocab_languages():
                return found
        return self.entity_vocab.get(title)

    def _vocab_languages(self) -> Set[str]:
        if self._languages is None:
            self._languages = set(self.entity_vocab.languages)
        return self._languages

    def entity_ids(self, names: Dict[str, str], language: Optional[str] = None) -> Dict[str, Optional[int]]:
        """`{name: target title}` -> `{name: entity id}` (`entity_id`)."""
        return {name: self.entity_id(target, language) for name, target in names.items()}

    def text_matcher(self) -> NameMatcher:
        """Every name of the dictionary at `min_link_probability` or above, with the entity id of its most linked
        entity (None where that entity is not in the vocabulary): for text without a page. Names are found at any
        kana or CJK ideograph too (`NameMatcher`'s `cjk_characters`), as text written without spaces needs, with a
        JSON or a SQLite dictionary alike."""
        if self._text_matcher is None:
            self._text_matcher = self.dictionary.name_matcher(
                self.min_link_probability,
                lambda candidates: self.entity_id(candidates[0][0]) if candidates else None,
                cjk_characters=True,
            )
        return self._text_matcher

    def find(self, matcher: NameMatcher, text: TokenizedText, subwords_kept: Optional[int] = None) -> Mentions:
        """The names found in `text` whose entities are in the vocabulary, as entities over their subwords; those
        reaching past the first `subwords_kept` subwords (a cut text) are left out."""
        found = Mentions()
        for start, end, name in matcher.find(text.text):
            entity_id = matcher.value(name)
            if entity_id is None:
                found.not_in_entity_vocab += 1
                continue
            subwords = text.char_span_to_subwords(start, end)
            if subwords is None or text.offsets[subwords[1], 1] < end:  # in a part of the text that was cut
                continue
            if subwords_kept is not None and subwords[1] >= subwords_kept:
                continue
            if subwords[1] - subwords[0] + 1 > self.max_mention_length:
                found.too_long += 1
                continue
            found.entities.append((entity_id, *subwords))
        return found
