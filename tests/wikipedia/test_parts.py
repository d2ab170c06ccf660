"""Builds over dump parts merge into exactly what one run over the whole dump gives, for the three builders."""

import bz2
import pickle
import sqlite3
from pathlib import Path

import pytest

from luke_allennlp.resources.sqlite import connect, open_readonly
from luke_allennlp.testing import save_roberta_tokenizer, shared_data_dir
from luke_allennlp.wikipedia.dump import WikiDump, WikiPage
from luke_allennlp.wikipedia.parts import (
    TitleIndex,
    TitleWriter,
    _pages_of,
    lookup_sql,
    merge_titles,
    split_dump,
    write_bytes,
)
from luke_allennlp.wikipedia.redirects import WikiIndex

DUMP = "enwiki-pages-articles-shortened-206.xml.bz2"
_CUTS: dict = {}


def cut_dump(tmp_path_factory, pages, parts: int = 3):
    """The real dump's first `pages` pages (all 206 with None) as one dump and cut into `parts` parts."""
    if (pages, parts) not in _CUTS:
        directory = tmp_path_factory.mktemp(f"cut-{pages}")
        source = shared_data_dir() / "wikipedia" / DUMP
        head, all_pages, tail = _pages_of(bz2.decompress(source.read_bytes()), str(source))
        whole = directory / "enwiki-whole.xml"
        write_bytes(whole, head + b"".join(all_pages[:pages]) + tail)
        paths = [directory / f"enwiki-part{i}.xml.bz2" for i in range(parts)]
        counts = split_dump(whole, paths)
        assert sum(counts) == len(all_pages[:pages]) and min(counts) > 0
        _CUTS[pages, parts] = whole, paths
    return _CUTS[pages, parts]


SIZES = [40, pytest.param(None, marks=pytest.mark.slow)]  # (None: the whole dump)


def test_split_dump_keeps_every_page_and_the_siteinfo(tmp_path_factory):
    whole, parts = cut_dump(tmp_path_factory, 40)
    pages = [page for part in parts for page in WikiDump(part)]
    assert [(p.title, p.redirect, p.text) for p in pages] == [(p.title, p.redirect, p.text) for p in WikiDump(whole)]
    assert all(WikiDump(part).language == "en" for part in parts)
    dump, original = WikiDump(parts[2]), WikiDump(whole)
    list(dump), list(original)
    assert dump.dbname == "enwiki" and dump.namespaces.names == original.namespaces.names


def test_redirects_resolve_across_parts_as_in_one_pass(tmp_path):
    """Chains, loops and their feeders, self-redirects, missing targets and titles read twice (the later page wins),
    across parts: the SQL index answers as `WikiIndex` over the whole dump."""
    parts = [
        [
            ("A", None),
            ("B", None),
            ("R1", "A"),
            ("R2", "R1"),
            ("L1", "L2"),
            ("L2", "L1"),
            ("F", "L1"),
            ("M", "Nowhere"),
            ("S", "S"),
            ("R3", "X"),
            ("C", None),
            ("C", "B"),
        ],
        [("X", None), ("A", "B"), ("R4", "R2"), ("E", ""), ("C", None)],
    ]
    paths = []
    for i, titles in enumerate(parts):
        connection = connect(tmp_path / f"part{i}.sqlite", create=True)
        writer = TitleWriter(connection)
        for title, redirect in titles:
            writer.add(WikiPage(title, -1, 0, "", redirect))
        writer.add(WikiPage("Talk:A", -1, 1, "", None))  # other namespaces are not titles of the index
        writer.flush()
        connection.close()
        paths.append(tmp_path / f"part{i}.sqlite")
    index = WikiIndex.from_pages(WikiPage(t, -1, 0, "", r) for titles in parts for t, r in titles)
    connection = connect(tmp_path / "merged.sqlite", create=True)
    stats = merge_titles(connection, paths)
    assert stats == index.stats and (stats.redirect_loops, stats.duplicate_titles) == (4, 3)
    queries = sorted({t for titles in parts for t, _ in titles} | {"Nowhere", "Unknown", ""})
    connection.execute("CREATE TABLE q(t TEXT)")
    connection.executemany("INSERT INTO q VALUES (?)", [(t,) for t in queries])
    found = connection.execute(f"SELECT q.t, {lookup_sql('q.t')} FROM q LEFT JOIN redirect_ends r ON r.title = q.t")
    assert {t: (article, status) for t, article, status in found} == {t: index.lookup(t) for t in queries}
    # The same index on disk, as the corpus and the vocabulary builders look links up (in any process)
    on_disk = TitleIndex.build(paths, tmp_path / "index.sqlite")
    assert (on_disk.stats, on_disk.num_articles) == (index.stats, len(index.articles))
    assert {t: on_disk.lookup(t) for t in queries} == {t: index.lookup(t) for t in queries}
    copy = pickle.loads(pickle.dumps(on_disk))
    assert copy._connection is None and [copy.resolve(t) for t in queries] == [index.resolve(t) for t in queries]


def _without(summary: dict, *keys: str) -> dict:
    return {key: value for key, value in summary.items() if key not in keys}


@pytest.mark.parametrize("pages", SIZES)
@pytest.mark.parametrize("include_missing_pages", [False, True])
def test_entity_vocab_from_parts(tmp_path_factory, tmp_path, pages, include_missing_pages):
    from luke_allennlp.wikipedia.entity_vocab_builder import (
        build_entity_vocab,
        count_part_links,
        merge_entity_vocab_parts,
    )

    whole, parts = cut_dump(tmp_path_factory, pages)
    single, single_summary = build_entity_vocab(whole, vocab_size=60, include_missing_pages=include_missing_pages)
    files = []
    for i, part in enumerate(parts):
        count_part_links(part, tmp_path / f"{i}.sqlite")
        files.append(tmp_path / f"{i}.sqlite")
    merged, summary = merge_entity_vocab_parts(files, vocab_size=60, include_missing_pages=include_missing_pages)
    assert [(t, merged.count(i)) for i, t in enumerate(merged)] == [(t, single.count(i)) for i, t in enumerate(single)]
    assert len(single) == 60 or not include_missing_pages
    assert merged.language == single.language == "en"
    assert _without(summary, "dump") == _without(single_summary, "dump") and summary["dump"] == [str(p) for p in parts]


def test_inline_interlanguage_links_from_parts_of_the_real_dump(tmp_path_factory, tmp_path):
    """The part files keep the articles' [[fr:...]] links: the parts merged give the one pass's links and counts."""
    from luke_allennlp.wikipedia.entity_vocab_builder import count_dump_links, count_part_links, count_parts_links

    whole, parts = cut_dump(tmp_path_factory, 90)  # (page 89, "Agricultural science", has 12 of them)
    single = count_dump_links(whole, include_missing_pages=True)
    for i, part in enumerate(parts):
        count_part_links(part, tmp_path / f"{i}.sqlite")
    merged = count_parts_links([tmp_path / f"{i}.sqlite" for i in range(len(parts))], include_missing_pages=True)
    assert merged.interlanguage == single.interlanguage and len(single.interlanguage) == 12
    assert ("Agricultural science", "fr", "Agronomie") in single.interlanguage
    assert merged.counts == single.counts and _without(merged.summary, "dump") == _without(single.summary, "dump")
    assert (
        (merged.language, merged.namespaces.case) == (single.language, single.namespaces.case) == ("en", "first-letter")
    )


def test_multilingual_entity_vocab_from_parts(tmp_path):
    """mLUKE's vocabulary from each language's dump in parts (their part files listed in dump order, languages one
    after the other) is the one of the whole dumps: the same entities, merges by Wikidata and inline links."""
    from luke_allennlp.wikipedia.entity_vocab_builder import count_part_links
    from luke_allennlp.wikipedia.multilingual_entity_vocab import build_multilingual_entity_vocab, group_parts
    from tests.wikipedia.crafted import write_multilingual_dumps

    dumps, wikidata = write_multilingual_dumps(tmp_path)
    files = []
    for dump, language in zip(dumps, ("en", "de", "ja")):
        pieces = [tmp_path / f"{language}wiki-part{i}.xml" for i in range(2)]
        assert min(split_dump(dump, pieces)) > 0
        for i, piece in enumerate(pieces):
            count_part_links(piece, tmp_path / f"{language}{i}.sqlite")
            files.append(tmp_path / f"{language}{i}.sqlite")
    grouped = group_parts(files)
    assert grouped == [[str(f) for f in files[i : i + 2]] for i in (0, 2, 4)]
    single, single_summary = build_multilingual_entity_vocab(dumps, wikidata)
    merged, summary = build_multilingual_entity_vocab(grouped, wikidata)
    single.save_jsonl(tmp_path / "single.jsonl")
    merged.save_jsonl(tmp_path / "merged.jsonl")
    assert (tmp_path / "merged.jsonl").read_text() == (tmp_path / "single.jsonl").read_text() and len(single) == 9
    assert summary["merge"] == single_summary["merge"] and summary["merge"]["inline_links_joined"] == 1
    assert [_without(s, "dump") for s in summary["inputs"]] == [_without(s, "dump") for s in single_summary["inputs"]]


def _mention_parts(directory: Path, parts, **options) -> Path:
    from luke_allennlp.wikipedia.mention_dictionary import count_name_occurrences, merge_mention_parts
    from luke_allennlp.wikipedia.mention_links import collect_mention_links, merge_mention_links

    links = [directory / f"links{i}.sqlite" for i in range(len(parts))]
    for part, path in zip(parts, links):
        collect_mention_links(part, path)
    merge_mention_links(links, directory / "names.sqlite")
    occurrences = [directory / f"occurrences{i}.sqlite" for i in range(len(parts))]
    for part, path in zip(parts, occurrences):
        count_name_occurrences(part, directory / "names.sqlite", path)
    merge_mention_parts(directory / "names.sqlite", occurrences, directory / "mentions.sqlite", **options)
    return directory / "mentions.sqlite"


@pytest.mark.parametrize("pages", SIZES)
def test_mention_dictionary_from_parts(tmp_path_factory, tmp_path, pages):
    from luke_allennlp.resources.mentions.json_dictionary import MentionDictionary
    from luke_allennlp.resources.mentions.store import MentionStore
    from luke_allennlp.wikipedia.mention_dictionary import build_mention_store

    whole, parts = cut_dump(tmp_path_factory, pages)
    options = {"min_link_probability": 0.05, "include_missing_pages": True}
    single_stats = build_mention_store(whole, tmp_path / "single.sqlite", **options)
    merged = MentionDictionary.from_store(MentionStore(_mention_parts(tmp_path, parts, **options)))
    single = MentionDictionary.from_store(MentionStore(tmp_path / "single.sqlite"))
    assert merged.pages == single.pages and len(single.pages) >= 3
    assert merged._link_probability == single._link_probability and merged.entities == single.entities
    assert merged.stats == single.stats == single_stats and single_stats["redirects"]["redirects"] > 0
    assert single.dump == str(whole) and merged.dump == " ".join(map(str, parts))


def test_a_names_file_without_the_cjk_keys_is_refused_with_the_stage_to_rerun(tmp_path_factory, tmp_path):
    """A names file written before occurrences were counted at kana and ideographs: one line naming it and the stage."""
    import sqlite3

    from luke_allennlp.wikipedia.mention_dictionary import count_name_occurrences

    _, parts = cut_dump(tmp_path_factory, SIZES[0])
    _mention_parts(tmp_path, parts[:1])
    connection = sqlite3.connect(tmp_path / "names.sqlite")
    connection.executescript(
        "DROP INDEX names_cjk_first_token; ALTER TABLE names DROP COLUMN cjk_first_token; "
        "ALTER TABLE names DROP COLUMN cjk_n_tokens;"
    )
    connection.close()
    with pytest.raises(ValueError, match=r"names\.sqlite: a names file of an older version .* run the stage `names`"):
        count_name_occurrences(parts[0], tmp_path / "names.sqlite", tmp_path / "again.sqlite")


def test_part_files_built_before_names_kept_their_combining_marks_are_refused_with_the_stage_to_rerun(
    tmp_path_factory, tmp_path
):
    import sqlite3

    from luke_allennlp.wikipedia.mention_dictionary import count_name_occurrences, merge_mention_parts

    _, parts = cut_dump(tmp_path_factory, SIZES[0])
    _mention_parts(tmp_path, parts[:1])
    for name in ("occurrences0", "names"):
        connection = sqlite3.connect(tmp_path / f"{name}.sqlite")
        connection.execute("DELETE FROM meta WHERE key = 'name_tokens'")
        connection.commit()
        connection.close()
        stage = name.rstrip("0")
        with pytest.raises(
            ValueError,
            match=rf"{name}\.sqlite: a part file built before names kept their combining "
            rf"marks \(name tokens 1, now 2\): run the stage `{stage}` again",
        ):
            merge_mention_parts(tmp_path / "names.sqlite", [tmp_path / "occurrences0.sqlite"], tmp_path / "out.sqlite")
    with pytest.raises(ValueError, match=r"names\.sqlite: a part file built before .* run the stage `names` again"):
        count_name_occurrences(parts[0], tmp_path / "names.sqlite", tmp_path / "again.sqlite")


@pytest.mark.parametrize("pages", SIZES)
def test_pretraining_corpus_from_parts(tmp_path_factory, tmp_path, pages):
    from datasets import load_from_disk

    from luke_allennlp.wikipedia.corpus import build_pretraining_corpus, merge_pretraining_corpus
    from luke_allennlp.wikipedia.corpus_rows import CorpusOptions
    from luke_allennlp.wikipedia.entity_vocab_builder import build_entity_vocab, count_part_links

    whole, parts = cut_dump(tmp_path_factory, pages)
    save_roberta_tokenizer(tmp_path / "tokenizer")
    vocab, _ = build_entity_vocab(whole, include_missing_pages=True)
    vocab.save_jsonl(tmp_path / "vocab.jsonl")
    options = CorpusOptions(max_seq_length=64, unknown_entities="unk")
    args = (str(tmp_path / "tokenizer"), tmp_path / "vocab.jsonl")
    single = build_pretraining_corpus(whole, *args, tmp_path / "single", options)
    titles = []
    for i, part in enumerate(parts):  # (any builder's part files carry the titles)
        count_part_links(part, tmp_path / f"{i}.sqlite")
        titles.append(tmp_path / f"{i}.sqlite")
    index = TitleIndex.build(titles, tmp_path / "titles.sqlite")  # (merged once: what `--stage titles` writes)
    for i, part in enumerate(parts):  # (the parts' files or the one index: the same)
        build_pretraining_corpus(part, *args, tmp_path / f"corpus{i}", options, titles=[index.path] if i else titles)
    merged = merge_pretraining_corpus([tmp_path / f"corpus{i}" for i in range(len(parts))], tmp_path / "merged")
    assert load_from_disk(str(tmp_path / "merged")).to_dict() == load_from_disk(str(tmp_path / "single")).to_dict()
    ignored = ("dump", "seconds")
    assert _without(merged, *ignored) == _without(single, *ignored) and single["sequences"] > 10
    assert single["redirects"]["redirects"] > 0 and merged["dump"] == [str(p) for p in parts]
    assert (tmp_path / "merged" / "tokenizer").is_dir() and (tmp_path / "merged" / "entity_vocab.jsonl").is_file()


def test_read_only_connections_and_bad_input(tmp_path):
    connection = connect(tmp_path / "x.sqlite", create=True)
    connection.execute("CREATE TABLE t(x)")
    connection.close()
    readonly = open_readonly(tmp_path / "x.sqlite")
    with pytest.raises(sqlite3.OperationalError):
        readonly.execute("INSERT INTO t VALUES (1)")
    with pytest.raises(ValueError, match="not a MediaWiki XML export with a <siteinfo>"):
        split_dump(tmp_path / "x.sqlite", [tmp_path / "p.xml"])


def test_counts_spilled_in_many_runs_add_up_the_same(tmp_path_factory, tmp_path, monkeypatch):
    """With a spill after every few entries (runs of counts on disk, added up by SQL) the dictionary is the same."""
    from luke_allennlp.resources.mentions.json_dictionary import MentionDictionary
    from luke_allennlp.resources.mentions.store import MentionStore
    from luke_allennlp.wikipedia import parts
    from luke_allennlp.wikipedia.mention_dictionary import build_mention_store

    whole, _ = cut_dump(tmp_path_factory, 40)
    build_mention_store(whole, tmp_path / "memory.sqlite", include_missing_pages=True)
    monkeypatch.setattr(parts, "SPILL_ENTRIES", 7)
    build_mention_store(whole, tmp_path / "spilled.sqlite", include_missing_pages=True)
    spilled, memory = (
        MentionDictionary.from_store(MentionStore(tmp_path / f"{name}.sqlite")) for name in ("spilled", "memory")
    )
    assert (spilled.pages, spilled._link_probability, spilled.entities, spilled.stats) == (
        memory.pages,
        memory._link_probability,
        memory.entities,
        memory.stats,
    )
    assert len(memory.entities) > 100
