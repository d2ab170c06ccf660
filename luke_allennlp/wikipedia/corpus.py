"""
LUKE's pretraining corpus from a Wikipedia dump: subword sequences with the entities linked in them, written as the
corpus directory that `luke_allennlp.resources.pretraining_corpus` defines and reads.

Two streaming passes over the dump. The first collects titles and redirects (a `TitleIndex` on disk). In the second,
worker processes turn batches of articles into rows (`luke_allennlp.wikipedia.corpus_rows`: text, entities,
sentences, subwords, sequences), in dump order whatever their number.

Everything skipped, dropped or cut is counted in `metadata.json`; `links` (every `[[...]]` of the articles
read) = `entities` + the link counts in `skipped` - `adjusted.mentions_split_at_sequence_boundary` (a split
mention is in two sequences).

The main process streams the dump and writes rows to Arrow as they come (memory stays flat), then saves the
dataset with `save_to_disk`. Rows: `word_ids`, `entity_ids`, `entity_position_ids` (one list of positions in
`word_ids` per entity), `page_id` (MediaWiki's page id, not an entity id as in the original: it identifies the
source page whether or not it is in the vocabulary).
"""

import itertools
import json
import logging
import os
import shutil
import time
from collections import Counter
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

from luke_allennlp.resources.entity_vocab import EntityVocab
from luke_allennlp.resources.output import lock_output, replaced_output
from luke_allennlp.resources.pretraining_corpus import (
    COLUMNS,
    ENTITY_VOCAB_FILE,
    METADATA_FILE,
    TOKENIZER_DIR,
    corpus_features,
    save_rows,
    write_metadata,
)
from luke_allennlp.resources.sqlite import connect
from luke_allennlp.wikipedia.corpus_rows import PLACE_SKIPS, CorpusOptions, init_worker, process_batch
from luke_allennlp.wikipedia.dump import WikiDump
from luke_allennlp.wikipedia.parallel import ordered_map, page_batches
from luke_allennlp.wikipedia.parts import TitleIndex, TitleWriter, sum_counts

logger = logging.getLogger(__name__)


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
        A fast tokenizer: a directory or a hub name (`luke_allennlp.resources.tokenization.load_fast_tokenizer`).
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
            return _build(
                dump_path, tokenizer_name, entity_vocab_path, Path(building), options, num_workers, max_pages, titles
            )


def _check_empty(out: Path) -> None:
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise FileExistsError(f"{out}: the output directory exists and is not empty")


def _build(
    dump_path,
    tokenizer_name,
    entity_vocab_path,
    out: Path,
    options: CorpusOptions,
    num_workers: int,
    max_pages: Optional[int],
    titles=None,
) -> Dict[str, Any]:
    from datasets import Dataset
    from datasets.arrow_writer import ArrowWriter

    from luke_allennlp.resources.tokenization import load_fast_tokenizer

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
    logger.info(
        "%d articles, %d redirects (%d in loops)", index.num_articles, index.stats.redirects, index.stats.redirect_loops
    )
    options = replace(options, language=options.language or first_pass.language)
    if options.language and vocab.language not in (None, options.language):
        # A format without languages (TSV, unprefixed JSON) was read as English: its titles are the dump's.
        relabelled = EntityVocab.from_file(entity_vocab_path, language=options.language)
        if relabelled.language == options.language:
            vocab = relabelled
        else:
            logger.warning(
                "%s: the entity vocabulary's titles are of language %r, the dump's is %r",
                entity_vocab_path,
                vocab.language,
                options.language,
            )
    _check_language(vocab, entity_vocab_path, options.language)
    vocab.save_jsonl(out / ENTITY_VOCAB_FILE)

    articles = (page for page in WikiDump(dump_path) if page.is_article and page.text.strip())
    batches = page_batches(itertools.islice(articles, max_pages))  # (islice(..., None): all of them)

    stats: Counter = Counter()
    arrow_path = building / "corpus.arrow"
    initargs = (str(out / TOKENIZER_DIR), vocab, index, first_pass.namespaces, options)
    last_log = time.time()
    with ArrowWriter(features=corpus_features(), path=str(arrow_path)) as writer:
        for rows, batch_stats in ordered_map(process_batch, batches, num_workers, init_worker, initargs):
            if rows["word_ids"]:
                writer.write_batch(rows)
            stats.update(batch_stats)
            if time.time() - last_log > 30:
                last_log = time.time()
                logger.info(
                    "%d pages, %d sequences, %.1f pages/s",
                    stats["pages"],
                    stats["sequences"],
                    stats["pages"] / (last_log - started),
                )
        writer.finalize()
    dataset = Dataset.from_file(str(arrow_path))
    save_rows(dataset, out)
    del dataset
    index.close()
    shutil.rmtree(building)

    metadata = _metadata(
        dump_path,
        tokenizer_name,
        tokenizer,
        entity_vocab_path,
        vocab,
        options,
        first_pass,
        index,
        stats,
        max_pages,
        num_workers,
        time.time() - started,
    )
    write_metadata(out, metadata)
    logger.info(
        "corpus: %d sequences, %d words, %d entities from %d pages in %.0fs",
        metadata["sequences"],
        metadata["words"],
        metadata["entities"],
        metadata["pages"],
        metadata["seconds"],
    )
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
    from luke_allennlp.modeling.checkpoint_files import checkpoint_file

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


_LINK_SKIPS = (
    "links_to_missing_pages",
    "links_through_redirect_loops",
    "links_outside_vocabulary",
    "links_across_sentences",
    "links_in_short_sentences",
    "mentions_without_subwords",
    "entities_over_max_entities",
    "non_entity_links",
    *PLACE_SKIPS.values(),
)
_ADJUSTMENTS = (
    "sentences_joined_at_mentions",
    "long_sentences_split",
    "mentions_split_at_sequence_boundary",
    "mention_boundaries_inside_subwords",
    "mentions_truncated_to_max_mention_length",
)


def _outside_text(stats: Counter) -> Dict[str, Dict[str, int]]:
    """Place -> kind -> how many links (kind "entity": links to articles, as shown in infoboxes or tables)."""
    places: Dict[str, Dict[str, int]] = {}
    for name in sorted(stats):
        if name.startswith("outside:"):
            _, place, kind = name.split(":")
            places.setdefault(place, {})[kind] = stats[name]
    return places


def _metadata(
    dump_path,
    tokenizer_name,
    tokenizer,
    entity_vocab_path,
    vocab,
    options,
    first_pass,
    index,
    stats: Counter,
    max_pages,
    num_workers,
    seconds,
) -> Dict[str, Any]:
    dump_stats = first_pass.stats
    skipped = {
        "redirect_pages": dump_stats.redirect_pages,
        "non_article_pages": dump_stats.non_article_pages,
        "pages_without_title": dump_stats.pages_without_title,
        "pages_without_text": dump_stats.pages_without_text,
        "pages_empty_after_cleaning": stats["pages_empty_after_cleaning"],
        "pages_after_max_pages": (dump_stats.article_pages - dump_stats.pages_without_text - stats["pages"])
        if max_pages is not None
        else 0,
        "duplicate_titles": index.stats.duplicate_titles,
        "dump_errors": len(dump_stats.errors),
        "headings": stats["headings"],
        "short_sentences": stats["short_sentences"],
        "sequences_without_entities": stats["sequences_without_entities"],
        "words_in_sequences_without_entities": stats["words_in_sequences_without_entities"],
        **{name: stats[name] for name in _LINK_SKIPS},
    }
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
_ADDED_IN_PARTS = (
    "pages",
    "pages_with_sequences",
    "sentences",
    "sequences",
    "words",
    "entities",
    "unk_entities",
    "links",
    "skipped",
    "adjusted",
    "unk_links",
    "markup_links",
    "links_outside_text",
    "dump_stats",
    "seconds",
)


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

    save_rows(concatenate_datasets([load_from_disk(str(part)) for part in parts]), out)
    shutil.copytree(parts[0] / TOKENIZER_DIR, out / TOKENIZER_DIR)
    shutil.copyfile(parts[0] / ENTITY_VOCAB_FILE, out / ENTITY_VOCAB_FILE)
    merged = {
        key: sum_counts([meta[key] for meta in metadata]) if key in _ADDED_IN_PARTS else metadata[0][key]
        for key in metadata[0]
    }
    merged["skipped"]["duplicate_titles"] = metadata[0]["skipped"]["duplicate_titles"]  # (the merged index's)
    merged["dump"] = [meta["dump"] for meta in metadata]
    write_metadata(out, merged)
    return merged
