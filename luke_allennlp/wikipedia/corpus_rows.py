"""
Articles turned into rows of LUKE's pretraining corpus (`luke_allennlp.wikipedia.corpus` builds the corpus from them),
in worker processes (`init_worker`, `process_batch`), one `PageProcessor` each:

1. markup -> text, one paragraph per line, links as character spans (`clean_wikitext`; headings dropped);
2. each link's target followed through redirects and looked up in the entity vocabulary; a link that finds
   no entity (a missing page, a redirect loop, an article outside the vocabulary) becomes `[UNK]` or is
   dropped (`unknown_entities`). In a multilingual vocabulary (mLUKE's, titles of several languages merged into
   one id) the dump's language (`language`) selects the titles looked up, so that `[[Berlin]]` in a German dump
   finds the id of `("Berlin", "de")`; a vocabulary of one language is looked up by title alone;
3. paragraphs split into sentences by punctuation and capitalisation rules for the dump's language
   (`sentences.py`: `。` and the other CJK full stops, `¿` `¡`, German ordinals; spaCy's `sentencizer` with
   `sentence_splitter="spacy"`, 2x slower); two sentences are joined when the split falls inside a link's anchor;
4. each sentence tokenised with the fast tokenizer (no special tokens), links mapped to the subwords their
   characters cover. With a sentencepiece tokenizer (XLM-R's, mLUKE's) the `▁` that marks a word start is
   sometimes a piece of its own (`東京都は` -> `▁` `東` `京` `都` `は`): it shares its word's first character in
   the offsets and belongs to a mention starting at that word, as in `MLukeTokenizer`'s inputs. (That tokenizer
   tokenises the text between entity spans apart, so it also puts a `▁` before a mention that starts inside a
   word, `は` `▁` `日` `本`; the corpus keeps the sentence's own pieces, `は` `日` `本`.) As in the
   original LUKE, a sentence of fewer than `min_sentence_length` *subwords* is skipped (headings and list
   fragments, mostly). Unlike it, a sentence longer than a sequence is split
   (before a mention where possible) rather than dropped;
5. a page's sentences packed into sequences of at most `max_seq_length - 2` subwords (a sentence goes to the
   next sequence when it would overflow); sequences without any entity are skipped unless
   `include_sequences_without_entities`, as in the original; at most `max_entities` entities per sequence and
   `max_mention_length` positions per entity (the first ones are kept).

Only links of the running text can become entities (tables, infoboxes, references and captions are not
sentences); every other `[[...]]` of an article is counted under its place (`links_in_templates`,
`links_in_tables`, ...) or, in the running text, its kind (`non_entity_links`, detailed in `markup_links`).
"""

import bisect
import os
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Dict, List, Optional, Tuple

from luke_allennlp.resources.entity_vocab import EntityVocab
from luke_allennlp.resources.pretraining_corpus import COLUMNS
from luke_allennlp.resources.titles import Namespaces
from luke_allennlp.wikipedia.dump import WikiPage
from luke_allennlp.wikipedia.markup import clean_wikitext
from luke_allennlp.wikipedia.parts import TitleIndex
from luke_allennlp.wikipedia.redirects import ARTICLE, LOOP, MISSING
from luke_allennlp.wikipedia.sentences import sentence_splitter

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerFast

# Why a link found no entity.
_NO_ENTITY = {
    ARTICLE: "links_outside_vocabulary",
    LOOP: "links_through_redirect_loops",
    MISSING: "links_to_missing_pages",
}
# Links outside the running text, by place (markup.PLACES).
PLACE_SKIPS = {
    "heading": "links_in_headings",
    "template": "links_in_templates",
    "table": "links_in_tables",
    "reference": "links_in_references",
    "media": "links_in_image_captions",
    "comment": "links_in_comments",
    "nowiki": "links_in_nowiki",
    "other_element": "links_in_other_elements",
}

Mention = Tuple[int, int, int]  # (start, end, entity id): characters of the page text, or subwords


@dataclass(frozen=True)
class CorpusOptions:
    max_seq_length: int = 512
    max_entities: int = 128
    max_mention_length: int = 30
    min_sentence_length: int = 5
    unknown_entities: str = "drop"  # "unk": links without an entity become [UNK]; "drop": they are dropped
    include_sequences_without_entities: bool = False
    sentence_splitter: str = "rules"  # or "spacy" (see luke_allennlp.wikipedia.sentences)
    # The dump's language code (de, ja, ...): titles of a multilingual vocabulary, sentence rules. None: what the
    # dump says, if it says (the siteinfo or file name, where WikiDump reads it); else English rules.
    language: Optional[str] = None

    def __post_init__(self) -> None:
        if self.unknown_entities not in ("unk", "drop"):
            raise ValueError(f"unknown_entities must be 'unk' or 'drop', not {self.unknown_entities!r}")
        if self.sentence_splitter not in ("rules", "spacy"):
            raise ValueError(f"sentence_splitter must be 'rules' or 'spacy', not {self.sentence_splitter!r}")
        if (
            self.max_seq_length < 3
            or self.max_entities < 1
            or self.max_mention_length < 1
            or self.min_sentence_length < 0
        ):
            raise ValueError(f"invalid limits: {self}")

    @property
    def max_num_tokens(self) -> int:
        return self.max_seq_length - 2  # room for the special tokens added at training time


class PageProcessor:
    """Turns articles into corpus rows (one per worker process)."""

    def __init__(
        self,
        tokenizer: "PreTrainedTokenizerFast",
        vocab: EntityVocab,
        index: TitleIndex,
        namespaces: Namespaces,
        options: CorpusOptions,
    ) -> None:
        self.tokenizer = tokenizer
        self.vocab = vocab
        self.index = index
        self.namespaces = namespaces
        self.options = options
        self.unk_id = vocab.unk_id if options.unknown_entities == "unk" else None
        # A multilingual vocabulary is looked up by (title, language); one of a single language by title.
        self.lookup_language = options.language if vocab.language is None else None
        self.split = sentence_splitter(options.sentence_splitter, options.language)

    def process(self, page: WikiPage, stats: Counter) -> Dict[str, list]:
        """The rows of one article (columns -> lists), counting in `stats` what is skipped or cut."""
        rows: Dict[str, list] = {column: [] for column in COLUMNS}
        clean = clean_wikitext(page.text, self.namespaces, headings=False)
        stats["headings"] += clean.dropped_headings
        stats["links"] += clean.total_links
        for kind, count in clean.link_counts.items():
            if kind != "entity":
                stats[f"markup_{kind}_links"] += count
                stats["non_entity_links"] += count
        for (place, kind), count in clean.outside_counts.items():
            stats[PLACE_SKIPS[place]] += count
            stats[f"outside:{place}:{kind}"] += count
        if not clean.text:
            stats["pages_empty_after_cleaning"] += 1
            return rows
        text = clean.text
        mentions = self._mentions(clean.links, stats)
        sentences = self._sentences(text, clean.paragraphs(), mentions, stats)
        if not sentences:  # (text that is all whitespace cannot get here: it is normalised away)
            stats["links_across_sentences"] += len(mentions)
            return rows
        encoding = self.tokenizer(
            [text[start:end] for start, end in sentences],
            add_special_tokens=False,
            return_offsets_mapping=True,
            return_attention_mask=False,
            return_token_type_ids=False,
        )
        pieces: List[Tuple[List[int], List[Mention]]] = []
        position = 0  # mentions are sorted, and so are sentences
        for (start, end), ids, offsets in zip(sentences, encoding["input_ids"], encoding["offset_mapping"]):
            while position < len(mentions) and mentions[position][0] < start:
                stats["links_across_sentences"] += 1  # (only across paragraphs: sentences are joined otherwise)
                position += 1
            inside = []
            while position < len(mentions) and mentions[position][0] < end:
                if mentions[position][1] <= end:
                    inside.append(mentions[position])
                else:
                    stats["links_across_sentences"] += 1
                position += 1
            subword_mentions = self._subword_mentions(inside, start, offsets, stats)
            if len(ids) < self.options.min_sentence_length:
                stats["short_sentences"] += 1
                stats["links_in_short_sentences"] += len(subword_mentions)
                continue
            stats["sentences"] += 1
            pieces.extend(self._split_long(ids, subword_mentions, stats))
        stats["links_across_sentences"] += len(mentions) - position
        self._pack(pieces, page.page_id, rows, stats)
        return rows

    def _mentions(self, links, stats: Counter) -> List[Mention]:
        mentions = []
        for link in links:
            title, status = self.index.lookup(link.target)
            entity_id = self.vocab.get(title, language=self.lookup_language) if title is not None else None
            if entity_id is None:
                reason = _NO_ENTITY[status]
                if self.unk_id is None:
                    stats[reason] += 1
                    continue
                stats[f"unk_{reason}"] += 1
                entity_id = self.unk_id
            mentions.append((link.start, link.end, entity_id))
        return mentions

    def _sentences(self, text: str, paragraphs, mentions: List[Mention], stats: Counter) -> List[Tuple[int, int]]:
        """Sentence spans of the page text; a split inside a mention's anchor is undone."""
        starts = [start for start, _, _ in mentions]
        sentences: List[Tuple[int, int]] = []
        for offset, paragraph_end in paragraphs:
            for i, (start, end) in enumerate(self.split(text[offset:paragraph_end])):
                start, end = start + offset, end + offset
                if i > 0:
                    m = bisect.bisect_right(starts, start - 1) - 1  # the last mention starting before this sentence
                    if m >= 0 and mentions[m][1] > start:
                        sentences[-1] = (sentences[-1][0], end)
                        stats["sentences_joined_at_mentions"] += 1
                        continue
                sentences.append((start, end))
        return sentences

    @staticmethod
    def _subword_mentions(mentions: List[Mention], start: int, offsets, stats: Counter) -> List[Mention]:
        """Character mentions of a sentence starting at `start` -> subword spans (a subword partly inside counts)."""
        token_starts = [s for s, _ in offsets]
        token_ends = [e for _, e in offsets]
        result = []
        for mention_start, mention_end, entity_id in mentions:
            char_start, char_end = mention_start - start, mention_end - start
            first = bisect.bisect_right(token_ends, char_start)
            last = bisect.bisect_left(token_starts, char_end) - 1
            if first > last:
                stats["mentions_without_subwords"] += 1
                continue
            if token_starts[first] < char_start or token_ends[last] > char_end:
                stats["mention_boundaries_inside_subwords"] += 1
            result.append((first, last + 1, entity_id))
        return result

    def _split_long(self, ids: List[int], mentions: List[Mention], stats: Counter):
        """A sentence longer than a sequence, in pieces that fit, cut before a mention rather than inside it."""
        limit = self.options.max_num_tokens
        if len(ids) <= limit:
            return [(ids, mentions)]
        stats["long_sentences_split"] += 1
        pieces, start = [], 0
        while len(ids) - start > limit:
            cut = start + limit
            for s, e, _ in mentions:
                if s < cut < e:
                    if s > start:
                        cut = s
                    else:
                        stats["mentions_split_at_sequence_boundary"] += 1
                    break
            inside = [(max(s, start) - start, min(e, cut) - start, i) for s, e, i in mentions if s < cut and e > start]
            pieces.append((ids[start:cut], inside))
            start = cut
        pieces.append((ids[start:], [(max(s, start) - start, e - start, i) for s, e, i in mentions if e > start]))
        return pieces

    def _pack(self, pieces, page_id: int, rows: Dict[str, list], stats: Counter) -> None:
        words: List[int] = []
        mentions: List[Mention] = []
        for i, (piece_ids, piece_mentions) in enumerate(pieces):
            offset = len(words)
            words.extend(piece_ids)
            mentions.extend((s + offset, e + offset, entity_id) for s, e, entity_id in piece_mentions)
            if i == len(pieces) - 1 or len(words) + len(pieces[i + 1][0]) > self.options.max_num_tokens:
                self._emit(words, mentions, page_id, rows, stats)
                words, mentions = [], []

    def _emit(self, words: List[int], mentions: List[Mention], page_id: int, rows: Dict[str, list], stats: Counter):
        options = self.options
        if not mentions and not options.include_sequences_without_entities:
            stats["sequences_without_entities"] += 1
            stats["words_in_sequences_without_entities"] += len(words)
            return
        if len(mentions) > options.max_entities:
            stats["entities_over_max_entities"] += len(mentions) - options.max_entities
            mentions = mentions[: options.max_entities]
        positions = []
        for start, end, _ in mentions:
            if end - start > options.max_mention_length:
                stats["mentions_truncated_to_max_mention_length"] += 1
            positions.append(list(range(start, min(end, start + options.max_mention_length))))
        rows["word_ids"].append(words)
        rows["entity_ids"].append([entity_id for _, _, entity_id in mentions])
        rows["entity_position_ids"].append(positions)
        rows["page_id"].append(page_id)
        stats["sequences"] += 1
        stats["words"] += len(words)
        stats["entities"] += len(mentions)
        if self.unk_id is not None:
            stats["unk_entities"] += sum(1 for _, _, entity_id in mentions if entity_id == self.unk_id)


# --- worker processes ------------------------------------------------------------------------------------------

_processor: Optional[PageProcessor] = None


def init_worker(
    tokenizer_dir: str, vocab: EntityVocab, index: TitleIndex, namespaces: Namespaces, options: CorpusOptions
):
    global _processor
    # Each worker is one core's worth: the tokenizer's own thread pool would only compete with the others.
    os.environ["TOKENIZERS_PARALLELISM"] = "false"
    from luke_allennlp.resources.tokenization import load_fast_tokenizer

    _processor = PageProcessor(load_fast_tokenizer(tokenizer_dir), vocab, index, namespaces, options)


def process_batch(pages: List[WikiPage]) -> Tuple[Dict[str, list], Counter]:
    assert _processor is not None, "worker not initialised"
    rows: Dict[str, list] = {column: [] for column in COLUMNS}
    stats: Counter = Counter()
    for page in pages:
        stats["pages"] += 1
        page_rows = _processor.process(page, stats)
        if page_rows["word_ids"]:
            stats["pages_with_sequences"] += 1
        for column in COLUMNS:
            rows[column].extend(page_rows[column])
    return rows, stats
