import codecs
import logging
import re
from dataclasses import dataclass, field
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

import numpy as np
import torch
from allennlp.common.file_utils import cached_path
from allennlp.data import DatasetReader, Instance
from allennlp.data.fields import MetadataField

from luke_allennlp.data.fields import LabelArrayField
from luke_allennlp.data.inputs import (
    COUNTS,
    InputCounts,
    MentionInputs,
    centred_window,
    tensor_fields,
    tokenize_joined_words,
    tokenize_words,
)
from luke_allennlp.data.sources import Columns, LabelNames, SourceReader, cell
from luke_allennlp.data.tags import TAG, TagScheme
from luke_allennlp.resources.checkpoint_tokenizer import max_mention_length as checkpoint_max_mention_length
from luke_allennlp.resources.files import read_lines
from luke_allennlp.resources.hf_datasets import Rows
from luke_allennlp.resources.task_entities import TASK_ENTITY_VOCAB
from luke_allennlp.resources.tokenization import load_fast_tokenizer

logger = logging.getLogger(__name__)

STATS = (
    "documents",
    "sentences",
    "empty_documents",
    "docstart_examples",
    "empty_examples",
    "invalid_tag_sequences",
    "truncated_sentences",
    "truncated_gold_entities",
    "gold_entities_too_long",
    "spans",
    "spans_with_positions_capped",
    "gold_entities_with_positions_capped",
    "word_boundaries_inside_subwords",
)
# The columns' separator: ASCII spaces (tabs accepted). Not any Unicode white space, as `str.split()` would
# take: a word may hold a no-break space ("10\u00a0000").
COLUMNS = re.compile(r"[ \t]+")
DOCUMENTS = ("consecutive", "example", "column")


def _span_words(max_span_words: Optional[int], max_mention_length: Optional[int]) -> int:
    """The span limit in words, from `max_span_words` or its former name (see the reader's `max_mention_length`)."""
    if max_mention_length is not None:
        if max_span_words is not None:
            raise ValueError(
                f"luke_conll2003: max_span_words ({max_span_words}) and max_mention_length ({max_mention_length}) are "
                "both given; max_mention_length is the former name of max_span_words: keep max_span_words"
            )
        logger.warning(
            "luke_conll2003: max_mention_length (%d) is read as max_span_words, its new name (it counts words here, "
            "where every other max_mention_length counts subwords); rename it in the config",
            max_mention_length,
        )
        max_span_words = max_mention_length
    words = 16 if max_span_words is None else max_span_words
    if words < 1:
        raise ValueError(f"luke_conll2003: max_span_words must be positive, not {words}")
    return words


def _column(columns: List[str], index: int) -> Optional[str]:
    """Column `index` of a line's columns (negative: from the last), None if the line has too few."""
    return columns[index] if -len(columns) <= index < len(columns) else None


@dataclass
class Sentence:
    words: List[str]
    tags: Optional[List[str]]
    line: int  # 1-based line of the first word (a dataset's row), for messages and ids
    name: Optional[str] = None  # the instance id where not `file:line` (a dataset's `name, row N`)
    spans: Optional[Dict[Tuple[int, int], str]] = None  # the tags read (`TagScheme.spans`), once


@dataclass
class TokenizedDocument:
    """A document's words tokenised in one call; subword positions index `subword_ids`."""

    sentences: List[Sentence]
    subword_ids: np.ndarray  # (subwords,)
    word_starts: np.ndarray  # (words,) first subword of each word
    word_ends: np.ndarray  # (words,) one past the last subword of each word
    sentence_offsets: List[int] = field(default_factory=list)  # index of each sentence's first word


class SpanLayout:
    """Every span of up to `max_length` words of a sentence, ordered by (start, end), in chunks of `per_chunk`."""

    def __init__(self, words: int, max_length: int, per_chunk: int):
        starts, ends = np.triu_indices(words)
        ends = ends + 1
        keep = ends - starts <= max_length  # triu_indices orders by (start, end) already
        self.starts, self.ends = starts[keep], ends[keep]
        self.count = len(self.starts)
        self.per_chunk = per_chunk
        self.padded = -(-self.count // per_chunk) * per_chunk
        # (spans, 2) word start, end: a numpy array, so that the trainer leaves it on the host (it moves the tensors
        # of metadata to the GPU too)
        self.spans = np.stack([self.starts, self.ends], 1)
        self.index = np.full((words, max_length), -1, dtype=np.int64)  # (start, length - 1) -> span index
        self.index[self.starts, self.ends - self.starts - 1] = np.arange(self.count)
        self.entity_ids = self.chunked(np.full(self.count, TASK_ENTITY_VOCAB["[MASK]"]))  # [PAD] = 0 elsewhere
        self.entity_mask = self.chunked(np.ones(self.count, dtype=bool))

    def chunked(self, values: np.ndarray) -> torch.Tensor:
        """(spans,) -> (chunks, per_chunk), zero-padded."""
        out = np.zeros(self.padded, dtype=values.dtype)
        out[: self.count] = values
        return torch.from_numpy(out.reshape(-1, self.per_chunk))


@DatasetReader.register("luke_conll2003")
class LukeConll2003Reader(SourceReader):
    """
    CoNLL-2003 NER for span classification with LUKE (paper §4.3), on CoNLL-style column files or any NER dataset.

    Reads column files: one word a line, blank lines between sentences, `-DOCSTART-` lines (any columns after it)
    between documents; the word in column `word_column` (the first) and its tag in column `tag_column` (the last),
    columns separated by spaces or tabs (or exactly `column_separator`, e.g. a tab where words hold spaces). That is
    English CoNLL-2003 as distributed (`word POS chunk NER`), German CoNLL-2003 (`word lemma POS chunk NER`,
    ISO-8859-1 in the original distribution: `file_encoding="latin-1"`), Dutch CoNLL-2002 (`word POS NER`,
    `-DOCSTART- -DOCSTART- O` lines), Spanish CoNLL-2002 (`word NER`, no `-DOCSTART-`), WNUT-17 (`word<TAB>tag`,
    lower-case types with hyphens: `B-creative-work`), OntoNotes-style files, and files named `.tsv` or `.csv`.

    Reads datasets too (`luke_allennlp.data.sources`: `hf://NAME[:CONFIG][@SPLIT]`, a `save_to_disk` directory,
    Parquet, Arrow, JSON lines): one sentence per example, the Hub's common NER schema by default, `tokens` (or
    `words`) and `ner_tags` (or `tags`), the tags `ClassLabel` integers (named by the feature, else by
    `label_names`; integers without names are refused) or strings. Examples whose first word is `-DOCSTART-` are
    document separators and examples without words are skipped (both counted). Other column names: `columns`.

    Documents (`documents`): each sentence's instance holds as much of its document around it as fits, so which
    sentences form a document matters. `"consecutive"`: consecutive sentences form one document, `-DOCSTART-` lines
    or examples start the next (the CoNLL files' meaning: a file without `-DOCSTART-` is one document, each sentence
    taking context from its neighbours, as in Spanish CoNLL-2002); `"example"`: each sentence is a document of its
    own (independent sentences, e.g. tweets); `"column"`: consecutive examples with the same value of the
    `document` column form one document. The default is `"consecutive"` for column files (a warning says when a
    file has no `-DOCSTART-`) and `"example"` for datasets (the Hub's NER datasets have no document boundaries); the
    reading is logged.

    Tags (`encoding`): IOB1, IOB2, BIOES or BILOU, declared or (`"auto"`) taken from the tags
    (`luke_allennlp.data.tags.TagScheme`), read once into entity spans; sequences the scheme does not allow are
    counted and logged with the first one's place, and read leniently as conlleval does.

    Each sentence becomes one instance: its subwords with the most surrounding
    document context that fits `max_seq_length`, and every span of up to `max_span_words` words as a
    `[MASK]` entity whose positions are the span's subwords, labelled with its gold type or `O`. The spans
    are grouped into chunks of at most `max_entities` (one encoder pass each, see `luke_span_ner`), so no
    span is dropped and the model scores whole sentences.

    # Parameters

    model_name : `str`
        The checkpoint whose fast tokenizer to use (directory or hub name).
    max_seq_length : `int`, optional (default = `512`)
        Subwords per encoder input, special tokens included.
    max_span_words : `int`, optional (default = `16`, the original code's)
        Longest span, in words. Gold entities that are longer cannot be predicted; they are counted and logged (a
        warning). Spans longer than the checkpoint's own `max_mention_length` in subwords (its tokenizer config's,
        else 30) are scored, but their entity position ids keep their first subwords (the `luke` embedder's cap, as
        transformers' `LukeTokenizer`); they are counted too (`spans_with_positions_capped`, of them
        `gold_entities_with_positions_capped`) and logged (a warning where gold entities are among them; on
        CoNLL-2003 eng.testa, 111 of 512,968 spans and no gold entity, with RoBERTa's tokenizer).
    max_entities : `int`, optional (default = `128`)
        Spans per encoder pass.
    encoding : `str`, optional (default = `"auto"`)
        The tag scheme: `"iob1"` (CoNLL-2003 as shipped), `"iob2"` (the Hub's, CoNLL-2002's), `"bioes"`, `"bilou"`,
        or `"auto"` (from the tags).
    label_namespace : `str`, optional (default = `"labels"`)
    file_encoding : `str`, optional (default = `"utf-8"`)
        The files' character encoding, any Python codec name: `"latin-1"` for the original German CoNLL-2003 and
        CoNLL-2002 files. Bytes that do not decode raise an error naming the file and the line.
    words_without_spaces : `bool`, optional (default = `False`)
        For scripts written without spaces (Japanese, Chinese): a document's words are tokenised as the running
        text they form, not each as after a space, so the subwords are those of the text a model such as
        LUKE-Japanese was pretrained on; a word's subwords are those covering its characters, and a subword across
        a word boundary belongs to both words (counted in `stats["word_boundaries_inside_subwords"]`).
    documents : `str`, optional (default = `None`)
        `"consecutive"`, `"example"` or `"column"` (see above); `None`: `"consecutive"` for column files, `"example"`
        for datasets.
    word_column : `int`, optional (default = `0`)
        Column files: the column of the word (0 the first; negative from the last).
    tag_column : `int`, optional (default = `-1`)
        Column files: the column of the tag (-1 the last).
    column_separator : `str`, optional (default = `None`)
        Column files: the string between columns (e.g. `"\t"`); `None`: any run of spaces and tabs.
    columns : `Dict[str, str]`, optional (default = `None`)
        Datasets: the column of each role that is not under its default name: `tokens` (default `tokens`, `words`),
        `tags` (`ner_tags`, `tags`), `document` (`document_id`, `doc_id`; for `documents: "column"`).
    label_names : `List[str]`, optional (default = `None`)
        Datasets whose tags are integers without `ClassLabel` names: the tag of each integer, in order.
    max_mention_length : `int`, optional (default = `None`)
        The former name of `max_span_words` (words here, where every other `max_mention_length` of the project and of
        transformers counts subwords), still read from older configs and archives with a warning; giving both is an
        error.
    """

    ROLES = {"tokens": ("tokens", "words"), "tags": ("ner_tags", "tags"), "document": ("document_id", "doc_id")}

    def __init__(
        self,
        model_name: str,
        max_seq_length: int = 512,
        max_span_words: Optional[int] = None,
        max_entities: int = 128,
        encoding: str = "auto",
        label_namespace: str = "labels",
        file_encoding: str = "utf-8",
        words_without_spaces: bool = False,
        documents: Optional[str] = None,
        word_column: int = 0,
        tag_column: int = -1,
        column_separator: Optional[str] = None,
        columns: Optional[Dict[str, str]] = None,
        label_names: Optional[List[str]] = None,
        max_mention_length: Optional[int] = None,
        **kwargs,
    ) -> None:
        super().__init__(**kwargs)
        max_span_words = _span_words(max_span_words, max_mention_length)
        self.max_seq_length = max_seq_length  # (the longest input: checked against the model's positions)
        self.tag_scheme = TagScheme(encoding)
        try:
            codecs.lookup(file_encoding)
        except LookupError:
            raise ValueError(
                f"file_encoding {file_encoding!r} is not a known character encoding (e.g. utf-8, latin-1)"
            ) from None
        if documents not in (None, *DOCUMENTS):
            raise ValueError(f"documents must be one of {', '.join(DOCUMENTS)}, not {documents!r}")
        if word_column == tag_column:
            raise ValueError(f"word_column and tag_column are the same column ({word_column})")
        if column_separator == "":
            raise ValueError("column_separator must not be empty (None: runs of spaces and tabs)")
        self.file_encoding = file_encoding
        self.words_without_spaces = words_without_spaces
        self.documents = documents
        self.word_column, self.tag_column = word_column, tag_column
        self.column_separator = column_separator
        self.columns = Columns("luke_conll2003", self.ROLES, columns)
        self.label_names = label_names
        self.tokenizer = load_fast_tokenizer(model_name)
        self.inputs = MentionInputs(self.tokenizer, max_seq_length)
        self.max_words = self.inputs.room  # subwords for text
        self.max_span_words = max_span_words
        self.position_cap = checkpoint_max_mention_length(model_name)  # (subwords: the embedder's default)
        self.max_entities = max_entities
        self.encoding = encoding
        self.label_namespace = label_namespace
        self.stats: Dict[str, int] = {}
        self._span_layouts: Dict[int, SpanLayout] = {}

    def native_file(self, path: str) -> bool:
        """`.csv` and `.tsv` files are column files; JSON, Parquet and Arrow files are datasets."""
        return path.lower().endswith((".csv", ".tsv")) or ".csv." in path.lower() or ".tsv." in path.lower()

    # --- reading files -------------------------------------------------------------------------------

    def _read(self, file_path: str) -> Iterator[Instance]:
        self.stats = dict.fromkeys(STATS, 0)
        self.tag_scheme.reset()
        rows = self.open_rows(file_path)
        if rows is None:
            documents = self.read_documents(cached_path(file_path), file_path)
        else:
            documents = self.dataset_documents(rows)
        for index, document in self.shard_iterable(enumerate(documents)):
            if not any(s.words for s in document):
                self.stats["empty_documents"] += 1
                logger.warning("%s: document %d has no sentences; skipped", file_path, index)
                continue
            self.stats["documents"] += 1
            tokenized = self._tokenize(document)
            for sentence_index, sentence in enumerate(document):
                self.stats["sentences"] += 1
                yield self._sentence_instance(
                    tokenized, sentence_index, sentence.name or f"{file_path}:{sentence.line}"
                )
        self.stats["invalid_tag_sequences"] = self.tag_scheme.invalid()
        self.tag_scheme.report(file_path)
        skipped = {k: self.stats[k] for k in ("docstart_examples", "empty_examples") if self.stats[k]}
        if skipped:
            logger.info("%s: examples read as document separators or skipped: %s", file_path, skipped)
        if self.stats["truncated_sentences"]:
            # Documents longer than max_seq_length are no loss (each sentence takes the part of its document that
            # fits around it); sentences longer than it are, and are counted.
            logger.warning(
                "%s: %d of %d sentences have more subwords than max_seq_length allows and were cut (%d gold entities "
                "lost); stats: %s",
                file_path,
                self.stats["truncated_sentences"],
                self.stats["sentences"],
                self.stats["truncated_gold_entities"],
                self.stats,
            )
        else:
            logger.info("%s: %s", file_path, self.stats)
        if self.stats["gold_entities_too_long"]:
            # No span of the model reaches them: in evaluation each is a miss (a false negative).
            logger.warning(
                "%s: %d gold entities are longer than max_span_words (%d words): no span covers them, and they "
                "count as misses",
                file_path,
                self.stats["gold_entities_too_long"],
                self.max_span_words,
            )
        if self.stats["spans_with_positions_capped"]:
            # (as the original and transformers' models read them: a warning only where gold entities are cut)
            logger.log(
                logging.WARNING if self.stats["gold_entities_with_positions_capped"] else logging.INFO,
                "%s: %d of %d spans (%d gold entities) have more subwords than the checkpoint's max_mention_length "
                "(%d): a LUKE model's entity position ids keep their first %d, as transformers' LukeTokenizer does",
                file_path,
                self.stats["spans_with_positions_capped"],
                self.stats["spans"],
                self.stats["gold_entities_with_positions_capped"],
                self.position_cap,
                self.position_cap,
            )

    def read_documents(self, path: str, name: Optional[str] = None) -> Iterator[List[Sentence]]:
        """Parses a column file into documents of sentences (see `documents`); a malformed line raises naming file
        and line, and so does a file without sentences."""
        name = name or path
        mode = self.documents or "consecutive"
        if mode == "column":
            raise ValueError(f"{name}: documents 'column' is for datasets with a document id column, not column files")
        document: List[Sentence] = []
        words: List[str] = []
        tags: List[str] = []
        first_line = 0
        sentences = 0
        docstarts = 0
        default_columns = self.word_column == 0 and self.tag_column == -1

        def close_sentence() -> Iterator[List[Sentence]]:
            nonlocal sentences, document
            if words:
                spans = self.tag_scheme.spans(tags, f"{name}:{first_line}")
                document.append(Sentence(list(words), list(tags), first_line, spans=spans))
                sentences += 1
                words.clear()
                tags.clear()
                if mode == "example":
                    yield document
                    document = []

        hint = (
            f"set the reader's file_encoding (now {self.file_encoding!r}) to the file's, e.g. latin-1 for the original "
            "German CoNLL-2003 and CoNLL-2002 files, or convert the file"
        )
        separator = self.column_separator
        for number, line in enumerate(read_lines(path, encoding=self.file_encoding, hint=hint), start=1):
            if separator is None:
                columns = COLUMNS.split(line.strip(" \t"))
            else:
                columns = line.split(separator) if line.strip() else [""]
            if columns == [""]:
                yield from close_sentence()
            elif "-DOCSTART-" in (columns[0], _column(columns, self.word_column)):
                yield from close_sentence()
                docstarts += 1
                if number > 1 and mode == "consecutive":
                    yield document  # (an empty one, between two -DOCSTART- lines, is counted)
                document = []
            else:
                word, tag = _column(columns, self.word_column), _column(columns, self.tag_column)
                if tag is None or word is None or len(columns) < 2 or not TAG.match(tag):
                    expected = (
                        "'word ... NER' columns (e.g. 'word POS chunk NER') with an O/B-X/I-X tag last"
                        if default_columns
                        else f"the word in column {self.word_column} and an O/B-X/I-X tag in column {self.tag_column}"
                    )
                    raise ValueError(f"{name}:{number}: expected {expected}, got {line!r}")
                if not words:
                    first_line = number
                words.append(word)
                tags.append(tag)
        yield from close_sentence()
        if not sentences:
            raise ValueError(
                f"{name}: no sentences in the file (it is empty, or holds only -DOCSTART- and blank lines)"
            )
        if mode == "consecutive":
            yield document
        self._log_documents(name, mode, docstarts, column_file=True)

    def dataset_documents(self, rows: Rows) -> Iterator[List[Sentence]]:
        """The documents of a dataset's sentences (see `documents`, `columns`); a bad example raises naming it."""
        mode = self.documents or "example"
        tokens_column = self.columns.require(rows, "tokens")
        tags_column = self.columns.require(rows, "tags")
        document_column = self.columns.require(rows, "document") if mode == "column" else None
        names = LabelNames(rows, tags_column, self.label_names)
        document: List[Sentence] = []
        current: Any = None
        seen: Dict[Any, str] = {}
        sentences = docstarts = 0
        for index, row in rows:
            where = rows.where(index)
            words = cell(row, tokens_column, list, where)
            if words and words[0] == "-DOCSTART-":
                self.stats["docstart_examples"] += 1
                docstarts += 1
                if document and mode == "consecutive":
                    yield document
                    document = []
                continue
            if not words:
                self.stats["empty_examples"] += 1
                continue
            if not all(isinstance(word, str) for word in words):
                raise ValueError(f"{where}: column {tokens_column!r} should hold words (strings), not {words[:5]!r}")
            values = cell(row, tags_column, list, where)
            if len(values) != len(words):
                raise ValueError(f"{where}: {len(words)} words but {len(values)} tags in column {tags_column!r}")
            tags = [names(value, where) for value in values]
            if None in tags:
                raise ValueError(f"{where}: a tag of column {tags_column!r} is -1 (no label)")
            sentence = Sentence(list(words), tags, index, name=where, spans=self.tag_scheme.spans(tags, where))
            sentences += 1
            if mode == "example":
                yield [sentence]
                continue
            if document_column is not None:
                key = row[document_column]
                if key != current:
                    if key in seen:
                        raise ValueError(
                            f"{where}: document {key!r} of column {document_column!r} continues after other documents "
                            f"(it began at {seen[key]}); a document's examples must be consecutive"
                        )
                    seen[key] = where
                    current = key
                    if document:
                        yield document
                    document = []
            document.append(sentence)
        if document:
            yield document
        if not sentences:
            raise ValueError(f"{rows.name}: no sentences (no example with words in column {tokens_column!r})")
        self._log_documents(rows.name, mode, docstarts, column_file=False)

    def _log_documents(self, name: str, mode: str, docstarts: int, column_file: bool) -> None:
        """Says how sentences were grouped into documents: a warning where a default made a whole file one."""
        if mode == "consecutive" and not docstarts:
            logger.log(
                logging.WARNING if self.documents is None else logging.INFO,
                "%s: no -DOCSTART-: read as one document (each sentence takes context from its neighbours)%s",
                name,
                "; set the reader's documents to 'example' if its sentences are independent"
                if self.documents is None
                else "",
            )
        else:
            how = {
                "consecutive": "consecutive sentences, split at -DOCSTART-",
                "example": "each sentence its own (no context from other sentences)",
                "column": "consecutive examples of one document id",
            }[mode]
            default = " (the default for " + ("column files" if column_file else "datasets") + ")"
            logger.info("%s: documents: %s%s", name, how, default if self.documents is None else "")

    # --- instances -------------------------------------------------------------------------------------

    def text_to_instance(  # type: ignore[override]
        self,
        words: List[str],
        tags: Optional[List[str]] = None,
        left_context: Sequence[Sequence[str]] = (),
        right_context: Sequence[Sequence[str]] = (),
        instance_id: str = "input",
    ) -> Instance:
        """
        One sentence, with optional tags and document context (sentences of words before and after it).
        """
        if not words:
            raise ValueError(f"{instance_id}: the sentence has no words")
        if tags is not None and len(tags) != len(words):
            raise ValueError(f"{instance_id}: {len(words)} words but {len(tags)} tags")
        document = [Sentence(list(s), None, 0) for s in left_context]
        document.append(Sentence(list(words), list(tags) if tags is not None else None, 0))
        document += [Sentence(list(s), None, 0) for s in right_context]
        return self._sentence_instance(self._tokenize(document), len(left_context), instance_id)

    def document_to_instances(self, sentences: Sequence[Sequence[str]], document_id: str = "input") -> List[Instance]:
        """
        Every sentence of a document (lists of words, untagged), each with the document context that fits around it,
        as `_read` builds them from a file: one tokenisation for the whole document. Instance ids are
        `document_id#1`, `document_id#2`, ... (sentences numbered from 1).
        """
        if not sentences:
            raise ValueError(f"{document_id}: the document has no sentences")
        for number, words in enumerate(sentences, start=1):
            if not words:
                raise ValueError(f"{document_id}: sentence {number} of the document has no words")
        tokenized = self._tokenize([Sentence(list(words), None, 0) for words in sentences])
        return [self._sentence_instance(tokenized, i, f"{document_id}#{i + 1}") for i in range(len(sentences))]

    def _tokenize(self, document: List[Sentence]) -> TokenizedDocument:
        all_words = [w for s in document for w in s.words]
        if self.words_without_spaces:
            words, inside = tokenize_joined_words(self.tokenizer, all_words)
            self.stats["word_boundaries_inside_subwords"] = (
                self.stats.get("word_boundaries_inside_subwords", 0) + inside
            )
        else:
            words = tokenize_words(self.tokenizer, all_words)
        offsets = np.cumsum([0] + [len(s.words) for s in document])[:-1].tolist()
        return TokenizedDocument(document, words.ids, words.starts, words.ends, offsets)

    def _sentence_instance(self, doc: TokenizedDocument, index: int, instance_id: str) -> Instance:
        sentence = doc.sentences[index]
        first = doc.sentence_offsets[index]
        n_words = len(sentence.words)
        starts = doc.word_starts[first : first + n_words]
        ends = doc.word_ends[first : first + n_words]
        # Keep the words whose subwords fit; count what a too-long sentence loses.
        kept = int(np.searchsorted(ends - starts[0], self.max_words, side="right"))
        if kept == 0:
            raise ValueError(f"{instance_id}: the first word alone has more subwords than max_seq_length allows")
        gold = sentence.spans
        if gold is None and sentence.tags is not None:
            gold = self.tag_scheme.spans(sentence.tags, instance_id)
        if kept < n_words:
            lost = sum(1 for (_, end) in (gold or {}) if end > kept)
            self.stats["truncated_sentences"] = self.stats.get("truncated_sentences", 0) + 1
            self.stats["truncated_gold_entities"] = self.stats.get("truncated_gold_entities", 0) + lost
            logger.warning(
                "%s: sentence of %d subwords truncated to %d words of %d (max_seq_length); %d gold entities lost",
                instance_id,
                ends[-1] - starts[0],
                kept,
                n_words,
                lost,
            )
        if gold:
            too_long = sum(1 for (s, e) in gold if e - s > self.max_span_words)
            self.stats["gold_entities_too_long"] = self.stats.get("gold_entities_too_long", 0) + too_long

        # The window: the sentence's subwords plus as much context on both sides as fits, split evenly.
        sentence_start, sentence_end = int(starts[0]), int(ends[kept - 1])
        begin = centred_window(sentence_start, sentence_end - 1, len(doc.subword_ids), self.max_words)
        window = doc.subword_ids[begin : begin + self.max_words]
        shift = len(self.inputs.prefix) - begin  # document subword position -> input position

        layout = self._span_layout(kept)
        labels = np.full(layout.padded, None, dtype=object)  # None: padding, indexed as -1
        labels[: layout.count] = "O"
        for (start, end), kind in (gold or {}).items():
            if end <= kept and end - start <= self.max_span_words:
                labels[layout.index[start, end - start - 1]] = kind
        self._count_capped_spans(layout, starts, ends, labels)
        word_ids = self.inputs.with_special_tokens(window)
        fields = tensor_fields(
            self.inputs.pad_id,
            word_ids=word_ids,
            word_attention_mask=np.ones(len(word_ids), dtype=bool),
            entity_ids=layout.entity_ids,
            entity_attention_mask=layout.entity_mask,
            # First subword of the first word, last subword of the last word: the mention's positions.
            entity_start_positions=layout.chunked(starts[layout.starts] + shift),
            entity_end_positions=layout.chunked(ends[layout.ends - 1] - 1 + shift),
        )
        fields["metadata"] = MetadataField(
            {
                "id": instance_id,
                "words": sentence.words,
                "spans": layout.spans,
                # (the encoder's input length: the model skips padding without reading it; the longest span in
                # subwords: the model's entity position ids without reading the device)
                COUNTS: InputCounts(
                    passes=-(-len(layout.spans) // self.max_entities),
                    longest_mention=int((ends[layout.ends - 1] - starts[layout.starts]).max()) if layout.count else 1,
                    subwords=len(word_ids),
                ),
                "gold_spans": gold,
                "word_separator": "" if self.words_without_spaces else " ",
            }
        )
        if gold is not None:
            fields["labels"] = LabelArrayField(labels.reshape(-1, self.max_entities), self.label_namespace, instance_id)
        return Instance(fields)

    def _count_capped_spans(
        self, layout: "SpanLayout", starts: np.ndarray, ends: np.ndarray, labels: np.ndarray
    ) -> None:
        """Counts the spans (and gold entities: labels other than `O`) whose subwords outnumber `position_cap`."""
        subwords = ends[layout.ends - 1] - starts[layout.starts]  # (spans,)
        capped = subwords > self.position_cap
        self.stats["spans"] = self.stats.get("spans", 0) + layout.count
        gold_capped = int((labels[: layout.count][capped] != "O").sum())
        for key, count in (
            ("spans_with_positions_capped", int(capped.sum())),
            ("gold_entities_with_positions_capped", gold_capped),
        ):
            self.stats[key] = self.stats.get(key, 0) + count

    def _span_layout(self, words: int) -> "SpanLayout":
        """The spans of a sentence of `words` words depend only on its length: built once per length."""
        if words not in self._span_layouts:
            self._span_layouts[words] = SpanLayout(words, self.max_span_words, self.max_entities)
        return self._span_layouts[words]
