import collections
import hashlib
import itertools
import json
import logging
import shutil

import datasets
import numpy as np
import pytest
import torch
from allennlp.data import Vocabulary
from allennlp.data.data_loaders import MultiProcessDataLoader

from data_readers.luke_pretraining import LukePretrainingReader, word_start_table
from luke_allennlp.resources.entity_vocab import EntityVocab
from luke_allennlp.resources.pretraining_corpus import PretrainingCorpus
from luke_allennlp.resources.tokenization import load_fast_tokenizer
from luke_allennlp.training.trainers.loader_workers import stop_data_loader_workers
from tests.data_readers.sharding import read_in_shards


def read(corpus, **kwargs):
    return list(LukePretrainingReader(**kwargs).read(str(corpus)))


def field(instance, name):
    return instance[name].tensor.numpy()


def original_words(instance):
    """The row's subword ids before masking (labels hold the originals of masked positions)."""
    words, labels = field(instance, "word_ids"), field(instance, "masked_lm_labels")
    return np.where(labels != -100, labels, words)


@pytest.fixture(scope="module")
def corpus_rows(pretraining_corpus):
    return datasets.load_from_disk(str(pretraining_corpus))


@pytest.fixture(scope="module")
def tokenizer(pretraining_corpus):
    return load_fast_tokenizer(str(pretraining_corpus / "tokenizer"))


def test_word_masking_statistics(pretraining_corpus, corpus_rows, tokenizer):
    instances = read(pretraining_corpus, shuffle=False)
    assert len(instances) == len(corpus_rows) == 95
    starts = word_start_table(tokenizer)
    exact, labelled, total = 0, 0, 0
    kinds = collections.Counter()
    for instance, row in zip(instances, corpus_rows):
        words, labels, original = (
            field(instance, "word_ids"),
            field(instance, "masked_lm_labels"),
            original_words(instance),
        )
        assert original[1:-1].tolist() == row["word_ids"]  # <s> row </s>
        assert words[0] == tokenizer.bos_token_id and words[-1] == tokenizer.eos_token_id
        assert labels[0] == labels[-1] == -100  # special tokens are never predicted
        n = len(row["word_ids"])
        masked = np.flatnonzero(labels != -100)
        exact += len(masked) == max(1, round(0.15 * n))
        labelled, total = labelled + len(masked), total + n
        # Whole words: a masked continuation's word start is masked, and so is the next continuation.
        for i in masked:
            if not starts[original[i]]:
                assert labels[i - 1] != -100
            if i + 1 < len(original) - 1 and not starts[original[i + 1]]:
                assert labels[i + 1] != -100
        # One 80/10/10 draw per word.
        word_ids = np.cumsum(starts[original] | (np.arange(len(original)) == 0))
        for word in np.unique(word_ids[masked]):
            span = np.flatnonzero(word_ids == word)
            if (words[span] == tokenizer.mask_token_id).all():
                kinds["mask"] += 1
            elif (words[span] == original[span]).all():
                kinds["kept"] += 1
            else:
                assert tokenizer.mask_token_id not in words[span]
                kinds["random"] += 1
    assert exact >= 0.95 * len(instances)
    assert 0.14 < labelled / total < 0.16
    words_masked = sum(kinds.values())
    assert words_masked > 800
    assert abs(kinds["mask"] / words_masked - 0.8) < 0.05
    assert abs(kinds["kept"] / words_masked - 0.1) < 0.04 and abs(kinds["random"] / words_masked - 0.1) < 0.04


def test_entity_masking(pretraining_corpus, corpus_rows):
    vocab = EntityVocab.from_file(pretraining_corpus / "entity_vocab.jsonl")
    masked_total, predictable_total = 0, 0
    for instance, row in zip(read(pretraining_corpus, shuffle=False), corpus_rows):
        entities, labels = field(instance, "entity_ids"), field(instance, "masked_entity_labels")
        positions = field(instance, "entity_position_ids")
        assert field(instance, "entity_attention_mask").all() and len(entities) == len(row["entity_ids"])
        for mention, expected in zip(positions, row["entity_position_ids"]):
            assert mention[mention >= 0].tolist() == [p + 1 for p in expected]  # shifted past <s>, kept when masked
        original = np.asarray(row["entity_ids"])
        predictable = original != vocab.unk_id
        masked = labels != -100
        assert (entities[masked] == vocab.mask_id).all() and (labels[masked] == original[masked]).all()
        assert (entities[~masked] == original[~masked]).all()
        assert not (masked & ~predictable).any()  # [UNK] entities are inputs, never targets
        if predictable.any():
            assert masked.sum() == max(1, round(0.15 * predictable.sum()))
        masked_total, predictable_total = masked_total + masked.sum(), predictable_total + predictable.sum()
    # Rows hold about 3.5 predictable entities; at least one each makes the share above 15% (83 of 334).
    assert masked_total > 80 and predictable_total > 300


def test_masks_are_fresh_on_every_pass_and_reproducible(pretraining_corpus):
    reader = LukePretrainingReader(seed=7)
    first, second = list(reader.read(str(pretraining_corpus))), list(reader.read(str(pretraining_corpus)))
    again = read(pretraining_corpus, seed=7)
    other_seed = read(pretraining_corpus, seed=8)

    def masks(instances):
        return {
            tuple(original_words(i)): (field(i, "word_ids").tolist(), field(i, "entity_ids").tolist())
            for i in instances
        }

    assert masks(first) == masks(again)  # reproducible from the seed
    changed = [masks(first)[k] != masks(second)[k] for k in masks(first)]
    assert sum(changed) >= 0.9 * len(changed)  # new masks on the next pass
    assert [tuple(original_words(i)) for i in first] != [tuple(original_words(i)) for i in second]  # new order
    assert sum(masks(first)[k] != masks(other_seed)[k] for k in masks(first)) >= 0.9 * len(first)
    static = LukePretrainingReader(seed=7, dynamic_masking=False)
    assert masks(static.read(str(pretraining_corpus))) == masks(static.read(str(pretraining_corpus))) == masks(first)


def test_sharding_covers_every_row_once(pretraining_corpus, corpus_rows, monkeypatch):
    """2 distributed ranks x 2 data-loader workers read every row exactly once, with the masks of a plain read."""
    unsharded = {tuple(original_words(i)): field(i, "word_ids").tolist() for i in read(pretraining_corpus)}
    shards = [
        {tuple(original_words(i)): field(i, "word_ids").tolist() for i in shard}
        for shard in read_in_shards(monkeypatch, LukePretrainingReader, str(pretraining_corpus))
    ]
    assert all(20 <= len(shard) <= 30 for shard in shards)
    rows = [key for shard in shards for key in shard]
    assert sorted(rows) == sorted(tuple([0] + r + [2]) for r in corpus_rows["word_ids"])
    assert {k: v for shard in shards for k, v in shard.items()} == unsharded


def test_long_rows_are_truncated_and_counted(pretraining_corpus, caplog):
    reader = LukePretrainingReader(max_seq_length=32, max_entities=2)
    with caplog.at_level(logging.WARNING):
        instances = list(reader.read(str(pretraining_corpus)))
    assert len(instances) == 95
    assert all(len(field(i, "word_ids")) <= 32 and len(field(i, "entity_ids")) <= 2 for i in instances)
    assert all(field(i, "entity_position_ids").max() < 31 for i in instances if len(field(i, "entity_ids")))
    stats = reader.stats
    assert stats["rows"] == 95 and stats["truncated_rows"] > 80
    assert stats["entities_cut_by_truncation"] > 0 and stats["entities_over_max_entities"] > 0
    assert "truncated_rows" in caplog.text


def test_rows_without_entities(pretraining_corpus):
    reader = LukePretrainingReader()
    reader.set_corpus(str(pretraining_corpus))
    instance = reader.text_to_instance([100, 200, 300, 400], [], [], np.random.default_rng(0))
    assert field(instance, "entity_ids").shape == (0,) and field(instance, "entity_position_ids").shape == (0, 1)
    assert (field(instance, "masked_lm_labels") != -100).sum() == 1  # at least one subword, even in 4
    # Each field pads as the reader declared it inline before the LUKE fields took the declared padding table.
    padding = {name: value.padding_value for name, value in instance.fields.items() if name != "masked_counts"}
    assert padding == {
        "word_ids": reader.pad_id,
        "word_attention_mask": False,
        "masked_lm_labels": -100,
        "entity_ids": 0,
        "entity_position_ids": -1,
        "entity_attention_mask": False,
        "masked_entity_labels": -100,
    }


def test_bad_rows_name_the_row(pretraining_corpus, tmp_path):
    corpus = tmp_path / "bad"
    rows = {
        "word_ids": [[100, 200, 300], [100, 200]],
        "entity_ids": [[3], [4]],
        "entity_position_ids": [[[0]], [[5]]],
        "page_id": [0, 0],
    }
    datasets.Dataset.from_dict(rows).save_to_disk(str(corpus))
    metadata = json.loads((pretraining_corpus / "metadata.json").read_text())
    metadata.update(
        tokenizer={"path": str(pretraining_corpus / "tokenizer")},
        entity_vocab=str(pretraining_corpus / "entity_vocab.jsonl"),
    )
    (corpus / "metadata.json").write_text(json.dumps(metadata))
    with pytest.raises(ValueError, match=r"row 1: entity 0's positions \[5\] are not in its 2 words"):
        read(corpus, shuffle=False)
    datasets.Dataset.from_dict({key: [] for key in rows}).save_to_disk(str(tmp_path / "empty"))
    shutil.copy(corpus / "metadata.json", tmp_path / "empty" / "metadata.json")
    with pytest.raises(ValueError, match="empty: the corpus has no rows"):
        read(tmp_path / "empty")
    shutil.rmtree(corpus / "tokenizer", ignore_errors=True)
    (corpus / "metadata.json").unlink()
    with pytest.raises(FileNotFoundError, match="no metadata.json"):
        read(corpus)


def test_word_starts(tokenizer, tmp_path):
    starts = word_start_table(tokenizer)
    ids = tokenizer(["Zhirinovsky", "said", ","], is_split_into_words=True, add_special_tokens=False)["input_ids"]
    tokens = tokenizer.convert_ids_to_tokens(ids)
    assert tokens[:3] == ["ĠZh", "irin", "ovsky"] and starts[ids].tolist() == [True, False, False, True, True]
    assert starts[tokenizer.convert_tokens_to_ids(",")]  # punctuation starts a word, as in the original LUKE
    from transformers import BertTokenizerFast

    (tmp_path / "vocab.txt").write_text(
        "\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "play", "##ing", "go"])
    )
    bert = BertTokenizerFast(str(tmp_path / "vocab.txt"))
    assert word_start_table(bert)[5:].tolist() == [True, False, True]


def test_reads_a_corpus_built_from_a_wikipedia_dump(shared_data, tmp_path):
    """The reader takes what `build-pretraining-corpus` writes (the real 3-page sample dump)."""
    from luke_allennlp.testing import save_roberta_tokenizer
    from luke_allennlp.wikipedia.corpus import build_pretraining_corpus
    from luke_allennlp.wikipedia.corpus_rows import CorpusOptions
    from luke_allennlp.wikipedia.entity_vocab_builder import build_entity_vocab

    dump = shared_data / "wikipedia" / "enwiki-pages-articles-sample.xml.bz2"
    save_roberta_tokenizer(tmp_path / "tokenizer")
    vocab, _ = build_entity_vocab(dump)
    vocab.save_jsonl(tmp_path / "vocab.jsonl")
    options = CorpusOptions(max_seq_length=128, unknown_entities="unk")
    metadata = build_pretraining_corpus(
        dump, str(tmp_path / "tokenizer"), tmp_path / "vocab.jsonl", tmp_path / "corpus", options
    )
    instances = read(tmp_path / "corpus")
    assert len(instances) == metadata["sequences"] > 0
    assert sum(len(field(i, "entity_ids")) for i in instances) == metadata["entities"] > 0
    assert all(len(field(i, "word_ids")) <= 128 for i in instances)
    assert sum((field(i, "masked_entity_labels") != -100).sum() for i in instances) > 0


def test_a_piece_that_begins_with_a_combining_mark_continues_its_word():
    """Decomposed が is か + U+3099: a piece that begins with the voicing mark is part of the kana before it (one
    grapheme), not a word of its own as a kana piece is."""
    from types import SimpleNamespace

    pieces = {"<s>": 0, "か": 1, "\u3099": 2, "\u3099た": 3, "▁東": 4}
    Unigram = type("Unigram", (), {})
    tokenizer = SimpleNamespace(
        backend_tokenizer=SimpleNamespace(model=Unigram()), get_vocab=lambda: pieces, all_special_ids=[0]
    )
    assert word_start_table(tokenizer).tolist() == [True, True, False, False, True]


def test_sentencepiece_corpus_word_starts_and_special_tokens(tmp_path):
    """A corpus built with an XLM-R-style sentencepiece tokenizer (mLUKE): XLM-R's <s> ... </s> and <mask>, whole
    words by `▁`, a bare `▁` piece masked with the character after it, Japanese characters one word each."""
    from luke_allennlp.testing import save_xlmr_tokenizer
    from luke_allennlp.wikipedia.corpus import build_pretraining_corpus
    from luke_allennlp.wikipedia.corpus_rows import CorpusOptions
    from tests.wikipedia.crafted_mluke import write_japanese_dump, write_multilingual_vocab

    save_xlmr_tokenizer(tmp_path / "xlmr")
    build_pretraining_corpus(
        write_japanese_dump(tmp_path / "ja.xml"),
        str(tmp_path / "xlmr"),
        write_multilingual_vocab(tmp_path / "vocab.jsonl"),
        tmp_path / "corpus",
        CorpusOptions(language="ja"),
    )
    tokenizer = load_fast_tokenizer(str(tmp_path / "corpus" / "tokenizer"))
    ids = tokenizer("Berlin 東京都は", add_special_tokens=False)["input_ids"]
    assert tokenizer.convert_ids_to_tokens(ids) == ["▁B", "er", "lin", "▁", "東", "京", "都", "は"]
    assert word_start_table(tokenizer)[ids].tolist() == [True, False, False, True, True, True, True, True]

    reader = LukePretrainingReader(masked_lm_prob=0.25, random_word_prob=0.0, unmasked_word_prob=0.0)
    reader.set_corpus(str(tmp_path / "corpus"))
    assert (reader.prefix, reader.suffix, reader.mask_id, reader.pad_id) == ([0], [2], 2001, 1)
    assert tokenizer.convert_ids_to_tokens([2001]) == ["<mask>"]
    masked_sets = collections.Counter()
    for seed in range(60):
        instance = reader.text_to_instance(ids, [6], [[3, 4, 5, 6]], np.random.default_rng(seed))
        words = field(instance, "word_ids")
        assert words[0] == 0 and words[-1] == 2
        masked = tuple(np.flatnonzero(field(instance, "masked_lm_labels") != -100) - 1)  # positions in `ids`
        assert all(words[1 + i] == 2001 for i in masked) and len(masked) == 2  # round(8 x 0.25)
        masked_sets[masked] += 1
    # The budget of 2 fits "▁東" or two one-character words, never "▁Berlin" (3) or "▁" alone.
    assert set(masked_sets) == {(3, 4), (5, 6), (5, 7), (6, 7)}

    instances = list(reader.read(str(tmp_path / "corpus")))
    rows = datasets.load_from_disk(str(tmp_path / "corpus"))
    assert sorted(original_words(i)[1:-1].tolist() for i in instances) == sorted(rows["word_ids"])
    # Corpora joined by commas (one per language) are read as one, and must share tokenizer and entity vocabulary.
    both = f"{tmp_path / 'corpus'},{tmp_path / 'corpus'}"
    assert len(list(LukePretrainingReader().read(both))) == 2 * len(rows)


def test_corpora_read_as_one_must_share_their_tokenizer(pretraining_corpus, tmp_path):
    from luke_allennlp.testing import save_xlmr_tokenizer
    from luke_allennlp.wikipedia.corpus import build_pretraining_corpus
    from luke_allennlp.wikipedia.corpus_rows import CorpusOptions
    from tests.wikipedia.crafted_mluke import write_german_dump, write_multilingual_vocab

    save_xlmr_tokenizer(tmp_path / "xlmr")
    build_pretraining_corpus(
        write_german_dump(tmp_path / "de.xml"),
        str(tmp_path / "xlmr"),
        write_multilingual_vocab(tmp_path / "vocab.jsonl"),
        tmp_path / "de",
        CorpusOptions(language="de"),
    )
    with pytest.raises(
        ValueError, match=f"{tmp_path / 'de'} and {pretraining_corpus} were built with different tokenizers"
    ):
        read(f"{pretraining_corpus},{tmp_path / 'de'}")


def batch_digest(reader: LukePretrainingReader, corpus, batches: int, batch_size: int = 8) -> str:
    """What the model receives: the first `batches` batches of a lazy data loader (masks drawn anew on each pass)."""
    loader = MultiProcessDataLoader(
        reader, str(corpus), batch_size=batch_size, max_instances_in_memory=4 * batch_size, batches_per_epoch=batches
    )
    loader.index_with(Vocabulary.empty())
    digest = hashlib.sha256()
    for batch in loader:
        for name in sorted(name for name, value in batch.items() if isinstance(value, torch.Tensor)):  # (not metadata)
            digest.update(f"{name} {batch[name].dtype} {tuple(batch[name].shape)}".encode())
            digest.update(batch[name].numpy().tobytes())
    return digest.hexdigest()[:16]


def test_batches_are_those_of_the_reference_implementation(pretraining_corpus):
    """The batches of a seed are pinned to what the reader gave before it was vectorised (per-word masking loop,
    rows as Python lists, the whole entity vocabulary parsed): 30 batches span three passes of the 95 rows, and the
    second reader truncates rows and entities, masks single subwords and replaces many with random ones."""
    assert batch_digest(LukePretrainingReader(seed=7), pretraining_corpus, 30) == "4ee8e667db9276cc"
    reader = LukePretrainingReader(
        max_seq_length=32,
        max_entities=2,
        whole_word_masking=False,
        shuffle=False,
        masked_lm_prob=0.3,
        random_word_prob=0.3,
    )
    assert batch_digest(reader, pretraining_corpus, 12) == "a3d8f34bb9f1635d"


def test_entity_vocab_summary_parses_only_the_special_entries(pretraining_corpus, tmp_path):
    corpus = PretrainingCorpus(pretraining_corpus)
    vocab = corpus.entity_vocab()
    assert (
        tuple(corpus.entity_vocab_summary()) == (len(vocab), vocab.pad_id, vocab.unk_id, vocab.mask_id) == (60, 0, 1, 2)
    )
    # Special entities anywhere, a title that quotes one, a title of two ids (the lower wins, as in EntityVocab).
    directory = tmp_path / "corpus"
    shutil.copytree(pretraining_corpus, directory)
    lines = [
        {"id": 0, "entities": [["Paris", "en"]]},
        {"id": 1, "entities": [['say "[PAD]"', "en"]]},
        {"id": 2, "entities": [["[MASK]", "en"]]},
        {"id": 3, "entities": [["[PAD]", "en"], ["[PAD]", "ja"]]},
        {"id": 4, "entities": [["[UNK]", "ja"]]},
        {"id": 5, "entities": [["[MASK]", "ja"]]},
    ]
    (directory / "entity_vocab.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    metadata = json.loads((directory / "metadata.json").read_text())
    (directory / "metadata.json").write_text(json.dumps({**metadata, "entity_vocab_size": 6}))
    full = EntityVocab.from_file(directory / "entity_vocab.jsonl")
    assert tuple(PretrainingCorpus(directory).entity_vocab_summary()) == (6, full.pad_id, full.unk_id, full.mask_id)
    assert (full.pad_id, full.unk_id, full.mask_id) == (3, 4, 2)
    del metadata["entity_vocab_size"]  # (older corpora: the whole vocabulary is read)
    (directory / "metadata.json").write_text(json.dumps(metadata))
    assert tuple(PretrainingCorpus(directory).entity_vocab_summary()) == (6, 3, 4, 2)


def test_an_endless_reader_keeps_its_data_loader_workers_across_passes(pretraining_corpus, corpus_rows, monkeypatch):
    """`endless`: pass after pass (new masks, the same as separate passes), read by the same worker process; a
    reader that ends makes allennlp's data loader start a new worker at every pass (the stall between passes)."""
    import multiprocessing.context

    from allennlp.data.dataset_readers.dataset_reader import WorkerInfo

    starts = []
    start = multiprocessing.context.ForkProcess.start
    monkeypatch.setattr(multiprocessing.context.ForkProcess, "start", lambda self: (starts.append(1), start(self)))
    rows = len(corpus_rows)
    in_a_worker = LukePretrainingReader(seed=7, endless=True)
    in_a_worker._set_worker_info(WorkerInfo(1, 0))  # (as a data loader's only worker)
    endless = list(itertools.islice(in_a_worker.read(str(pretraining_corpus)), 2 * rows))
    passes = LukePretrainingReader(seed=7)
    separate = list(passes.read(str(pretraining_corpus))) + list(passes.read(str(pretraining_corpus)))
    assert [field(i, "word_ids").tolist() for i in endless] == [field(i, "word_ids").tolist() for i in separate]

    def batches(reader):
        loader = MultiProcessDataLoader(
            reader,
            str(pretraining_corpus),
            batch_size=8,
            batches_per_epoch=rows // 8,
            max_instances_in_memory=16,
            num_workers=1,
        )
        loader.index_with(Vocabulary.empty())
        try:
            return [len(batch["word_ids"]) for _ in range(2) for batch in loader]  # 2 epochs, 2 passes or more
        finally:
            stop_data_loader_workers(loader)

    starts.clear()
    assert batches(LukePretrainingReader(seed=7, endless=True)) and len(starts) == 1
    starts.clear()
    batches(LukePretrainingReader(seed=7))
    assert len(starts) >= 2


def test_an_endless_reader_read_to_its_end_reads_one_pass(pretraining_corpus, corpus_rows):
    """Read directly (`list(reader.read(path))`, allennlp's ModelTestCase, evaluate, export-luke), or by a data loader
    whose epoch ends when the reader does (no `batches_per_epoch`, or instances all in memory), an endless reader
    reads one pass: it read forever (a test worker ran out of memory)."""
    rows = len(corpus_rows)
    reader = LukePretrainingReader(seed=7, endless=True)
    assert len(list(itertools.islice(reader.read(str(pretraining_corpus)), rows + 1))) == rows
    loader = MultiProcessDataLoader(
        reader, str(pretraining_corpus), batch_size=8, max_instances_in_memory=16, num_workers=1
    )
    loader.index_with(Vocabulary.empty())
    try:
        batches = list(itertools.islice(iter(loader), rows // 8 + 2))
    finally:
        stop_data_loader_workers(loader)
    assert sum(len(batch["word_ids"]) for batch in batches) == rows and reader.endless  # (the worker's copy changed)


def test_masked_positions_are_the_labelled_positions_at_one_static_size(pretraining_corpus):
    """`masked_positions`: every instance's labelled subwords and entities, in order, padded with -1 to the reader's
    bound (round(126 x 0.15) = 19 subwords; round(max_entities x 0.15)); the other fields as without it."""
    plain = read(pretraining_corpus, shuffle=False)
    reader = LukePretrainingReader(shuffle=False, masked_positions=True)
    instances = list(reader.read(str(pretraining_corpus)))
    corpus = PretrainingCorpus(pretraining_corpus)
    entity_size = max(1, round(corpus.metadata["max_entities"] * 0.15))
    assert reader.masked_sizes == (19, entity_size)
    for with_positions, without in zip(instances, plain):
        for name, labels_name, size in (
            ("masked_lm_positions", "masked_lm_labels", 19),
            ("masked_entity_positions", "masked_entity_labels", entity_size),
        ):
            positions, labels = field(with_positions, name), field(with_positions, labels_name)
            chosen = np.flatnonzero(labels != -100)
            assert positions.shape == (size,) and (positions[len(chosen) :] == -1).all()
            assert (positions[: len(chosen)] == chosen).all()
        tensors = [k for k in without.fields if hasattr(without[k], "tensor")]  # (not the metadata)
        assert all((field(with_positions, k) == field(without, k)).all() for k in tensors)
        assert with_positions["masked_counts"].metadata == without["masked_counts"].metadata
