import logging
from typing import Any, Iterator, List, Optional, Tuple

from allennlp.data import DatasetReader, Instance
from allennlp.data.fields import MetadataField

from luke_allennlp.data.fields import SourcedMultiLabelField
from luke_allennlp.data.mention_task_reader import MentionTaskReader
from luke_allennlp.data.sources import LabelNames, cell
from luke_allennlp.resources.files import SeenIds, parse_json, read_text, require, split_lines
from luke_allennlp.resources.hf_datasets import Rows, first_json
from luke_allennlp.resources.task_entities import TASK_ENTITY_VOCAB
from luke_allennlp.resources.tokenization import token_id

logger = logging.getLogger(__name__)

# Open Entity's nine general types (Choi et al. 2018), the label set of the paper's Table 2.
GENERAL_TYPES = ("entity", "event", "group", "location", "object", "organization", "person", "place", "time")


@DatasetReader.register("luke_open_entity")
class LukeOpenEntityReader(MentionTaskReader):
    """
    Open Entity entity typing (paper §4.1): one instance per mention, a `[MASK]` entity over the mention's
    subwords, with the mention's general types as a multi-label target.

    Reads both formats of `../shared/data/open_entity/`: the ERNIE / paper JSON list of
    `{"sent", "start", "end", "labels"}` (character offsets, end exclusive), and the original crowd JSON lines
    `{"left_context_token", "mention_span", "right_context_token", "y_str", "annot_id"}`, of whose ultra-fine
    types only the nine general ones are kept (an example may have none of them: an empty target, as in the
    paper format).

    Datasets (`hf://NAME[:CONFIG][@SPLIT]`, a `save_to_disk` directory, Parquet, Arrow, CSV, JSON lines; see
    `luke_allennlp.data.sources`), one mention per row: a span and a label list, `sent` (or `sentence`, `text`),
    `start` and `end` (characters, end exclusive) and `labels` (or `types`: a list of type names, or of `ClassLabel`
    integers named by the feature, else by `label_names`), and an `id` where there is one; or the crowd format's
    columns. Other column names: `columns`.

    Files are UTF-8 (a byte-order mark is ignored). Bad input raises an error naming the file and the example
    (index or line): undecodable bytes, malformed JSON, a missing field (`y_str` included), a type outside the
    nine in the paper format, a repeated `annot_id`. Counted in `stats` and logged: inputs longer than
    `max_seq_length` (`truncated_inputs`: they keep the mention, centred in what fits), mentions longer than that
    (`truncated_mentions`: they keep their first subwords), mentions without text (skipped,
    `skipped_empty_mentions`). A file without examples is an error.

    # Parameters

    model_name : `str`
        The checkpoint whose fast tokenizer to use.
    max_seq_length : `int`, optional (default = `256`)
        Longer inputs keep the mention and as much context around it as fits (counted and logged).
    entity_marker_token : `str`, optional (default = `None`)
        A token of the tokenizer put before and after the mention as a token, the entity covering both:
        `"<ent>"` gives the input of transformers' `LukeTokenizer(task="entity_classification")` (LUKE's released
        Open Entity model).
    label_namespace : `str`, optional (default = `"labels"`)
    types : `List[str]`, optional (default = `None`)
        The types a label must be one of; `None`: Open Entity's nine general types. The crowd format keeps only
        these of its types.
    columns : `Dict[str, str]`, optional (default = `None`)
        Datasets: the column of each role not under its default name: `text`, `start`, `end`, `labels`, `id`.
    label_names : `List[str]`, optional (default = `None`)
        Datasets whose labels are integers without `ClassLabel` names: the type of each integer, in order.
    """

    NAME = "luke_open_entity"
    ROLES = {
        "text": ("sent", "sentence", "text"),
        "start": ("start",),
        "end": ("end",),
        "labels": ("labels", "types"),
        "id": ("id",),
    }
    CROWD = ("left_context_token", "mention_span", "right_context_token", "y_str")

    def __init__(
        self,
        model_name: str,
        max_seq_length: int = 256,
        entity_marker_token: Optional[str] = None,
        label_namespace: str = "labels",
        types: Optional[List[str]] = None,
        **kwargs,
    ) -> None:
        super().__init__(model_name, max_seq_length, **kwargs)
        self.types = tuple(types) if types is not None else GENERAL_TYPES
        self.marker_ids = (
            None if entity_marker_token is None else [token_id(self.tokenizer, entity_marker_token, model_name)]
        )
        self.label_namespace = label_namespace

    def read_examples(
        self, path: str, name: Optional[str] = None
    ) -> Iterator[Tuple[str, str, Tuple[int, int], List[str]]]:
        """(id, sentence, (start, end) characters, general types) for each example, in either format."""
        name = name or path
        text = read_text(path, name)
        if text.lstrip().startswith("["):  # the ERNIE / paper format
            for index, example in enumerate(parse_json(text, name)):
                example_id = f"{name}:{index}"
                sentence = require(example, "sent", str, example_id)
                start, end = require(example, "start", int, example_id), require(example, "end", int, example_id)
                labels = self._check_types(require(example, "labels", list, example_id), example_id)
                yield example_id, sentence, (start, end), labels
            return
        seen = SeenIds("annot_id")
        for number, line in enumerate(split_lines(text), start=1):
            if not line.strip():
                continue
            where = f"{name}:{number}"
            example = parse_json(line, where)
            example_id = str(example.get("annot_id", where)) if isinstance(example, dict) else where
            seen.check(example_id, f"{where}: example {example_id}", f"line {number}")
            yield (example_id, *self._crowd_example(example, where))

    def _crowd_example(self, example: Any, where: str) -> Tuple[str, Tuple[int, int], List[str]]:
        """(sentence, mention span, types kept) of a crowd-format example."""
        crowd = f"{where}: not an Open Entity crowd example"
        left, right = (
            require(example, "left_context_token", list, crowd),
            require(example, "right_context_token", list, crowd),
        )
        mention, types = require(example, "mention_span", str, crowd), require(example, "y_str", list, crowd)
        prefix = " ".join(left) + (" " if left else "")
        sentence = prefix + mention + (" " if right else "") + " ".join(right)
        return sentence, (len(prefix), len(prefix) + len(mention)), [t for t in types if t in self.types]

    def _check_types(self, labels: List[Any], where: str) -> List[str]:
        unknown = sorted({str(label) for label in labels} - set(self.types))
        if unknown:
            raise ValueError(f"{where}: unknown types {unknown}; expected some of {self.types} (the reader's types)")
        return list(labels)

    def native_file(self, path: str) -> bool:
        """The paper format (a JSON array) and the crowd JSON lines; other JSON lines, CSV, ... are datasets."""
        kind, first = first_json(path)
        return kind == "array" or (kind == "lines" and isinstance(first, dict) and "left_context_token" in first)

    def dataset_examples(self, rows: Rows) -> Iterator[Tuple[str, str, Tuple[int, int], Optional[List[str]]]]:
        """(id, sentence, (start, end) characters, types) for each row (a span and a label list, or the crowd
        format's columns)."""
        crowd = all(column in rows.columns for column in self.CROWD) and not self.columns.named("text")
        if crowd:
            logger.info("%s: Open Entity crowd-format columns; types kept: %s", rows.name, ", ".join(self.types))
            for index, row in rows:
                where = rows.where(index)
                yield (str(row.get("annot_id") or where), *self._crowd_example(row, where))
            return
        text, start, end = (self.columns.require(rows, role) for role in ("text", "start", "end"))
        labels_column = self.columns.require(rows, "labels")
        id_column = self.columns.find(rows, "id")
        names = LabelNames(rows, labels_column, self.label_names)
        seen = SeenIds()
        for index, row in rows:
            where = rows.where(index)
            example_id = f"{rows.name}:{row[id_column]}" if id_column else where
            if id_column:
                seen.check(example_id, f"{where}: example {row[id_column]}", f"row {index}")
            labels = [names(value, where) for value in cell(row, labels_column, list, where)]
            span = (cell(row, start, int, where), cell(row, end, int, where))
            yield example_id, cell(row, text, str, where), span, self._check_types(labels, where)

    def text_to_instance(  # type: ignore[override]
        self, sentence: str, span: Tuple[int, int], labels: Optional[List[str]] = None, example_id: str = "input"
    ) -> Instance:
        """One mention, `span` its characters (end exclusive) in `sentence`; `labels` its types, if known."""
        start, end = span
        fields = self.inputs.encode(
            sentence, [(start, end)], [TASK_ENTITY_VOCAB["[MASK]"]], example_id, markers=self.marker_ids
        )
        fields["metadata"] = MetadataField({"id": example_id, "sentence": sentence, "span": [start, end]})
        if labels is not None:
            fields["labels"] = SourcedMultiLabelField(labels, self.label_namespace, source=example_id)
        return Instance(fields)
