import logging
from dataclasses import dataclass
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple, Union

import numpy as np
from allennlp.data import DatasetReader, Instance
from allennlp.data.fields import Field, MetadataField

from luke_allennlp.data.crosslingual_mentions import NONE, TRANSLATED, CrossLingualLinker, language_of_file
from luke_allennlp.data.entity_mentions import Mentions, check_entity_limits, entity_tensor_fields
from luke_allennlp.data.example_warnings import ExampleWarnings
from luke_allennlp.data.inputs import COUNTS, InputCounts, TokenizedText, tensor_fields, tokenize
from luke_allennlp.data.sources import Columns, SourceReader, cell
from luke_allennlp.data.windows import (
    EncodedPair,
    QuestionPassageEncoder,
    max_context_windows,
    stack_window_entities,
    stack_windows,
)
from luke_allennlp.resources.files import SeenIds, load_json, require
from luke_allennlp.resources.hf_datasets import Rows, first_json
from luke_allennlp.resources.tokenization import load_fast_tokenizer

logger = logging.getLogger(__name__)

STATS = (
    "questions",
    "windows",
    "split_passages",
    "truncated_questions",
    "answers_cutting_subwords",
    "answers_outside_windows",
    "pages_not_in_dictionary",
    "mentions",
    "mentions_not_in_entity_vocab",
    "mentions_too_long",
    "mentions_cut_by_max_entities",
    "contexts",
    "contexts_with_candidates",
    "contexts_with_translated_candidates",
    "contexts_without_candidates",
)
ANSWER_OUTSIDE_WINDOWS = "answers that fit in no window (their questions are labelled CLS in every window)"


@dataclass
class SquadQuestion:
    question_id: str
    title: str  # the article's title: the Wikipedia page the passage comes from
    context: str
    question: str
    answers: List[Tuple[int, str]]  # (character start, text); the first one trains


@DatasetReader.register("luke_squad")
class LukeSquadReader(SourceReader):
    """
    Extractive QA on SQuAD 1.1 (paper §4.5, Appendix C) for any fast tokenizer (LUKE/RoBERTa, BERT, XLNet).

    Reads the official JSON (`data[].title`, `data[].paragraphs[].context`, `.qas[].id`, `.question`,
    `.answers[{text, answer_start}]`). Each question becomes one instance: the question and its passage in
    the tokenizer's pair format (`<s> q </s></s> p </s>`, `[CLS] q [SEP] p [SEP]`, XLNet's `p <sep> q <sep>
    <cls>`), with BERT's `doc_stride` sliding windows over passages longer than one input, stacked as
    `(windows, words)`; the model decodes the best answer across all windows of the question.

    Labels come from the first gold answer (all of them are kept for the metric): its character span is
    mapped through the fast tokenizer's offsets to the first and last subword that overlap it; a window that
    does not hold both is labelled with the position of the tokenizer's CLS token (`<s>`/`[CLS]` first,
    XLNet's `<cls>` last), as BERT and XLNet do. An answer that starts or ends inside a subword (`Japan` in
    `Japanese`) gets the whole subword; such answers are counted.

    Entity inputs (optional, the paper's LUKE setting): with `mention_dictionary`, the names linked on the
    passage's source page (the article `title`) are found in the question and the passage by `NameMatcher`;
    each match whose target is in the entity vocabulary becomes an entity over the matched subwords, the
    question's in every window, the passage's in the windows that hold them whole. Names whose link
    probability is below `min_link_probability` are ignored (names ambiguous on a page are left out of the
    dictionary when it is built). Without `mention_dictionary` there are no entity inputs (the "w/o entity
    inputs" ablation of Table 5).

    In any language (mLUKE-E, the cross-lingual experiments of mLUKE): with an mLUKE checkpoint, a passage in
    language X gets the names linked on its page in X's mention dictionary (`mention_dictionary` as `{language:
    file}`), their targets X's titles in the multilingual entity vocabulary; a page found by its title as written
    (MLQA) or by its title's entity's X title (XQuAD's titles are English). Where X has no dictionary or it lacks
    the page, `translate_candidates_from` (e.g. `"en"`) translates that language's page candidates into X through
    the vocabulary's inter-language links: each target becomes its entity's X title, as a name to find in the X
    passage (see `luke_allennlp.data.crosslingual_mentions`). The language of a file is `language`, or else read
    from XQuAD's and MLQA's file names (`xquad.de.json`, `test-context-de-question-en.json`). Counted per file:
    contexts (passages), those with candidates (of their own language or translated) and those without.

    Datasets (`hf://squad@validation`, `hf://xquad:xquad.de@validation`, a `save_to_disk` directory, Parquet, Arrow,
    JSON lines; see `luke_allennlp.data.sources`), one question per row in the Hub's SQuAD schema: `id`, `title`
    (optional: XQuAD's rows have none, and without it there are no page entities), `context`, `question`,
    `answers` as `{"text": [...], "answer_start": [...]}` (or a list of `{"text", "answer_start"}`). Other column
    names: `columns`. Questions of one passage come one after another, as in the Hub's SQuAD.

    Bad input (a missing field, an answer whose `answer_start` does not point at its text, a repeated question
    id, an empty question or passage) raises an error naming the file and the question. Counted and logged
    per file (also in `self.stats`): passages split into several windows, questions cut to
    `max_question_length`, answers cutting a subword, answers that fit in no window (their question is
    labelled CLS in every window), pages missing from the dictionary, entity mentions, mentions whose
    target is not in the entity vocabulary, mentions longer than `max_mention_length`, mentions cut by
    `max_entities`; answers in no window and questions with mentions cut are one warning line each per file, with
    their count and the first few questions (`ExampleWarnings`).

    # Parameters

    model_name : `str`
        The checkpoint whose fast tokenizer to use (directory or hub name).
    max_seq_length : `int`, optional (default = `512`)
        Subwords per window, special tokens included.
    doc_stride : `int`, optional (default = `128`)
        Subwords between the starts of consecutive windows over a long passage.
    max_question_length : `int`, optional (default = `64`)
        Longer questions are cut to this many subwords (counted). It is capped at half of what `max_seq_length`
        leaves after the special tokens, so that short inputs keep room for the passage.
    question_first : `bool`, optional (default = `None`)
        Whether the question comes first in the pair; `None` follows the tokenizer (XLNet: passage first).
    mention_dictionary : `Union[str, Dict[str, str]]`, optional (default = `None`)
        The file written by `allennlp build-mention-dictionary` (SQLite, queried page by page; or JSON, loaded
        whole), or one per language (`{"en": ..., "de": ...}`, each that language's dump's); enables entity inputs.
    entity_vocab : `str`, optional (default = `None`)
        The entity vocabulary of the checkpoint's entity table (any format `EntityVocab.from_file` reads);
        `None` is the checkpoint's `entity_vocab.json` (an mLUKE checkpoint's `language:title` keys read as titles
        of their languages).
    min_link_probability : `float`, optional (default = `0.01`)
        Names linked less often than this when they appear in Wikipedia are ignored.
    max_entities : `int`, optional (default = `128`)
        Entities per window (question entities first); the rest are cut (counted).
    max_mention_length : `int`, optional (default = `30`)
        Longest mention in subwords; longer matches are skipped (counted).
    language : `str`, optional (default = `None`)
        The passages' language (a Wikipedia code: `de`, `zh`); `None`: from the file name (XQuAD, MLQA), else
        unknown (titles of any language of the vocabulary; an error with per-language dictionaries).
    translate_candidates_from : `str`, optional (default = `None`)
        A language of `mention_dictionary` whose page candidates are translated for passages of other languages
        whose own dictionary lacks the page (needs a multilingual entity vocabulary).
    columns : `Dict[str, str]`, optional (default = `None`)
        Datasets: the column of each role not under its default name: `id`, `title`, `context`, `question`,
        `answers`.
    """

    ROLES = {
        "id": ("id",),
        "title": ("title",),
        "context": ("context",),
        "question": ("question",),
        "answers": ("answers",),
    }

    def __init__(
        self,
        model_name: str,
        max_seq_length: int = 512,
        doc_stride: int = 128,
        max_question_length: int = 64,
        question_first: Optional[bool] = None,
        mention_dictionary: Optional[Union[str, Dict[str, str]]] = None,
        entity_vocab: Optional[str] = None,
        min_link_probability: float = 0.01,
        max_entities: int = 128,
        max_mention_length: int = 30,
        language: Optional[str] = None,
        translate_candidates_from: Optional[str] = None,
        columns: Optional[Dict[str, str]] = None,
        **kwargs,
    ) -> None:
        super().__init__(**kwargs)
        self.columns = Columns("luke_squad", self.ROLES, columns)
        self.max_seq_length = max_seq_length  # (the longest input: checked against the model's positions)
        self.tokenizer = load_fast_tokenizer(model_name)
        self.encoder = QuestionPassageEncoder(
            self.tokenizer, max_seq_length, doc_stride, max_question_length, question_first=question_first
        )
        if self.tokenizer.cls_token_id is None:
            raise ValueError(f"{model_name}: the tokenizer has no CLS token to label windows without the answer")
        check_entity_limits(max_entities, max_mention_length)
        self.max_entities = max_entities
        self.max_mention_length = max_mention_length
        self.min_link_probability = min_link_probability
        self.language = language
        self.linker: Optional[CrossLingualLinker] = None
        if mention_dictionary is not None:
            self.linker = CrossLingualLinker(
                model_name,
                mention_dictionary,
                entity_vocab,
                min_link_probability,
                max_mention_length,
                translate_candidates_from,
            )
            self.entity_vocab = self.linker.entity_vocab
        elif entity_vocab is not None or translate_candidates_from is not None:
            raise ValueError(
                "entity_vocab and translate_candidates_from are only used with mention_dictionary (entity inputs)"
            )
        self.stats: Dict[str, int] = dict.fromkeys(STATS, 0)
        self.warnings = ExampleWarnings(logger)  # (outside a read: logged as they come)
        # The questions of a passage come one after another: its subwords and mentions are computed once.
        self._passage_cache: Tuple[Optional[str], Optional[TokenizedText]] = (None, None)
        self._passage_mentions_cache: Tuple[Any, Optional[Mentions]] = (None, None)

    @property
    def mention_dictionary(self) -> Any:
        """The mention dictionary (the first, with one per language), None without entity inputs."""
        return next(iter(self.linker.linkers.values())).dictionary if self.linker is not None else None

    # --- reading files -------------------------------------------------------------------------------

    def _read(self, file_path: str) -> Iterator[Instance]:
        self.stats = dict.fromkeys(STATS, 0)
        self.warnings = ExampleWarnings()
        language = self.language or language_of_file(file_path)
        if self.linker is not None and language is None and self.linker.by_language():
            raise ValueError(
                f"{file_path}: which language are its passages in? The mention dictionaries are per language: give "
                "the reader's language (or name the file as XQuAD's xquad.de.json or MLQA's "
                "test-context-de-question-en.json)"
            )
        questions = self.read_source(file_path, self.read_questions, self.dataset_questions)
        for question in self.shard_iterable(questions):
            yield self.text_to_instance(
                question.question, question.context, question.answers, question.title, question.question_id, language
            )
        stats = self.stats
        if self.linker is not None:
            logger.info(
                "%s (%s): %d contexts, %d with entity candidates (%d translated), %d without",
                file_path,
                language or "language not given",
                stats["contexts"],
                stats["contexts_with_candidates"],
                stats["contexts_with_translated_candidates"],
                stats["contexts_without_candidates"],
            )
        self.warnings.report(logger, file_path, stats["questions"], "questions")
        self.warnings = ExampleWarnings(logger)
        logger.info("%s: %s", file_path, stats)

    @staticmethod
    def read_questions(path: str, name: Optional[str] = None) -> Iterator[SquadQuestion]:
        """The questions of a SQuAD file, validated; bad input raises an error naming the file and the question."""
        name = name or path
        data = load_json(path, name)
        if not isinstance(data, dict) or not isinstance(data.get("data"), list):
            raise ValueError(f"{name}: not a SQuAD JSON file with a top-level 'data' list")
        seen = SeenIds("question id")
        for a, article in enumerate(data["data"]):
            title = require(article, "title", str, f"{name}: article {a}")
            for p, paragraph in enumerate(require(article, "paragraphs", list, f"{name}: article {a} ({title})")):
                where = f"{name}: article {a} ({title}), paragraph {p}"
                context = require(paragraph, "context", str, where)
                for q, qa in enumerate(require(paragraph, "qas", list, where)):
                    question_id = require(qa, "id", str, f"{where}, question {q}")
                    at = f"{name}: question {question_id} ({title}, paragraph {p})"
                    seen.check(question_id, at, f"{title}, paragraph {p}")
                    question = require(qa, "question", str, at)
                    _check_not_empty(question, context, at)
                    answers = require(qa, "answers", list, at)
                    yield SquadQuestion(question_id, title, context, question, _check_answers(answers, context, at))

    def native_file(self, path: str) -> bool:
        """SQuAD's JSON (one document with `version` and `data`); JSON lines, CSV, ... are datasets."""
        kind, first = first_json(path)
        return kind == "document" or (
            kind == "lines" and isinstance(first, dict) and bool({"data", "version"} & set(first))
        )

    def dataset_questions(self, rows: Rows) -> Iterator[SquadQuestion]:
        """The questions of a dataset in the Hub's SQuAD schema, validated as a file's are."""
        context, question, answers = (self.columns.require(rows, role) for role in ("context", "question", "answers"))
        id_column, title_column = self.columns.find(rows, "id"), self.columns.find(rows, "title")
        if title_column is None:
            logger.info("%s: no title column: passages have no page (no page entities)", rows.name)
        seen = SeenIds("question id")
        for index, row in rows:
            where = rows.where(index)
            question_id = str(cell(row, id_column, (str, int), where)) if id_column else where  # type: ignore[arg-type]
            at = f"{rows.name}: question {question_id}" if id_column else where
            if id_column:
                seen.check(question_id, at, f"row {index}")
            title = cell(row, title_column, str, at) if title_column else None
            passage, text = cell(row, context, str, at), cell(row, question, str, at)
            _check_not_empty(text, passage, at)
            gold = row[answers]
            if isinstance(gold, dict):  # the Hub's {"text": [...], "answer_start": [...]}
                texts, starts = gold.get("text"), gold.get("answer_start")
                if not isinstance(texts, list) or not isinstance(starts, list) or len(texts) != len(starts):
                    raise ValueError(
                        f"{at}: column {answers!r} should be {{'text': [...], 'answer_start': [...]}} of equal lengths, "
                        f"not {str(gold)[:80]!r}"
                    )
                gold = [{"text": t, "answer_start": s} for t, s in zip(texts, starts)]
            elif not isinstance(gold, list):
                raise ValueError(f"{at}: column {answers!r} should hold the answers, not {str(gold)[:80]!r}")
            yield SquadQuestion(question_id, title, passage, text, _check_answers(gold, passage, at))

    # --- instances -------------------------------------------------------------------------------------

    def text_to_instance(  # type: ignore[override]
        self,
        question: str,
        context: str,
        answers: Optional[Sequence[Tuple[int, str]]] = None,
        title: Optional[str] = None,
        question_id: str = "input",
        language: Optional[str] = None,
    ) -> Instance:
        """
        One question. `answers`: gold (character start, text) pairs, the first giving the labels; `title`: the
        Wikipedia page of the passage, whose links give the entity inputs (with a mention dictionary); `language`:
        the passage's (default: the reader's).
        """
        _check_not_empty(question, context, question_id)
        language = language or self.language
        if self.linker is not None and language is None and self.linker.by_language():
            raise ValueError(
                f"{question_id}: which language is the passage in? The mention dictionaries are per "
                "language: give the reader's language or the input's"
            )
        stats = self.stats
        stats["questions"] += 1
        pair = self.encoder.encode(question, context, self._tokenize_passage(context))
        windows = pair.windows
        stats["windows"] += len(windows)
        stats["split_passages"] += len(windows) > 1
        stats["truncated_questions"] += pair.question_truncated > 0

        word_ids, type_ids, mask = stack_windows(windows, self.tokenizer.pad_token_id)
        passage_subwords = np.full(word_ids.shape, -1, dtype=np.int64)  # input position -> passage subword
        best = max_context_windows(windows, len(pair.passage.ids))
        max_context = np.zeros(word_ids.shape, dtype=bool)  # passage subwords with the most context here
        cls_positions = np.array([w.input_ids.index(self.tokenizer.cls_token_id) for w in windows], dtype=np.int64)
        for row, window in enumerate(windows):
            span = slice(window.passage_start, window.passage_start + window.passage_end - window.passage_begin)
            passage_subwords[row, span] = np.arange(window.passage_begin, window.passage_end)
            max_context[row, span] = best[window.passage_begin : window.passage_end] == row

        fields = tensor_fields(
            self.tokenizer.pad_token_id,
            word_ids=word_ids,
            word_attention_mask=mask,
            word_type_ids=type_ids,
            passage_subwords=passage_subwords,
            max_context=max_context,
        )
        longest = 1  # the longest entity mention, in subwords
        if self.linker is not None:
            fields.update(self._entity_fields(pair, title, question_id, language))
            spans = fields["entity_end_positions"].tensor - fields["entity_start_positions"].tensor  # type: ignore
            longest = int(spans.max()) + 1 if spans.numel() else 1
        if answers:
            first = self.answer_subwords(pair.passage, *answers[0])
            if first is not None and self.subword_text(pair.passage, *first) != answers[0][1].strip():
                stats["answers_cutting_subwords"] += 1
            starts, ends = cls_positions.copy(), cls_positions.copy()
            for row, window in enumerate(windows):
                if first is not None and window.contains(*first):
                    starts[row], ends[row] = window.position(first[0]), window.position(first[1])
            if first is None or not any(w.contains(*first) for w in windows):
                stats["answers_outside_windows"] += 1
                self.warnings.add(ANSWER_OUTSIDE_WINDOWS, f"{question_id} {answers[0][1]!r}")
            fields.update(tensor_fields(self.tokenizer.pad_token_id, start_positions=starts, end_positions=ends))
        # offsets stay numpy: the trainer moves the tensors of metadata to the GPU too.
        fields["metadata"] = MetadataField(
            {
                "id": question_id,
                "question": question,
                "context": context,
                "title": title,
                "answers": [text for _, text in answers] if answers else None,
                "answer_spans": list(answers) if answers else None,
                "offsets": pair.passage.offsets,
                # (the model's passes and entity position ids, without reading the device)
                COUNTS: InputCounts(passes=len(windows), longest_mention=longest),
            }
        )
        return Instance(fields)

    @staticmethod
    def answer_subwords(passage: TokenizedText, start: int, text: str) -> Optional[Tuple[int, int]]:
        """First and last passage subword of the answer at character `start` (its surrounding white space left
        out: some tokenizers' offsets include the space before a word), or None if it covers no subword."""
        end = start + len(text.rstrip())
        start += len(text) - len(text.lstrip())
        return passage.char_span_to_subwords(start, end) if start < end else None

    @staticmethod
    def subword_text(passage: TokenizedText, first: int, last: int) -> str:
        """The passage's text from subword `first` to subword `last`, without surrounding white space."""
        return passage.text[passage.offsets[first, 0] : passage.offsets[last, 1]].strip()

    def _tokenize_passage(self, context: str) -> TokenizedText:
        """The passage's subwords, tokenised once for the questions about it (they come one after another)."""
        if self._passage_cache[0] != context:
            self._passage_cache = (context, tokenize(self.tokenizer, context))
        return self._passage_cache[1]  # type: ignore[return-value]

    # --- entity inputs ---------------------------------------------------------------------------------

    def _entity_fields(
        self, pair: EncodedPair, title: Optional[str], question_id: str, language: Optional[str]
    ) -> Dict[str, Field]:
        """Entities of the matched names per window: the question's in every window, then the passage's that
        the window holds whole, up to `max_entities`."""
        assert self.linker is not None
        matcher, source = self.linker.page_matcher(title, language) if title is not None else (None, NONE)
        if title is not None and matcher is None:
            self.stats["pages_not_in_dictionary"] += 1
        key = (title, language, pair.passage.text)
        new_context = self._passage_mentions_cache[0] != key
        if new_context:  # (the questions of a passage come one after another)
            passage_mentions = self.linker.find(matcher, pair.passage) if matcher is not None else Mentions()
            self._passage_mentions_cache = (key, passage_mentions)
            self.stats["contexts"] += 1
            self.stats["contexts_with_candidates"] += source != NONE
            self.stats["contexts_with_translated_candidates"] += source == TRANSLATED
            self.stats["contexts_without_candidates"] += source == NONE
        passage = self._passage_mentions_cache[1]
        assert passage is not None
        question = self.linker.find(matcher, pair.question) if matcher is not None else Mentions()
        for name in ("not_in_entity_vocab", "too_long"):
            self.stats[f"mentions_{name}"] += getattr(question, name) + getattr(passage, name)
        self.stats["mentions"] += len(question.entities) + len(passage.entities)
        question, passage = question.entities, passage.entities
        windows = pair.windows
        rows, cut = [], 0
        for window in windows:
            inside = [(e, window.question_start + first, window.question_start + last) for e, first, last in question]
            inside += [
                (e, window.position(first), window.position(last))
                for e, first, last in passage
                if window.contains(first, last)
            ]
            cut += max(0, len(inside) - self.max_entities)
            rows.append(inside[: self.max_entities])
        if cut:
            self.stats["mentions_cut_by_max_entities"] += cut
            self.warnings.add(f"questions with entity mentions cut by max_entities={self.max_entities}", question_id)
        width = max(1, max(map(len, rows)))  # at least one (padding) entity, so that every batch has entity inputs
        table, mask, types = stack_window_entities(windows, rows, width)
        return entity_tensor_fields(self.tokenizer.pad_token_id, table, mask, types)


def _check_answers(answers: List[Any], context: str, at: str) -> List[Tuple[int, str]]:
    """(character start, text) of each answer, which must be at its `answer_start` in the passage."""
    if not answers:
        raise ValueError(f"{at}: no answers (unanswerable questions, SQuAD 2.0's, are not supported)")
    checked = []
    for number, answer in enumerate(answers):
        text = require(answer, "text", str, f"{at}, answer {number}")
        start = require(answer, "answer_start", int, f"{at}, answer {number}")
        if not text.strip():
            raise ValueError(f"{at}, answer {number}: the answer text is empty")
        if start < 0 or context[start : start + len(text)] != text:
            raise ValueError(
                f"{at}, answer {number}: the text {text!r} is not at answer_start {start} of the passage, "
                f"which has {context[start : start + len(text)]!r} there"
            )
        checked.append((start, text))
    return checked


def _check_not_empty(question: str, context: str, where: str) -> None:
    if not question.strip() or not context.strip():
        raise ValueError(f"{where}: the {'question' if context.strip() else 'passage'} is empty")
