"""
LUKE's pretraining corpus from a Wikipedia dump: subword sequences with the entities linked in them.

Two streaming passes over the dump. The first collects titles and redirects (a `TitleIndex` on disk). In the second,
worker processes turn batches of articles into rows, in dump order whatever their number:

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
Everything skipped, dropped or cut is counted in `metadata.json`; `links` (every `[[...]]` of the articles
read) = `entities` + the link counts in `skipped` - `adjusted.mentions_split_at_sequence_boundary` (a split
mention is in two sequences).

The main process streams the dump and writes rows to Arrow as they come (memory stays flat), then saves the
dataset with `save_to_disk`. Rows: `word_ids`, `entity_ids`, `entity_position_ids` (one list of positions in
`word_ids` per entity), `page_id` (MediaWiki's page id, not an entity id as in the original: it identifies the
source page whether or not it is in the vocabulary).
"""

import bisect
import itertools
import json
import logging
import os
import shutil
import time
from collections import Counter
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence, Tuple

from luke_allennlp.data.entity_vocab import EntityVocab
from luke_allennlp.data.pretraining_corpus import COLUMNS, ENTITY_VOCAB_FILE, METADATA_FILE, TOKENIZER_DIR
from luke_allennlp.resources.output import lock_output, replaced_output
from luke_allennlp.wikipedia.dump import WikiDump, WikiPage
from luke_allennlp.wikipedia.markup import clean_wikitext
from luke_allennlp.wikipedia.parallel import ordered_map, page_batches
from luke_allennlp.wikipedia.parts import TitleIndex, TitleWriter, connect, sum_counts
from luke_allennlp.wikipedia.redirects import ARTICLE, LOOP, MISSING
from luke_allennlp.wikipedia.sentences import sentence_splitter
from luke_allennlp.wikipedia.titles import Namespaces

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerFast

logger = logging.getLogger(__name__)

# Why a link found no entity.
_NO_ENTITY = {
    ARTICLE: "links_outside_vocabulary",
    LOOP: "links_through_redirect_loops",
    MISSING: "links_to_missing_pages",
}
# Links outside the running text, by place (markup.PLACES).
_PLACE_SKIPS = {"heading": "links_in_headings", "template": "links_in_templates", "table": "links_in_tables",
                "reference": "links_in_references", "media": "links_in_image_captions", "comment": "links_in_comments",
                "nowiki": "links_in_nowiki", "other_element": "links_in_other_elements"}  # fmt: skip

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
        self, tokenizer: "PreTrainedTokenizerFast", vocab: EntityVocab, index: TitleIndex, namespaces: Namespaces,
        options: CorpusOptions,
    ) -> None:  # fmt: skip
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
            stats[_PLACE_SKIPS[place]] += count
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
            [text[start:end] for start, end in sentences], add_special_tokens=False, return_offsets_mapping=True,
            return_attention_mask=False, return_token_type_ids=False,
        )  # fmt: skip
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


def _init_worker(
    tokenizer_dir: str, vocab: EntityVocab, index: TitleIndex, namespaces: Namespaces, options: CorpusOptions
):
    global _processor
    # Each worker is one core's worth: the tokenizer's own thread pool would only compete with the others.
    os.environ["TOKENIZERS_PARALLELISM"] = "false"
    from luke_allennlp.data.tokenization import load_fast_tokenizer

    _processor = PageProcessor(load_fast_tokenizer(tokenizer_dir), vocab, index, namespaces, options)


def _process_batch(pages: List[WikiPage]) -> Tuple[Dict[str, list], Counter]:
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


# --- the corpus --------------------------------------------------------------------------------------------------


def corpus_features():
    from datasets import Features, Sequence, Value

    return Features({
        "word_ids": Sequence(Value("int32")),
        "entity_ids": Sequence(Value("int32")),
        "entity_position_ids": Sequence(Sequence(Value("int32"))),
        "page_id": Value("int64"),
    })  # fmt: skip


def build_pretraining_corpus(
    dump_path: "os.PathLike[str] | str",
    tokenizer_name: str,
    entity_vocab_path: "os.PathLike[str] | str",
    out_dir: "os.PathLike[str] | str",
    options: CorpusOptions = CorpusOptions(),
    num_workers: int = 1,
    max_pages: Optional[int] = None,
    titles: Optional[Sequence["os.PathLike[str] | str"]] = None,
) -> Dict[str, Any]:
    """
    Builds the corpus in `out_dir` (which must not exist or be empty) and returns its metadata.

    # Parameters

    dump_path : `PathLike`
        A `pages-articles` XML dump (plain, `.bz2` or `.gz`).
    tokenizer_name : `str`
        A fast tokenizer: a directory or a hub name (`luke_allennlp.data.tokenization.load_fast_tokenizer`).
    entity_vocab_path : `PathLike`
        The entity vocabulary (LUKE JSONL or TSV, or transformers' `entity_vocab.json`).
    out_dir : `PathLike`
        Where the dataset, `metadata.json`, `tokenizer/` and `entity_vocab.jsonl` go.
    options : `CorpusOptions`
        The limits, and what to do with links outside the vocabulary.
    num_workers : `int`, optional (default = `1`)
        Processes turning pages into rows (1: this process).
    max_pages : `Optional[int]`, optional (default = `None`)
        Stop after this many articles (redirects are still read from the whole dump).
    titles : `Optional[Sequence[PathLike]]`, optional (default = `None`)
        For a dump part: the part files (`luke_allennlp.wikipedia.parts`) of every part of the dump, in order, whose
        titles and redirects resolve the links (a link may lead to a page of another part), or the one title index
        merged from them (`TitleIndex.build`, `build-entity-vocab --stage titles`), which spares each part the
        merge; the parts' corpora are then joined by `merge_pretraining_corpus`. By default the dump's own titles.
    """
    out = Path(out_dir)
    # One builder per output (`OUT_DIR.lock`); built in a directory beside it, renamed into place when complete: a
    # failure leaves no half-built corpus, and removes nothing but that directory.
    with lock_output(out):
        _check_empty(out)
        with replaced_output(out, directory=True) as building:
            return _build(dump_path, tokenizer_name, entity_vocab_path, Path(building), options, num_workers,
                          max_pages, titles)  # fmt: skip


def _check_empty(out: Path) -> None:
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise FileExistsError(f"{out}: the output directory exists and is not empty")


def _build(dump_path, tokenizer_name, entity_vocab_path, out: Path, options: CorpusOptions, num_workers: int,
           max_pages: Optional[int], titles=None) -> Dict[str, Any]:  # fmt: skip
    from datasets import Dataset
    from datasets.arrow_writer import ArrowWriter

    from luke_allennlp.data.tokenization import load_fast_tokenizer

    started = time.time()
    vocab = EntityVocab.from_file(entity_vocab_path)
    if options.unknown_entities == "unk" and EntityVocab.UNK not in vocab:
        raise ValueError(f"{entity_vocab_path}: no {EntityVocab.UNK} entity, needed by unknown_entities='unk'")
    tokenizer = load_fast_tokenizer(str(tokenizer_name))
    out.mkdir(parents=True, exist_ok=True)
    _save_tokenizer(tokenizer, str(tokenizer_name), out / TOKENIZER_DIR)

    building = out / ".building"
    building.mkdir()
    logger.info("%s: reading titles and redirects", dump_path)
    first_pass = WikiDump(dump_path)
    index = _title_index(first_pass, titles, building)
    logger.info("%d articles, %d redirects (%d in loops)", index.num_articles, index.stats.redirects,
                index.stats.redirect_loops)  # fmt: skip
    options = replace(options, language=options.language or first_pass.language)
    if options.language and vocab.language not in (None, options.language):
        # A format without languages (TSV, unprefixed JSON) was read as English: its titles are the dump's.
        relabelled = EntityVocab.from_file(entity_vocab_path, language=options.language)
        if relabelled.language == options.language:
            vocab = relabelled
        else:
            logger.warning("%s: the entity vocabulary's titles are of language %r, the dump's is %r",
                           entity_vocab_path, vocab.language, options.language)  # fmt: skip
    _check_language(vocab, entity_vocab_path, options.language)
    vocab.save_jsonl(out / ENTITY_VOCAB_FILE)

    articles = (page for page in WikiDump(dump_path) if page.is_article and page.text.strip())
    batches = page_batches(itertools.islice(articles, max_pages))  # (islice(..., None): all of them)

    stats: Counter = Counter()
    arrow_path = building / "corpus.arrow"
    initargs = (str(out / TOKENIZER_DIR), vocab, index, first_pass.namespaces, options)
    last_log = time.time()
    with ArrowWriter(features=corpus_features(), path=str(arrow_path)) as writer:
        for rows, batch_stats in ordered_map(_process_batch, batches, num_workers, _init_worker, initargs):
            if rows["word_ids"]:
                writer.write_batch(rows)
            stats.update(batch_stats)
            if time.time() - last_log > 30:
                last_log = time.time()
                logger.info("%d pages, %d sequences, %.1f pages/s", stats["pages"], stats["sequences"],
                            stats["pages"] / (last_log - started))  # fmt: skip
        writer.finalize()
    dataset = Dataset.from_file(str(arrow_path))
    # (save_to_disk gives an empty dataset no shard at all, which load_from_disk cannot read)
    dataset.save_to_disk(str(out), num_shards=None if dataset.num_rows else 1)
    del dataset
    index.close()
    shutil.rmtree(building)

    metadata = _metadata(dump_path, tokenizer_name, tokenizer, entity_vocab_path, vocab, options, first_pass,
                         index, stats, max_pages, num_workers, time.time() - started)  # fmt: skip
    with open(out / METADATA_FILE, "w", encoding="utf-8") as f:
        json.dump(metadata, f, indent=2, ensure_ascii=False)
        f.write("\n")
    logger.info("corpus: %d sequences, %d words, %d entities from %d pages in %.0fs", metadata["sequences"],
                metadata["words"], metadata["entities"], metadata["pages"], metadata["seconds"])  # fmt: skip
    return metadata


def _title_index(dump: WikiDump, titles: Optional[Sequence["os.PathLike[str] | str"]], work: Path) -> TitleIndex:
    """The dump's titles and redirects (those of the part files `titles` if given) as a `TitleIndex` on disk, in
    `work`: the workers look links up there, not in a copy of every title in memory."""
    if titles is not None:
        for _ in dump:  # (the pass still reads the part's siteinfo and counts its pages)
            pass
        if len(titles) == 1 and TitleIndex.is_index(titles[0]):  # (merged once: `build-entity-vocab --stage titles`)
            return TitleIndex(titles[0])
        return TitleIndex.build(titles, work / "titles-index.sqlite")
    connection = connect(work / "titles.sqlite", create=True)
    writer = TitleWriter(connection)
    for page in dump:
        writer.add(page)
    writer.flush()
    connection.close()
    return TitleIndex.build([work / "titles.sqlite"], work / "titles-index.sqlite")


# Files of a tokenizer that `save_pretrained` leaves out in transformers 5 but transformers 4 (and mLUKE's
# MLukeTokenizer there) read: copied with the tokenizer, so that `export-luke` can ship them.
_EXTRA_TOKENIZER_FILES = ("sentencepiece.bpe.model",)


def _save_tokenizer(tokenizer, name: str, directory: Path) -> None:
    from luke_allennlp.modeling.loading import checkpoint_file

    tokenizer.save_pretrained(str(directory))
    for filename in _EXTRA_TOKENIZER_FILES:
        try:
            path = checkpoint_file(name, filename)
        except Exception as error:  # noqa: BLE001  (a hub tokenizer without the file in the cache, offline)
            logger.warning("%s: no %s copied with the tokenizer (%s)", name, filename, error)
            continue
        if path is not None:
            shutil.copyfile(path, directory / filename)


def _check_language(vocab: EntityVocab, path, language: Optional[str]) -> None:
    """A multilingual vocabulary needs the dump's language, and titles in it."""
    if vocab.language is not None:
        return
    languages = vocab.languages
    if language is None:
        raise ValueError(
            f"{path} is a multilingual entity vocabulary ({', '.join(languages)}) and the dump does not say its "
            "language: pass --language (e.g. --language de)"
        )
    if language not in languages:
        raise ValueError(
            f"{path} has no titles in the dump's language {language!r}, only in {', '.join(languages)}: pass the "
            "dump's language with --language"
        )


_LINK_SKIPS = ("links_to_missing_pages", "links_through_redirect_loops", "links_outside_vocabulary",
               "links_across_sentences", "links_in_short_sentences", "mentions_without_subwords",
               "entities_over_max_entities", "non_entity_links", *_PLACE_SKIPS.values())  # fmt: skip
_ADJUSTMENTS = ("sentences_joined_at_mentions", "long_sentences_split", "mentions_split_at_sequence_boundary",
                "mention_boundaries_inside_subwords", "mentions_truncated_to_max_mention_length")  # fmt: skip


def _outside_text(stats: Counter) -> Dict[str, Dict[str, int]]:
    """Place -> kind -> how many links (kind "entity": links to articles, as shown in infoboxes or tables)."""
    places: Dict[str, Dict[str, int]] = {}
    for name in sorted(stats):
        if name.startswith("outside:"):
            _, place, kind = name.split(":")
            places.setdefault(place, {})[kind] = stats[name]
    return places


def _metadata(dump_path, tokenizer_name, tokenizer, entity_vocab_path, vocab, options, first_pass, index,
              stats: Counter, max_pages, num_workers, seconds) -> Dict[str, Any]:  # fmt: skip
    dump_stats = first_pass.stats
    skipped = {
        "redirect_pages": dump_stats.redirect_pages,
        "non_article_pages": dump_stats.non_article_pages,
        "pages_without_title": dump_stats.pages_without_title,
        "pages_without_text": dump_stats.pages_without_text,
        "pages_empty_after_cleaning": stats["pages_empty_after_cleaning"],
        "pages_after_max_pages": (dump_stats.article_pages - dump_stats.pages_without_text - stats["pages"])
        if max_pages is not None else 0,
        "duplicate_titles": index.stats.duplicate_titles,
        "dump_errors": len(dump_stats.errors),
        "headings": stats["headings"],
        "short_sentences": stats["short_sentences"],
        "sequences_without_entities": stats["sequences_without_entities"],
        "words_in_sequences_without_entities": stats["words_in_sequences_without_entities"],
        **{name: stats[name] for name in _LINK_SKIPS},
    }  # fmt: skip
    return {
        "dump": os.fspath(dump_path),
        "tokenizer": {
            "name": str(tokenizer_name),
            "name_or_path": tokenizer.name_or_path,
            "class": type(tokenizer).__name__,
            "path": TOKENIZER_DIR,
        },
        "entity_vocab": ENTITY_VOCAB_FILE,
        "entity_vocab_source": os.fspath(entity_vocab_path),
        "entity_vocab_size": len(vocab),
        "columns": list(COLUMNS),
        "page_id": "MediaWiki page id of the source article",
        **asdict(options),
        "max_pages": max_pages,
        "num_workers": num_workers,
        "pages": stats["pages"],
        "pages_with_sequences": stats["pages_with_sequences"],
        "sentences": stats["sentences"],
        "sequences": stats["sequences"],
        "words": stats["words"],
        "entities": stats["entities"],
        "unk_entities": stats["unk_entities"],
        "links": stats["links"],
        "skipped": skipped,
        "adjusted": {name: stats[name] for name in _ADJUSTMENTS},
        "unk_links": {name[4:]: stats[name] for name in sorted(stats) if name.startswith("unk_links")},
        "markup_links": {name[7:-6]: stats[name] for name in sorted(stats) if name.startswith("markup_")},
        "links_outside_text": _outside_text(stats),
        "dump_stats": dump_stats.as_dict(),
        "redirects": asdict(index.stats),
        "seconds": round(seconds, 1),
    }


# Metadata added up over a dump's parts (the rest is the same in every part: options, vocabulary, the merged index).
_ADDED_IN_PARTS = ("pages", "pages_with_sequences", "sentences", "sequences", "words", "entities", "unk_entities",
                   "links", "skipped", "adjusted", "unk_links", "markup_links", "links_outside_text", "dump_stats",
                   "seconds")  # fmt: skip


def merge_pretraining_corpus(
    part_dirs: Sequence["os.PathLike[str] | str"], out_dir: "os.PathLike[str] | str"
) -> Dict[str, Any]:
    """
    The corpora of a dump's parts (built with `titles`, in dump order) joined into the corpus one run over the whole
    dump gives: rows in order, counts added up. The parts must share tokenizer, entity vocabulary and options.
    Returns the metadata.
    """
    if not part_dirs:
        raise ValueError("no corpus parts to merge")
    parts = [Path(d) for d in part_dirs]
    metadata = []
    for part in parts:
        if not (part / METADATA_FILE).is_file():
            raise FileNotFoundError(f"{part}: no {METADATA_FILE}: not a corpus directory")
        metadata.append(json.loads((part / METADATA_FILE).read_text(encoding="utf-8")))
    options = {key: metadata[0][key] for key in asdict(CorpusOptions())}
    for part, meta in zip(parts, metadata):
        if {key: meta[key] for key in options} != options or meta["entity_vocab_size"] != metadata[0][
            "entity_vocab_size"
        ]:
            raise ValueError(f"{part}: built with other options or another entity vocabulary than {parts[0]}")
        if (part / ENTITY_VOCAB_FILE).read_bytes() != (parts[0] / ENTITY_VOCAB_FILE).read_bytes():
            raise ValueError(f"{part}: another entity vocabulary than {parts[0]}'s")
    with lock_output(out_dir):  # (one writer; written beside the output and renamed into place, as the builder)
        _check_empty(Path(out_dir))
        with replaced_output(out_dir, directory=True) as building:
            return _merge(parts, metadata, Path(building))


def _merge(parts: List[Path], metadata: List[Dict[str, Any]], out: Path) -> Dict[str, Any]:
    from datasets import concatenate_datasets, load_from_disk

    dataset = concatenate_datasets([load_from_disk(str(part)) for part in parts])
    dataset.save_to_disk(str(out), num_shards=None if dataset.num_rows else 1)
    shutil.copytree(parts[0] / TOKENIZER_DIR, out / TOKENIZER_DIR)
    shutil.copyfile(parts[0] / ENTITY_VOCAB_FILE, out / ENTITY_VOCAB_FILE)
    merged = {key: sum_counts([meta[key] for meta in metadata]) if key in _ADDED_IN_PARTS else metadata[0][key]
              for key in metadata[0]}  # fmt: skip
    merged["skipped"]["duplicate_titles"] = metadata[0]["skipped"]["duplicate_titles"]  # (the merged index's)
    merged["dump"] = [meta["dump"] for meta in metadata]
    with open(out / METADATA_FILE, "w", encoding="utf-8") as f:
        json.dump(merged, f, indent=2, ensure_ascii=False)
        f.write("\n")
    return merged
