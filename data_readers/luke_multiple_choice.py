from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np
import torch
from allennlp.data import DatasetReader, Instance
from allennlp.data.fields import Field, MetadataField, TensorField

from luke_allennlp.data.inputs import COUNTS, InputCounts, stack, tensor_fields
from luke_allennlp.data.sentence_inputs import JsonLinesTaskReader, require_text
from luke_allennlp.resources.files import require

JCOMMONSENSEQA_CHOICES = ("choice0", "choice1", "choice2", "choice3", "choice4")


@DatasetReader.register("luke_multiple_choice")
class LukeMultipleChoiceReader(JsonLinesTaskReader):
    """
    Multiple-choice QA from JSON lines, one question a line: JCommonsenseQA (`{"q_id", "question", "choice0"..
    "choice4", "label"}` with the label the correct choice's index) or another dataset with other field names,
    the choices in fields of their own or in one list field (`choices_field`). One instance per question: each
    choice paired with the question (`question </s></s> choice` in the tokenizer's pair format, as transformers'
    `run_swag.py` that JGLUE fine-tunes with pairs them), stacked as `(choices, words)`, each cut to `max_seq_length`
    (longest side first, counted in `stats` and logged).

    Datasets too (`hf://NAME[:CONFIG][@SPLIT]`, a `save_to_disk` directory, Parquet, Arrow, CSV, TSV; see
    `luke_allennlp.data.sources`), their columns read as the fields; a `choices_field` may hold records with a `text`
    list (and a `label` list that a string label is looked up in: CommonsenseQA's `choices` and `answerKey`).

    Bad input raises an error naming the file and line: not JSON, a missing or empty question or choice, fewer than
    two choices, a label that is not the index of a choice, a repeated id, a label missing on some lines only. A
    file without any label (a test split) gives unlabelled instances.

    # Parameters

    model_name : `str`
        The checkpoint whose fast tokenizer to use.
    max_seq_length : `int`, optional (default = `64`)
        Subwords per (question, choice) input, special tokens included.
    question_field : `str`, optional (default = `"question"`)
    choice_fields : `List[str]`, optional (default = `["choice0", ..., "choice4"]`, JCommonsenseQA's)
    choices_field : `str`, optional (default = `None`)
        One field holding the list of choices (e.g. `"choices"`), instead of `choice_fields`.
    label_field : `str`, optional (default = `"label"`)
    id_field : `str`, optional (default = `None`)
        The field holding the example id (`q_id`); `None`: `file:line`.
    mention_dictionary, entity_vocab, min_link_probability, max_entities, max_mention_length :
        Optional entity inputs, off by default (`JsonLinesTaskReader`): each (question, choice) input its own.
    """

    def __init__(
        self,
        model_name: str,
        max_seq_length: int = 64,
        question_field: str = "question",
        choice_fields: List[str] = JCOMMONSENSEQA_CHOICES,  # type: ignore[assignment]
        choices_field: Optional[str] = None,
        label_field: str = "label",
        id_field: Optional[str] = None,
        **kwargs,
    ) -> None:
        super().__init__(model_name, max_seq_length, label_field, id_field, **kwargs)
        self.question_field = question_field
        self.choice_fields = list(choice_fields)
        self.choices_field = choices_field

    def example(self, record: Dict[str, Any], where: str, has_label: bool) -> Tuple[str, List[str], Optional[int]]:
        """(question, choices, label index or None)."""
        question = require_text(record, self.question_field, where)
        keys = None
        if self.choices_field is not None:
            choices = require(record, self.choices_field, (list, dict), where)
            if isinstance(choices, dict):  # {"label": ["A", ...], "text": [...]}
                keys = choices.get("label")
                choices = require(choices, "text", list, f"{where}: field {self.choices_field!r}")
            for index, choice in enumerate(choices):
                if not isinstance(choice, str) or not choice.strip():
                    raise ValueError(f"{where}: choice {index} should be a non-empty string, not {choice!r}")
        else:
            choices = [require_text(record, field, where) for field in self.choice_fields]
        label = None
        if has_label:
            label = require(record, self.label_field, (int, str) if keys else int, where)
            if isinstance(label, str):
                if label not in keys:
                    raise ValueError(f"{where}: label {label!r} is not one of the choices' labels {keys}")
                label = keys.index(label)
        check_choices(choices, label, where)
        return question, choices, label

    def text_to_instance(  # type: ignore[override]
        self, question: str, choices: Sequence[str], label: Optional[int] = None, example_id: str = "input"
    ) -> Instance:
        """One question with its choices; `label` the index of the correct choice, if known."""
        check_choices(choices, label, example_id)
        encoded = [self.encode(question, choice, example_id) for choice in choices]
        pad_id = self.tokenizer.pad_token_id
        fields: Dict[str, Field] = tensor_fields(
            pad_id,
            word_ids=stack([ids for ids, _, _ in encoded], pad_id),  # (choices, words)
            word_attention_mask=stack([np.ones(len(ids), dtype=bool) for ids, _, _ in encoded], False, dtype=bool),
            word_type_ids=stack([types for _, types, _ in encoded], 0),
        )
        if self.linker is not None:  # (choices, entities)
            fields.update(self.entity_fields([e for _, _, e in encoded], [types for _, types, _ in encoded]))
        if label is not None:
            fields["label"] = TensorField(torch.tensor(label, dtype=torch.long))
        mentions = [last - first + 1 for _, _, entities in encoded for _, first, last in entities or ()]
        counts = InputCounts(passes=len(choices), longest_mention=max(mentions, default=1))  # (one pass per choice)
        fields["metadata"] = MetadataField(
            {"id": example_id, "question": question, "choices": list(choices), "label": label, COUNTS: counts}
        )
        return Instance(fields)


def check_choices(choices: Sequence[str], label: Optional[int], where: str) -> None:
    if len(choices) < 2:
        raise ValueError(f"{where}: {len(choices)} choice(s); a question needs at least two")
    if label is not None and not 0 <= label < len(choices):
        raise ValueError(f"{where}: label {label} is not the index of one of the {len(choices)} choices")
