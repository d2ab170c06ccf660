import collections
import filecmp
import logging
import multiprocessing
import unicodedata
from typing import TYPE_CHECKING, Counter, Iterator, List, Optional, Sequence, Tuple

import numpy as np
import torch
from allennlp.common.util import lazy_groups_of
from allennlp.data import DatasetReader, Instance
from allennlp.data.fields import MetadataField, TensorField

from luke_allennlp.data.inputs import tensor_fields
from luke_allennlp.modeling.pretraining import IGNORE_INDEX
from luke_allennlp.resources.pretraining_corpus import PretrainingCorpus, corpus_directories
from luke_allennlp.resources.tokenization import special_token_layout

if TYPE_CHECKING:
    import pyarrow
    from datasets import Dataset

logger = logging.getLogger(__name__)

# Data-loader worker slots of the pass counter (see `_next_pass`).
MAX_WORKERS = 1024
ROWS_PER_READ = 128  # rows fetched from the Arrow table at once
STATS = ("rows", "truncated_rows", "entities_cut_by_truncation", "entities_over_max_entities")


def _is_cjk(char: str) -> bool:
    """A Chinese character or Japanese kana: scripts written without spaces between words. Not a combining mark
    (the voicing marks U+3099, U+309A of decomposed kana), which belongs to the character before it."""
    code = ord(char)
    if unicodedata.category(char).startswith("M"):
        return False
    return (
        0x3040 <= code <= 0x30FF
        or 0x3400 <= code <= 0x4DBF
        or 0x4E00 <= code <= 0x9FFF
        or 0xF900 <= code <= 0xFAFF
        or 0xFF66 <= code <= 0xFF9F
        or 0x20000 <= code <= 0x2FA1F
    )


def word_start_table(tokenizer) -> np.ndarray:
    """
    (vocab,) bool, indexed by subword id: whether the subword starts a word, for whole-word masking. WordPiece
    marks continuations with `##`; byte-level BPE and sentencepiece mark word starts (`Ġ`, `▁`), and there a
    subword that begins with punctuation also starts a word, as in the original LUKE. A subword that begins with
    a Chinese character or kana starts a word too, as BERT's tokenizers treat each such character as a word:
    Japanese and Chinese have no spaces, so a `▁` marks the start of a whole clause, which would otherwise be one
    "word" longer than a row's masking budget. Special tokens (and ids the vocabulary lacks) start words.
    """
    wordpiece = type(tokenizer.backend_tokenizer.model).__name__ == "WordPiece"
    vocab = tokenizer.get_vocab()
    starts = np.ones(max(vocab.values()) + 1, dtype=bool)
    special = set(tokenizer.all_special_ids)
    for token, index in vocab.items():
        if index in special:
            continue
        if wordpiece:
            starts[index] = not token.startswith("##")
        else:
            starts[index] = token[0] in "Ġ▁" or unicodedata.category(token[0]).startswith("P") or _is_cjk(token[0])
    return starts


def _row_name(names: List[str], starts: np.ndarray, row: int) -> str:
    """A row of several corpora read as one, named by its corpus and its index there."""
    corpus = int(np.searchsorted(starts, row, side="right")) - 1
    return f"{names[corpus]} row {row - starts[corpus]}"


@DatasetReader.register("luke_pretraining")
class LukePretrainingReader(DatasetReader):
    """
    Reads a pretraining corpus (a directory written by `allennlp build-pretraining-corpus`, or several joined by
    commas, e.g. one per language for mLUKE, read as one: rows of every language in one random order) row by row
    from its memory-mapped Arrow files, sharded across distributed ranks and data-loader workers, and masks each
    row as in the paper (§3.3, Appendix A):

    - words: `masked_lm_prob` of the subwords, chosen as whole words (`whole_word_masking`) in random order;
      a chosen word becomes `<mask>` (80%), random subwords (`random_word_prob`, 10%) or stays
      (`unmasked_word_prob`, 10%). Special tokens are never chosen. At least one subword per row.
    - entities: `masked_entity_prob` of the entities (at least one per row that has any) are replaced by
      `[MASK]`; their position ids are kept. `[PAD]` and `[UNK]` entities are inputs, never targets.

    Labels are the original ids at masked positions and -100 elsewhere. With `dynamic_masking` (RoBERTa's),
    masks are drawn afresh on every pass over the corpus (allennlp re-reads a lazy dataset each epoch; set the
    data loader's `max_instances_in_memory`, else instances and their masks are cached after the first pass).
    Each row's masks come from a generator seeded with (`seed`, pass, row index): a run is reproducible from
    its seed, and the masks do not depend on the number of ranks or workers.

    Rows longer than `max_seq_length` (special tokens included) are truncated, dropping the entities whose
    mentions they cut; rows with more than `max_entities` entities keep the first ones. Both are counted and
    logged at the end of each pass.

    # Parameters

    masked_lm_prob : `float`, optional (default = `0.15`)
    masked_entity_prob : `float`, optional (default = `0.15`)
    random_word_prob : `float`, optional (default = `0.1`)
        Of the chosen words, the share replaced by random subwords.
    unmasked_word_prob : `float`, optional (default = `0.1`)
        Of the chosen words, the share left unchanged (but predicted).
    whole_word_masking : `bool`, optional (default = `True`)
    dynamic_masking : `bool`, optional (default = `True`)
        New masks on every pass; if false, every pass gives the same masks (e.g. for a validation corpus).
    shuffle : `bool`, optional (default = `True`)
        Read the rows in a random order, a new one on every pass (the corpus is in page order).
    seed : `int`, optional (default = `13370`)
    max_seq_length : `int`, optional (default = `None`)
        Subwords per instance with special tokens; `None` = the corpus's.
    max_entities : `int`, optional (default = `None`)
        Entities per instance; `None` = all the corpus gives.
    endless : `bool`, optional (default = `False`)
        In the worker processes of a data loader that draws `batches_per_epoch` batches lazily
        (`max_instances_in_memory`, `num_workers` > 0), read pass after pass (each with new masks and order) without
        end: the workers then live across passes, instead of a new set being started (imports, corpus opening: about
        a second) at the end of each pass while training waits. Read anywhere else (`reader.read(path)`, allennlp's
        `ModelTestCase`, `allennlp evaluate` or `predict`, a data loader without `batches_per_epoch` or with
        `num_workers: 0`) it reads one pass, as if false: reading it to its end then ends (the data loader's
        workers are told by `luke_allennlp.cli.user_errors.finite_reads`; in the main process there are no workers to keep).
    masked_positions : `bool`, optional (default = `False`)
        Each instance also holds `masked_lm_positions` and `masked_entity_positions`: the positions of its masked
        subwords and entities, padded with -1 to a size that bounds every row's (`max(1, round(words x
        masked_lm_prob))` for the longest row's words, and likewise for entities with `max_entities`, or the
        corpus's largest count). The model then gathers its heads' inputs at that static size: no host sync, and
        a step that CUDA graphs can capture (`compile: "reduce-overhead"`).
    """

    def __init__(
        self,
        masked_lm_prob: float = 0.15,
        masked_entity_prob: float = 0.15,
        random_word_prob: float = 0.1,
        unmasked_word_prob: float = 0.1,
        whole_word_masking: bool = True,
        dynamic_masking: bool = True,
        shuffle: bool = True,
        seed: int = 13370,
        max_seq_length: Optional[int] = None,
        max_entities: Optional[int] = None,
        endless: bool = False,
        masked_positions: bool = False,
        **kwargs,
    ) -> None:
        super().__init__(manual_distributed_sharding=True, manual_multiprocess_sharding=True, **kwargs)
        for name, value in [
            ("masked_lm_prob", masked_lm_prob),
            ("masked_entity_prob", masked_entity_prob),
            ("random_word_prob + unmasked_word_prob", random_word_prob + unmasked_word_prob),
        ]:
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"{name} must be in [0, 1], not {value}")
        self.masked_lm_prob = masked_lm_prob
        self.masked_entity_prob = masked_entity_prob
        self.random_word_prob = random_word_prob
        self.unmasked_word_prob = unmasked_word_prob
        self.whole_word_masking = whole_word_masking
        self.dynamic_masking = dynamic_masking
        self.shuffle = shuffle
        self.seed = seed
        self.max_seq_length = max_seq_length
        self.max_entities = max_entities
        self.endless = endless
        self._said_one_pass = False
        self.masked_positions = masked_positions
        # How many passes each worker slot has started. Shared memory: data-loader workers are new processes
        # on every pass, so a plain attribute would not survive from one pass to the next.
        self._passes = multiprocessing.RawArray("q", MAX_WORKERS)
        self._corpus: Optional[PretrainingCorpus] = None
        self._corpora: List[PretrainingCorpus] = []
        self._corpus_path = ""
        self.stats: Counter = collections.Counter()  # rows read and what was cut, in the last pass
        # Imported here, where the reader is built: data-loader workers are forked anew on every pass and would
        # each import it again (half a second) on their first row.
        import datasets  # noqa: F401

    def _next_pass(self) -> int:
        worker = self.get_worker_info()
        slot = worker.id if worker is not None else 0
        if slot >= MAX_WORKERS:
            raise ValueError(f"luke_pretraining supports at most {MAX_WORKERS} data-loader workers")
        index = self._passes[slot]
        self._passes[slot] = index + 1
        return index

    def set_corpus(self, path: str) -> None:
        """Loads what masking needs from the corpus: its tokenizer's special tokens and word starts, the entity
        vocabulary's special ids. `path` may join several corpora with commas (one per language, for mLUKE),
        which must share their tokenizer and entity vocabulary. `_read` calls it; call it yourself to use
        `text_to_instance` alone."""
        if self._corpus is not None and self._corpus_path == str(path):
            return
        corpora = [PretrainingCorpus(directory) for directory in corpus_directories(str(path))]
        corpus = corpora[0]
        tokenizer = corpus.tokenizer()
        for other in corpora[1:]:
            if other.tokenizer().get_vocab() != tokenizer.get_vocab():
                raise ValueError(f"{other.directory} and {corpus.directory} were built with different tokenizers")
            if not filecmp.cmp(other.entity_vocab_path, corpus.entity_vocab_path, shallow=False) and (
                other.entity_vocab().to_transformers_json() != corpus.entity_vocab().to_transformers_json()
            ):
                raise ValueError(
                    f"{other.directory} and {corpus.directory} were built with different entity vocabularies"
                )
        self.prefix, self.suffix = special_token_layout(tokenizer)
        self.pad_id, self.mask_id = tokenizer.pad_token_id, tokenizer.mask_token_id
        if self.mask_id is None:
            raise ValueError(f"{corpus.tokenizer_path}: the tokenizer has no mask token")
        self.word_starts = word_start_table(tokenizer)
        # sentencepiece's word-start mark as a piece of its own ("▁" "東" "京"): the next piece is in its word.
        bare = tokenizer.get_vocab().get("\u2581")
        self.bare_word_start = -1 if bare is None else bare
        special = np.ones(len(self.word_starts), dtype=bool)  # special tokens and ids the vocabulary lacks
        special[list(tokenizer.get_vocab().values())] = False
        special[tokenizer.all_special_ids] = True
        self.special_words = special
        self.random_words = np.flatnonzero(~special)  # what a randomly replaced subword may become
        entity_vocab = corpus.entity_vocab_summary()  # (not the whole vocabulary: workers call this every pass)
        self.entity_vocab_size = entity_vocab.size
        self.entity_mask_id = entity_vocab.mask_id
        self.unpredicted_entities = np.array([entity_vocab.pad_id, entity_vocab.unk_id, entity_vocab.mask_id])
        longest = max(c.max_seq_length for c in corpora)
        self.room = (self.max_seq_length or longest) - len(self.prefix) - len(self.suffix)
        # The static sizes of `masked_positions`: what `_mask_words` and `_mask_entities` choose at most in a row.
        most_entities = self.max_entities or max(int(c.metadata.get("max_entities", 0)) for c in corpora)
        self.masked_sizes = (
            max(1, round(self.room * self.masked_lm_prob)),
            max(1, round(most_entities * self.masked_entity_prob)),
        )
        self._corpus, self._corpora, self._corpus_path = corpus, corpora, str(path)

    def _read(self, file_path: str) -> Iterator[Instance]:
        from datasets import concatenate_datasets

        self.set_corpus(file_path)
        datasets = [corpus.load_dataset() for corpus in self._corpora]
        # Several corpora are read as one: their rows in one random order (each language in proportion to its rows).
        dataset = datasets[0] if len(datasets) == 1 else concatenate_datasets(datasets)
        names, starts = [str(c.directory) for c in self._corpora], np.cumsum([0] + [len(d) for d in datasets])
        while True:
            read = 0
            for instance in self._read_pass(file_path, dataset, names, starts):
                read += 1
                yield instance
            if not self._reads_endlessly() or not read:  # (a shard without rows would loop without yielding)
                return

    def _reads_endlessly(self) -> bool:
        """`endless` is honoured only in a data loader's worker process: there the loader (repaired in
        `luke_allennlp.cli.user_errors.finite_reads`) has set it false unless it draws `batches_per_epoch` batches lazily."""
        if self.endless and self.get_worker_info() is None and not self._said_one_pass:
            logger.info("luke_pretraining: endless, but read outside a data loader's workers: one pass")
            self._said_one_pass = True
        return self.endless and self.get_worker_info() is not None

    def _read_pass(
        self, file_path: str, dataset: "Dataset", names: List[str], starts: np.ndarray
    ) -> Iterator[Instance]:
        pass_index = self._next_pass() if self.dynamic_masking else 0
        order = np.arange(len(dataset))
        if self.shuffle:  # the same order in every rank and worker, so that the shards partition it
            order = np.random.default_rng((self.seed, pass_index)).permutation(len(dataset))
        self.stats = collections.Counter(dict.fromkeys(STATS, 0))
        # Rows as Arrow arrays, sliced as numpy views: no Python list of every id.
        arrow = dataset.with_format("arrow")
        for chunk in lazy_groups_of(self.shard_iterable(order), ROWS_PER_READ):
            rows = arrow[[int(i) for i in chunk]]
            words, word_offsets = _int_lists(rows.column("word_ids").combine_chunks())
            entities, entity_offsets = _int_lists(rows.column("entity_ids").combine_chunks())
            lists = rows.column("entity_position_ids").combine_chunks()  # a row's lists of positions
            mentions, mention_offsets = _int_lists(lists.values)
            row_mentions = lists.offsets.to_numpy().tolist()
            for k, row_index in enumerate(chunk):
                rng = np.random.default_rng((self.seed, pass_index, int(row_index)))
                bounds = mention_offsets[row_mentions[k] : row_mentions[k + 1] + 1]
                self.stats["rows"] += 1
                yield self.text_to_instance(
                    words[word_offsets[k] : word_offsets[k + 1]],
                    entities[entity_offsets[k] : entity_offsets[k + 1]],
                    [mentions[a:b] for a, b in zip(bounds[:-1], bounds[1:])],
                    rng,
                    example_id=_row_name(names, starts, int(row_index)),
                )
        worker = self.get_worker_info()
        if any(v for k, v in self.stats.items() if k != "rows"):
            worker_id = worker.id if worker else 0
            logger.warning("%s, pass %d, worker %d: %s", file_path, pass_index, worker_id, dict(self.stats))

    def text_to_instance(  # type: ignore[override]
        self,
        word_ids: Sequence[int],
        entity_ids: Sequence[int],
        entity_position_ids: Sequence[Sequence[int]],
        rng: Optional[np.random.Generator] = None,
        example_id: str = "input",
    ) -> Instance:
        """
        One corpus row (subword ids without special tokens, entity ids, each entity's subword positions in
        `word_ids`) as a masked instance; `rng` draws the masks (a fresh unseeded generator if None).
        """
        if self._corpus is None:
            raise ValueError("call set_corpus(corpus_directory) before text_to_instance")
        rng = rng if rng is not None else np.random.default_rng()
        words = np.asarray(word_ids, dtype=np.int64)
        entities = np.asarray(entity_ids, dtype=np.int64)
        # The mentions as one array and their lengths (mention i is positions[offsets[i]:offsets[i + 1]]).
        lengths = np.array([len(p) for p in entity_position_ids], dtype=np.int64)
        positions = np.concatenate(
            [np.asarray(p, dtype=np.int64) for p in entity_position_ids] or [np.zeros(0, np.int64)]
        )
        offsets = np.concatenate([[0], np.cumsum(lengths)])
        last = self._check_row(words, entities, positions, offsets, example_id)  # each mention's last position
        if len(words) > self.room:
            self.stats["truncated_rows"] += 1
            words = words[: self.room]
            keep = last < self.room
            self.stats["entities_cut_by_truncation"] += int((~keep).sum())
            entities, positions, lengths = entities[keep], positions[np.repeat(keep, lengths)], lengths[keep]
        if self.max_entities is not None and len(entities) > self.max_entities:
            self.stats["entities_over_max_entities"] += len(entities) - self.max_entities
            entities, lengths = entities[: self.max_entities], lengths[: self.max_entities]
            positions = positions[: lengths.sum()]

        masked_words, word_labels = self._mask_words(words, rng)
        masked_entities, entity_labels = self._mask_entities(entities, rng)
        shift = len(self.prefix)  # entity positions index the words after the prefix tokens
        # (entities, longest mention), -1 after each mention's end
        padded = np.full((len(lengths), max(lengths.max(initial=0), 1)), -1, dtype=np.int64)
        rows = np.repeat(np.arange(len(lengths)), lengths)
        padded[rows, np.arange(len(positions)) - np.repeat(np.cumsum(lengths) - lengths, lengths)] = positions + shift
        input_ids = np.concatenate([self.prefix, masked_words, self.suffix]).astype(np.int64)
        no_label = IGNORE_INDEX
        labels = np.concatenate([np.full(shift, no_label), word_labels, np.full(len(self.suffix), no_label)])
        fields = {
            **tensor_fields(
                self.pad_id,
                word_ids=input_ids,
                word_attention_mask=torch.ones(len(input_ids), dtype=torch.bool),
                entity_ids=masked_entities,
                entity_position_ids=padded,
                entity_attention_mask=torch.ones(len(entities), dtype=torch.bool),
            ),
            "masked_lm_labels": TensorField(torch.from_numpy(labels), padding_value=no_label),
            "masked_entity_labels": TensorField(torch.from_numpy(entity_labels), padding_value=no_label),
            # (masked words, masked entities) as host values: the model sizes its heads without reading the device
            "masked_counts": MetadataField((int((labels != no_label).sum()), int((entity_labels != no_label).sum()))),
        }
        if self.masked_positions:
            for name, row_labels, size in (
                ("masked_lm_positions", labels, self.masked_sizes[0]),
                ("masked_entity_positions", entity_labels, self.masked_sizes[1]),
            ):
                chosen = np.flatnonzero(row_labels != no_label)
                if len(chosen) > size:
                    raise ValueError(f"{example_id}: {len(chosen)} masked positions, more than the {size} of {name}")
                padded_positions = np.full(size, -1, dtype=np.int64)
                padded_positions[: len(chosen)] = chosen
                fields[name] = TensorField(torch.from_numpy(padded_positions), padding_value=-1)
        return Instance(fields)

    def _check_row(
        self, words: np.ndarray, entities: np.ndarray, positions: np.ndarray, offsets: np.ndarray, example_id: str
    ) -> np.ndarray:
        """A clear error for a row that does not fit the corpus's tokenizer and entity vocabulary; else each
        mention's last position (`positions[offsets[i]:offsets[i + 1]]` is mention i)."""
        if len(words) == 0:
            raise ValueError(f"{example_id}: no words")
        if len(offsets) - 1 != len(entities):
            raise ValueError(f"{example_id}: {len(entities)} entity ids but {len(offsets) - 1} entity position lists")
        starts, ends = offsets[:-1], offsets[1:]
        first, last = np.full(len(starts), -1, dtype=np.int64), np.full(len(starts), -1, dtype=np.int64)
        present = ends > starts  # (reduceat would give an empty mention its next one's first position)
        if present.any():
            first[present] = np.minimum.reduceat(positions, starts[present])
            last[present] = np.maximum.reduceat(positions, starts[present])
        bad = (ends == starts) | (first < 0) | (last >= len(words))
        if bad.any():
            i = int(np.argmax(bad))
            mention = positions[starts[i] : ends[i]].tolist()
            raise ValueError(f"{example_id}: entity {i}'s positions {mention} are not in its {len(words)} words")
        bad_words = words[(words < 0) | (words >= len(self.word_starts))].tolist()
        if bad_words:
            raise ValueError(
                f"{example_id}: word ids {bad_words} are not in the tokenizer's {len(self.word_starts)} ids"
            )
        bad_entities = entities[(entities < 0) | (entities >= self.entity_vocab_size)].tolist()
        if bad_entities:
            size = self.entity_vocab_size
            raise ValueError(f"{example_id}: entity ids {bad_entities} are not in the {size}-entity vocabulary")
        return last

    def _mask_words(self, words: np.ndarray, rng: np.random.Generator):
        """(masked ids, labels): whole words chosen in random order until `masked_lm_prob` of the subwords."""
        labels = np.full(len(words), IGNORE_INDEX, dtype=np.int64)
        masked = words.copy()
        if self.masked_lm_prob == 0.0:
            return masked, labels
        starts = self.word_starts[words] if self.whole_word_masking else np.ones(len(words), dtype=bool)
        if self.whole_word_masking:
            starts[1:] &= words[:-1] != self.bare_word_start
        starts[0] = True
        bounds = np.append(np.flatnonzero(starts), len(words))  # word w is words[bounds[w]:bounds[w + 1]]
        special = self.special_words[words]
        budget = max(1, round(len(words) * self.masked_lm_prob))
        # Words in random order, each taken if it fits what is left of the budget and has no special token, until
        # the budget is spent. A word too long now stays too long, so the words that fit form runs: take the
        # longest run whose sizes add up within the budget, skip the next (it does not fit), and repeat.
        order = rng.permutation(len(bounds) - 1)
        sizes = np.diff(bounds)[order]
        sizes[np.logical_or.reduceat(special, bounds[:-1])[order]] = budget + 1  # never fits
        chosen, position, left = [], 0, budget
        while left > 0:
            fitting = np.flatnonzero(sizes[position:] <= left) + position
            if not len(fitting):
                break
            taken = fitting[np.cumsum(sizes[fitting]) <= left]
            chosen.append(order[taken])
            left -= int(sizes[taken].sum())
            if len(taken) == len(fitting):
                break
            position = int(fitting[len(taken)]) + 1
        chosen_words = np.concatenate(chosen) if chosen else np.zeros(0, dtype=np.int64)
        begins, ends = bounds[chosen_words], bounds[chosen_words + 1]
        if not len(begins):  # every word is longer than the budget: mask one subword
            candidates = np.flatnonzero(~special)
            if len(candidates) == 0:
                return masked, labels
            position = int(rng.choice(candidates))
            begins, ends = np.array([position]), np.array([position + 1])
        to_mask = self._draw_word_actions(begins, ends, masked, rng)
        lengths = ends - begins
        spans = np.arange(lengths.sum()) + np.repeat(begins - (np.cumsum(lengths) - lengths), lengths)
        labels[spans] = words[spans]
        masked[spans[np.repeat(to_mask, lengths)]] = self.mask_id
        return masked, labels

    def _draw_word_actions(
        self, begins: np.ndarray, ends: np.ndarray, masked: np.ndarray, rng: np.random.Generator
    ) -> np.ndarray:
        """
        One uniform draw per chosen word (`masked[begins[i]:ends[i]]`), in order: below `1 - random_word_prob -
        unmasked_word_prob` the word is to be masked (returned as a bool per word), then a random replacement, done
        here (its subwords drawn before the next word's draw), else the word stays. Scalar draws in a plain loop:
        the replacements interleave with the draws, and numpy's per-call overhead would exceed the loop's.
        """
        keep_below = 1.0 - self.random_word_prob - self.unmasked_word_prob
        replace_below = keep_below + self.random_word_prob
        draw, random_words = rng.random, self.random_words
        to_mask = []
        for begin, end in zip(begins.tolist(), ends.tolist()):
            value = draw()
            to_mask.append(value < keep_below)
            if keep_below <= value < replace_below:
                # (what `rng.choice(random_words, end - begin)` draws, without its overhead)
                masked[begin:end] = random_words[rng.integers(0, len(random_words), end - begin)]
        return np.array(to_mask, dtype=bool)

    def _mask_entities(self, entities: np.ndarray, rng: np.random.Generator):
        """(masked ids, labels): `masked_entity_prob` of the predictable entities become `[MASK]`."""
        labels = np.full(len(entities), IGNORE_INDEX, dtype=np.int64)
        masked = entities.copy()
        pad, unk, mask = self.unpredicted_entities.tolist()
        candidates = np.flatnonzero((entities != pad) & (entities != unk) & (entities != mask))
        if self.masked_entity_prob == 0.0 or len(candidates) == 0:
            return masked, labels
        chosen = rng.choice(candidates, max(1, round(len(candidates) * self.masked_entity_prob)), replace=False)
        labels[chosen] = entities[chosen]
        masked[chosen] = self.entity_mask_id
        return masked, labels


def _int_lists(array: "pyarrow.ListArray") -> Tuple[np.ndarray, List[int]]:
    """An Arrow list array of ints as (ids, offsets): list k is `ids[offsets[k]:offsets[k + 1]]`."""
    ids = np.asarray(array.values.to_numpy(zero_copy_only=False), dtype=np.int64)
    return ids, array.offsets.to_numpy().tolist()  # (offsets index `values`, whatever slice `array` is)
