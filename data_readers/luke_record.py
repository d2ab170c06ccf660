import logging
import re
from dataclasses import dataclass
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

import numpy as np
from allennlp.data import DatasetReader, Instance
from allennlp.data.fields import MetadataField

from luke_allennlp.data.example_warnings import ExampleWarnings
from luke_allennlp.data.inputs import COUNTS, InputCounts, TokenizedText, centred_window, tensor_fields, tokenize
from luke_allennlp.data.sources import Columns, SourceReader, cell
from luke_allennlp.data.windows import QuestionPassageEncoder, stack_window_entities, stack_windows
from luke_allennlp.resources.files import SeenIds, load_json, require
from luke_allennlp.resources.hf_datasets import Rows, first_json
from luke_allennlp.resources.task_entities import TASK_ENTITY_VOCAB
from luke_allennlp.resources.tokenization import load_fast_tokenizer

logger = logging.getLogger(__name__)

PLACEHOLDER = "@placeholder"
CharSpan = Tuple[int, int]  # characters, end INCLUSIVE (ReCoRD's convention)
MASK = TASK_ENTITY_VOCAB["[MASK]"]
STATS = (
    "passages",
    "queries",
    "windows",
    "split_passages",
    "truncated_queries",
    "mentions",
    "duplicate_mentions",
    "mentions_without_subwords",
    "mentions_cut_by_max_entities",
    "candidates",
    "candidates_without_window",
    "queries_without_gold_candidate",
    "queries_with_gold_outside_windows",
    "answers_not_matching_offsets",
    "mentions_found_by_text",
)


@dataclass
class RecordQuery:
    """One query of a ReCoRD file, validated; spans are character spans with inclusive ends."""

    query_id: str
    passage_id: str
    passage: str
    entities: List[CharSpan]
    query: str
    answers: Optional[List[str]]  # gold answer texts; None for unlabelled data


@DatasetReader.register("luke_record")
class LukeRecordReader(SourceReader):
    """
    Cloze-style QA on ReCoRD (paper §4.4).

    Reads the official JSON (`data[].passage.text`, `passage.entities[{start, end}]`, `qas[].query` with one
    `@placeholder`, `qas[].answers[{start, end, text}]`; all character ends INCLUSIVE). Each query becomes
    one instance: the query and passage in the tokenizer's pair format (`<s> query </s></s> passage </s>`),
    with BERT-style sliding windows over passages longer than one input, stacked as `(windows, words)`.
    In every window the first entity is a `[MASK]` entity over the subwords of `@placeholder` in the query,
    followed by one `[MASK]` entity per passage entity mention that lies wholly inside the window.

    Candidates are the distinct texts of the passage's entity mentions, in order of first appearance; a
    candidate is correct when its text equals a gold answer's text (what the official evaluation compares).
    As in the original LUKE code, each mention is its own entity and is scored on its own; `luke_record`
    trains every mention with its candidate's label and scores a candidate by its best mention in any window.

    Line breaks become spaces (the passages separate their `@highlight` lines with them), which keeps every
    character offset. Counted and logged per file (also in `self.stats`): passages split into several
    windows, queries cut to `max_query_length`, mentions cut by `max_entities`, candidates without any
    mention inside a window, queries whose gold answer is not a candidate or lies outside every window,
    and gold answers whose text differs from their offsets (the text is kept: the evaluation uses it).

    Datasets (`hf://super_glue:record@validation`, a `save_to_disk` directory, Parquet, JSON lines; see
    `luke_allennlp.data.sources`), one query per row in the Hub's SuperGLUE ReCoRD schema: `passage`, `query`,
    `entity_spans` (`{"text", "start", "end"}` lists, ends exclusive), `answers` (texts; an empty list is no
    answer, as the test split has) and `idx` (`{"passage", "query"}`, the ids). Rows of the older schema without
    `entity_spans` have only the entities' texts (`entities`): their mentions are every occurrence of each text in
    the passage between non-word characters (counted: `mentions_found_by_text`). Other column names: `columns`.

    # Parameters

    model_name : `str`
        The checkpoint whose fast tokenizer to use (directory or hub name).
    max_seq_length : `int`, optional (default = `512`)
        Subwords per window, special tokens included.
    doc_stride : `int`, optional (default = `128`)
        Subwords between the starts of consecutive windows over a long passage.
    max_query_length : `int`, optional (default = `90`)
        Longer queries keep this many subwords around the placeholder (counted). It is capped at half of
        what `max_seq_length` leaves after the special tokens, so that short inputs keep room for the passage.
    max_entities : `int`, optional (default = `128`)
        Entities per window, the placeholder included; mentions beyond it are cut (counted and logged).
    columns : `Dict[str, str]`, optional (default = `None`)
        Datasets: the column of each role not under its default name: `passage`, `query`, `entity_spans`,
        `entities`, `answers`, `id`.
    """

    ROLES = {
        "passage": ("passage",),
        "query": ("query",),
        "entity_spans": ("entity_spans",),
        "entities": ("entities",),
        "answers": ("answers",),
        "id": ("idx", "id"),
    }

    def __init__(
        self,
        model_name: str,
        max_seq_length: int = 512,
        doc_stride: int = 128,
        max_query_length: int = 90,
        max_entities: int = 128,
        columns: Optional[Dict[str, str]] = None,
        **kwargs,
    ) -> None:
        super().__init__(**kwargs)
        self.columns = Columns("luke_record", self.ROLES, columns)
        self.max_seq_length = max_seq_length  # (the longest input: checked against the model's positions)
        if max_entities < 2:
            raise ValueError(f"max_entities must leave room for the placeholder and a candidate, not {max_entities}")
        self.tokenizer = load_fast_tokenizer(model_name)
        self.encoder = QuestionPassageEncoder(
            self.tokenizer, max_seq_length, doc_stride, max_question_length=max_query_length
        )
        self.max_query_length = self.encoder.max_question_length  # capped for short inputs
        self.max_entities = max_entities
        self.stats: Dict[str, int] = dict.fromkeys(STATS, 0)
        self.warnings = ExampleWarnings(logger)
        self._passage: Optional[TokenizedText] = None  # the last passage tokenised

    # --- reading files -------------------------------------------------------------------------------

    def _read(self, file_path: str) -> Iterator[Instance]:
        self.stats = dict.fromkeys(STATS, 0)
        self.warnings = ExampleWarnings()  # said once per kind at the end of the read
        queries = 0
        for example in self.shard_iterable(self.read_source(file_path, self.read_queries, self.dataset_queries)):
            try:
                instance = self.text_to_instance(
                    example.passage,
                    example.query,
                    example.entities,
                    example.answers,
                    example.query_id,
                    passage_id=example.passage_id,
                )
            except ValueError as e:
                raise ValueError(f"{file_path}: query {e}") from None
            queries += 1
            yield instance
        self.warnings.report(logger, file_path, queries, "queries")
        self.warnings = ExampleWarnings(logger)
        logger.info("%s: %s", file_path, self.stats)

    def read_queries(self, path: str, name: Optional[str] = None) -> Iterator[RecordQuery]:
        """The queries of a ReCoRD file, validated; bad input raises an error naming the file and the passage
        or query id."""
        name = name or path
        data = load_json(path, name)
        if not isinstance(data, dict) or not isinstance(data.get("data"), list):
            raise ValueError(f"{name}: not a ReCoRD JSON file with a top-level 'data' list")
        seen = SeenIds("query id")
        labelled: Optional[bool] = None
        for index, entry in enumerate(data["data"]):
            passage_id = str(entry.get("id", f"#{index}")) if isinstance(entry, dict) else f"#{index}"
            where = f"{name}: passage {passage_id}"
            text = require(require(entry, "passage", dict, where), "text", str, where)
            entities = []
            for number, entity in enumerate(require(entry["passage"], "entities", list, where)):
                start, end = (
                    require(entity, "start", where=f"{where} entity {number}"),
                    require(entity, "end", where=f"{where} entity {number}"),
                )
                if not (isinstance(start, int) and isinstance(end, int) and 0 <= start <= end < len(text)):
                    raise ValueError(
                        f"{where}: entity {number} [{start}, {end}] (inclusive) is out of range for a passage of {len(text)} characters"
                    )
                entities.append((start, end))
            self.stats["passages"] += 1
            for qa in require(entry, "qas", list, where):
                query_id = str(require(qa, "id", where=where))
                where_query = f"{name}: query {query_id}"
                seen.check(query_id, where_query, f"passage {passage_id}")
                query = require(qa, "query", where=where_query)
                if not isinstance(query, str) or query.count(PLACEHOLDER) != 1:
                    raise ValueError(f"{where_query}: the query must contain {PLACEHOLDER} exactly once: {query!r}")
                answers = qa.get("answers") or None
                if labelled is None:
                    labelled = answers is not None
                elif labelled != (answers is not None):
                    raise ValueError(
                        f"{where_query}: {'has' if answers else 'has no'} answers, unlike the queries before it"
                    )
                texts = None
                if answers is not None:
                    texts = [
                        self._check_answer(answer, text, f"{where_query} answer {i}")
                        for i, answer in enumerate(answers)
                    ]
                yield RecordQuery(query_id, passage_id, text, entities, query, texts)

    def native_file(self, path: str) -> bool:
        """ReCoRD's JSON (one document with `version` and `data`); JSON lines, ... are datasets."""
        kind, first = first_json(path)
        return kind == "document" or (
            kind == "lines" and isinstance(first, dict) and bool({"data", "version"} & set(first))
        )

    def dataset_queries(self, rows: Rows) -> Iterator[RecordQuery]:
        """The queries of a dataset in the Hub's SuperGLUE ReCoRD schema (see the class's doc), validated."""
        passage_column, query_column = self.columns.require(rows, "passage"), self.columns.require(rows, "query")
        spans_column = self.columns.find(rows, "entity_spans")
        texts_column = None if spans_column else self.columns.require(rows, "entities")
        answers_column, id_column = self.columns.find(rows, "answers"), self.columns.find(rows, "id")
        if texts_column:
            logger.info("%s: no entity_spans: mentions are the occurrences of the entities' texts", rows.name)
        seen = SeenIds("query id")
        labelled: Optional[bool] = None
        last_passage = None
        for index, row in rows:
            where = rows.where(index)
            ids = row[id_column] if id_column else None
            if isinstance(ids, dict):  # SuperGLUE's {"passage": 0, "query": 3}
                passage_id, query_id = str(ids.get("passage")), f"{ids.get('passage')}-{ids.get('query')}"
            else:
                passage_id, query_id = where, (str(ids) if ids is not None else where)
            where_query = f"{rows.name}: query {query_id}" if id_column else where
            seen.check(query_id, where_query, f"row {index}")
            text = cell(row, passage_column, str, where_query)
            query = cell(row, query_column, str, where_query)
            if query.count(PLACEHOLDER) != 1:
                raise ValueError(f"{where_query}: the query must contain {PLACEHOLDER} exactly once: {query!r}")
            if spans_column:
                spans = cell(row, spans_column, dict, where_query)
                starts, ends = spans.get("start"), spans.get("end")
                if not isinstance(starts, list) or not isinstance(ends, list) or len(starts) != len(ends):
                    raise ValueError(
                        f"{where_query}: column {spans_column!r} should be {{'start': [...], 'end': [...]}} of equal "
                        f"lengths, not {str(spans)[:80]!r}"
                    )
                entities = [(start, end - 1) for start, end in zip(starts, ends)]  # (ends inclusive, as the files')
            else:
                entities = self._occurrences(text, cell(row, texts_column, list, where_query), where_query)
            for number, (start, end) in enumerate(entities):
                if not (isinstance(start, int) and isinstance(end, int) and 0 <= start <= end < len(text)):
                    raise ValueError(
                        f"{where_query}: entity {number} [{start}, {end}] (inclusive) is out of range for a passage "
                        f"of {len(text)} characters"
                    )
            answers = cell(row, answers_column, list, where_query) if answers_column else []
            if not all(isinstance(answer, str) for answer in answers):
                raise ValueError(f"{where_query}: column {answers_column!r} should hold answer texts, not {answers!r}")
            if labelled is None:
                labelled = bool(answers)
            elif labelled != bool(answers):
                raise ValueError(f"{where_query}: {'has' if answers else 'has no'} answers, unlike the rows before it")
            self.stats["passages"] += passage_id != last_passage  # (the queries of a passage come together)
            last_passage = passage_id
            yield RecordQuery(query_id, passage_id, text, entities, query, list(answers) if answers else None)

    def _occurrences(self, passage: str, texts: List[Any], where: str) -> List[CharSpan]:
        """Every occurrence of each entity text in the passage between non-word characters, as inclusive spans."""
        spans = []
        for text in texts:
            if not isinstance(text, str) or not text:
                raise ValueError(f"{where}: the entities should be non-empty texts, not {text!r}")
            for match in re.finditer(rf"(?<!\w){re.escape(text)}(?!\w)", passage):
                spans.append((match.start(), match.end() - 1))
        self.stats["mentions_found_by_text"] += len(spans)
        return sorted(spans)

    def _check_answer(self, answer: Any, passage: str, where: str) -> str:
        answer_text = require(answer, "text", where=where)
        start, end = require(answer, "start", where=where), require(answer, "end", where=where)
        if not (isinstance(answer_text, str) and isinstance(start, int) and isinstance(end, int)):
            raise ValueError(f"{where}: expected a text and integer start/end, got {answer!r}")
        if passage[start : end + 1] != answer_text:
            self.stats["answers_not_matching_offsets"] += 1
            self.warnings.add(
                "answers whose text differs from the passage at their offsets (the text is used)",
                f"{where.split(': ', 1)[-1]}: text {answer_text!r} differs from {passage[start : end + 1]!r} at "
                f"[{start}, {end}]",
            )
        return answer_text

    # --- instances -------------------------------------------------------------------------------------

    def text_to_instance(  # type: ignore[override]
        self,
        passage: str,
        query: str,
        entities: Sequence[CharSpan],
        answers: Optional[Sequence[str]] = None,
        query_id: str = "input",
        passage_id: Optional[str] = None,
    ) -> Instance:
        """
        One query. `entities` are the passage's entity mentions as character spans with INCLUSIVE ends (as in
        the ReCoRD files); `answers` are the gold answer texts, if known.
        """
        if query.count(PLACEHOLDER) != 1:
            raise ValueError(f"{query_id}: the query must contain {PLACEHOLDER} exactly once: {query!r}")
        for start, end in entities:
            if not 0 <= start <= end < len(passage):
                raise ValueError(
                    f"{query_id}: entity [{start}, {end}] (inclusive) is out of range for a passage of {len(passage)} characters"
                )
        stats = self.stats
        stats["queries"] += 1
        text = passage  # candidate texts come from the passage as given, to compare with the gold texts
        passage, query = passage.replace("\n", " "), query.replace("\n", " ")
        query_tokens, placeholder, cut = self._fit_query(query, query_id)
        query = query_tokens.text
        if self._passage is None or self._passage.text != passage:  # the queries of a passage come together
            self._passage = tokenize(self.tokenizer, passage)
        pair = self.encoder.encode(query, passage, self._passage, query_tokens)
        stats["truncated_queries"] += cut or pair.question_truncated > 0
        stats["windows"] += len(pair.windows)
        stats["split_passages"] += len(pair.windows) > 1
        question_span = pair.question.char_span_to_subwords(*placeholder)
        if question_span is None or pair.question.offsets[question_span[1], 1] < placeholder[1]:
            raise ValueError(
                f"{query_id}: {PLACEHOLDER} does not fit in max_query_length={self.max_query_length} subwords"
            )

        # Candidates: distinct mention texts in order of first appearance; mentions in passage order.
        spans = sorted(set(map(tuple, entities)))
        stats["duplicate_mentions"] += len(entities) - len(spans)
        candidates: List[str] = []
        candidate_spans: List[List[List[int]]] = []  # per candidate, its mentions [start, end] (inclusive)
        index_of: Dict[str, int] = {}
        mentions: List[Tuple[int, int, int]] = []  # (first subword, last subword, candidate)
        for start, end in spans:
            mention = text[start : end + 1]
            if mention not in index_of:
                index_of[mention] = len(candidates)
                candidates.append(mention)
                candidate_spans.append([])
            candidate_spans[index_of[mention]].append([start, end])
            subwords = pair.passage.char_span_to_subwords(start, end + 1)
            if subwords is None:
                stats["mentions_without_subwords"] += 1
                self.warnings.add(
                    "entities that cover no subword (not candidate mentions)",
                    f"{query_id} [{start}, {end}] {mention!r}",
                )
                continue
            mentions.append((*subwords, index_of[mention]))
        stats["mentions"] += len(spans)
        stats["candidates"] += len(candidates)

        # Per window: the placeholder, then the mentions wholly inside it, up to max_entities in all.
        windows = pair.windows
        width = min(
            self.max_entities, 1 + max(sum(w.contains(first, last) for first, last, _ in mentions) for w in windows)
        )
        rows = []  # per window, (entity id, first position, last position, candidate) of each entity
        in_window = np.zeros(len(candidates), dtype=bool)
        for row, window in enumerate(windows):
            inside = [
                (MASK, window.position(first), window.position(last), c)
                for first, last, c in mentions
                if window.contains(first, last)
            ]
            if len(inside) > width - 1:
                stats["mentions_cut_by_max_entities"] += len(inside) - (width - 1)
                self.warnings.add(
                    f"windows with mentions cut by max_entities={self.max_entities}",
                    f"{query_id} window {row} ({len(inside)} mentions, {len(inside) - (width - 1)} cut)",
                )
                inside = inside[: width - 1]
            first, last = (window.question_start + s for s in question_span)
            rows.append([(MASK, first, last, -1)] + inside)
            in_window[[c for *_, c in inside]] = True
        stats["candidates_without_window"] += int((~in_window).sum())
        table, mask, types = stack_window_entities(windows, rows, width)

        word_ids, word_types, word_mask = stack_windows(windows, self.tokenizer.pad_token_id)
        fields = tensor_fields(
            self.tokenizer.pad_token_id,
            word_ids=word_ids,
            word_attention_mask=word_mask,
            word_type_ids=word_types,
            entity_ids=table[..., 0],  # [MASK], [PAD] = 0 after the last
            entity_attention_mask=mask,
            entity_type_ids=types,
            entity_start_positions=table[..., 1],
            entity_end_positions=table[..., 2],
            entity_candidates=np.where(mask, table[..., 3], -1),
        )
        metadata = {
            "id": query_id,
            "passage_id": passage_id,
            "query": query,
            "candidates": candidates,
            "candidate_spans": candidate_spans,
            "answers": list(answers) if answers is not None else None,
            # (the model's passes and entity position ids, without reading the device)
            COUNTS: InputCounts(
                passes=sum(len(row) > 1 for row in rows),  # the windows holding a mention
                longest_mention=max(last - first + 1 for row in rows for _, first, last, _ in row),
            ),
        }
        if answers is not None:
            gold = set(answers)
            labels = np.array([c in gold for c in candidates], dtype=np.int64)
            if not labels.any():
                stats["queries_without_gold_candidate"] += 1
                self.warnings.add("queries where no candidate equals a gold answer", f"{query_id} {sorted(gold)}")
            elif not (labels.astype(bool) & in_window).any():
                stats["queries_with_gold_outside_windows"] += 1
                self.warnings.add("queries where no mention of a gold answer lies inside a window", query_id)
            fields.update(tensor_fields(self.tokenizer.pad_token_id, labels=labels))
        fields["metadata"] = MetadataField(metadata)
        return Instance(fields)

    def _fit_query(self, query: str, query_id: str) -> Tuple[TokenizedText, Tuple[int, int], bool]:
        """
        The query tokenised, cut to `max_query_length` subwords around the placeholder if it is longer, the
        placeholder's character span in it (end exclusive), and whether it was cut.
        """
        start = query.index(PLACEHOLDER)
        end = start + len(PLACEHOLDER)
        tokens = tokenize(self.tokenizer, query)
        keep = self.max_query_length
        if len(tokens.ids) <= keep:
            return tokens, (start, end), False
        first, last = tokens.char_span_to_subwords(start, end)
        if last - first + 1 > keep:
            raise ValueError(f"{query_id}: {PLACEHOLDER} does not fit in max_query_length={keep} subwords")
        begin = centred_window(first, last, len(tokens.ids), keep)
        cut_start, cut_end = int(tokens.offsets[begin, 0]), int(tokens.offsets[begin + keep - 1, 1])
        return tokenize(self.tokenizer, query[cut_start:cut_end]), (start - cut_start, end - cut_start), True
