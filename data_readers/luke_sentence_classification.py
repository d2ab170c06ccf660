from typing import Any, Dict, List, Optional, Tuple

import torch
from allennlp.data import DatasetReader, Instance
from allennlp.data.fields import Field, LabelField, MetadataField, TensorField

from luke_allennlp.data.inputs import tensor_fields
from luke_allennlp.data.sentence_inputs import JsonLinesTaskReader, require_text
from luke_allennlp.data.sources import LabelNames
from luke_allennlp.resources.hf_datasets import Rows


@DatasetReader.register("luke_sentence_classification")
class LukeSentenceClassificationReader(JsonLinesTaskReader):
    """
    Single-sentence and sentence-pair classification or regression from JSON lines, one example a line: MARC-ja
    (`{"sentence", "label": "positive"|"negative", "review_id"}`), JNLI (`{"sentence_pair_id", "sentence1", "sentence2",
    "label": "entailment"|...}`), JSTS (the same with a float `label` from 0 to 5), and GLUE-style English data
    exported as JSON lines (SST-2, MNLI, STS-B, ...) with other field names. One instance per line: the sentence
    (or the pair, in the tokenizer's pair format) cut to `max_seq_length` (longest side first, counted in `stats`
    and logged).

    Datasets too (`hf://NAME[:CONFIG][@SPLIT]`, a `save_to_disk` directory, Parquet, Arrow, CSV, TSV; see
    `luke_allennlp.data.sources`), their columns read as the fields: a `ClassLabel` label is its name (-1, no label),
    an integer label without names needs `label_names` (else it is refused), a float is a regression score.

    Bad input raises an error naming the file and line: not JSON, a missing or empty text field, a label of the
    wrong kind (a string for regression, a class outside `labels`), a repeated id, a label missing on some lines
    only. A file without examples is an error; a file without any label (a test split) gives unlabelled instances.

    # Parameters

    model_name : `str`
        The checkpoint whose fast tokenizer to use.
    max_seq_length : `int`, optional (default = `128`)
        Subwords per input, special tokens included.
    sentence_fields : `List[str]`, optional (default = `["sentence1", "sentence2"]`)
        One field (single-sentence tasks: `["sentence"]`) or two (pairs).
    label_field : `str`, optional (default = `"label"`)
    id_field : `str`, optional (default = `None`)
        The field holding the example id (`sentence_pair_id`, `review_id`); `None`: `file:line`.
    regression : `bool`, optional (default = `False`)
        Labels are numbers (scores), not classes.
    labels : `List[str]`, optional (default = `None`)
        The classes a label must be one of (integers in a JSON-lines file are read as their decimal strings).
    label_names : `List[str]`, optional (default = `None`)
        Datasets whose labels are integers without `ClassLabel` names: the class of each integer, in order.
    label_namespace : `str`, optional (default = `"labels"`)
    mention_dictionary, entity_vocab, min_link_probability, max_entities, max_mention_length :
        Optional entity inputs, off by default (`JsonLinesTaskReader`).
    """

    def __init__(
        self,
        model_name: str,
        max_seq_length: int = 128,
        sentence_fields: List[str] = ("sentence1", "sentence2"),  # type: ignore[assignment]
        label_field: str = "label",
        id_field: Optional[str] = None,
        regression: bool = False,
        labels: Optional[List[str]] = None,
        label_names: Optional[List[str]] = None,
        label_namespace: str = "labels",
        **kwargs,
    ) -> None:
        super().__init__(model_name, max_seq_length, label_field, id_field, **kwargs)
        if len(sentence_fields) not in (1, 2):
            raise ValueError(f"sentence_fields names one field or two, not {list(sentence_fields)}")
        if regression and labels is not None:
            raise ValueError("labels (the classes) are for classification, not regression")
        self.sentence_fields = list(sentence_fields)
        self.regression = regression
        self.labels = None if labels is None else [str(label) for label in labels]
        if regression and label_names is not None:
            raise ValueError("label_names (the classes of integer labels) are for classification, not regression")
        self.label_names = label_names
        self.label_namespace = label_namespace

    def example(self, record: Dict[str, Any], where: str, has_label: bool) -> Tuple[str, Optional[str], Any]:
        """(first sentence, second sentence or None, label or None)."""
        texts = [require_text(record, field, where) for field in self.sentence_fields]
        label = self.check_label(record[self.label_field], where) if has_label else None
        return texts[0], (texts[1] if len(texts) > 1 else None), label

    def label_value(self, rows: Rows) -> Any:
        """A dataset's labels: scores for regression; else class names (`ClassLabel`'s, or `label_names`)."""
        if self.regression:
            return super().label_value(rows)
        return LabelNames(rows, self.label_field, self.label_names)

    def check_label(self, value: Any, where: str) -> Any:
        if self.regression:
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise ValueError(f"{where}: the label should be a number (regression), not {value!r}")
            return float(value)
        if isinstance(value, bool) or not isinstance(value, (str, int)):
            raise ValueError(f"{where}: the label should be a class name (a string or an integer), not {value!r}")
        label = str(value)
        if self.labels is not None and label not in self.labels:
            raise ValueError(f"{where}: unknown label {label!r}; expected one of {self.labels}")
        return label

    def text_to_instance(  # type: ignore[override]
        self, sentence1: str, sentence2: Optional[str] = None, label: Any = None, example_id: str = "input"
    ) -> Instance:
        """One sentence (`sentence2` None) or a pair; `label` a class name, or a score for regression, if known."""
        if (sentence2 is None) != (len(self.sentence_fields) == 1):
            reads = "pairs" if len(self.sentence_fields) == 2 else "single sentences"
            given = "a single sentence" if sentence2 is None else "a pair"
            raise ValueError(f"{example_id}: the reader reads {reads} ({self.sentence_fields}), not {given}")
        word_ids, type_ids, entities = self.encode(sentence1, sentence2, example_id)
        fields: Dict[str, Field] = tensor_fields(
            self.tokenizer.pad_token_id, word_ids=word_ids, word_attention_mask=word_ids >= 0, word_type_ids=type_ids
        )
        if entities is not None:
            fields.update(self.entity_fields([entities], [type_ids], single=True))
        metadata = {"id": example_id, "sentence1": sentence1, "sentence2": sentence2}
        if label is not None:
            if self.regression:
                # float64: the metric correlates the gold scores as written (2.4, not float32 2.4000001).
                fields["label"] = TensorField(torch.tensor(float(label), dtype=torch.float64))
            else:
                fields["label"] = LabelField(str(label), self.label_namespace)
            metadata["label"] = label
        fields["metadata"] = MetadataField(metadata)
        return Instance(fields)
