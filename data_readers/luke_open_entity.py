import json
import logging
from typing import Iterator, List, Optional, Tuple

import numpy as np
import torch
from allennlp.common.file_utils import cached_path
from allennlp.data import DatasetReader, Instance
from allennlp.data.fields import MetadataField, MultiLabelField, TensorField

from luke_allennlp.data.entities import TASK_ENTITY_VOCAB
from luke_allennlp.data.tokenization import load_fast_tokenizer, special_token_layout

logger = logging.getLogger(__name__)

# Open Entity's nine general types (Choi et al. 2018), the label set of the paper's Table 2.
GENERAL_TYPES = ("entity", "event", "group", "location", "object", "organization", "person", "place", "time")


@DatasetReader.register("luke_open_entity")
class LukeOpenEntityReader(DatasetReader):
    """
    Open Entity entity typing (paper §4.1): one instance per mention, a `[MASK]` entity over the mention's
    subwords, with the mention's general types as a multi-label target.

    Reads both formats of `../shared/data/open_entity/`: the ERNIE / paper JSON list of
    `{"sent", "start", "end", "labels"}` (character offsets, end exclusive), and the original crowd JSON lines
    `{"left_context_token", "mention_span", "right_context_token", "y_str", "annot_id"}`, of whose ultra-fine
    types only the nine general ones are kept.

    # Parameters

    model_name : `str`
        The checkpoint whose fast tokenizer to use.
    max_seq_length : `int`, optional (default = `256`)
        Longer inputs keep the mention and as much context around it as fits (counted and logged).
    label_namespace : `str`, optional (default = `"labels"`)
    """

    def __init__(self, model_name: str, max_seq_length: int = 256, label_namespace: str = "labels", **kwargs) -> None:
        super().__init__(manual_distributed_sharding=True, manual_multiprocess_sharding=True, **kwargs)
        self.tokenizer = load_fast_tokenizer(model_name)
        self.prefix, self.suffix = special_token_layout(self.tokenizer)
        self.max_seq_length = max_seq_length
        self.label_namespace = label_namespace
        self.truncated = 0

    def _read(self, file_path: str) -> Iterator[Instance]:
        self.truncated = 0
        for example_id, sentence, span, labels in self.shard_iterable(self.read_examples(cached_path(file_path))):
            yield self.text_to_instance(sentence, span, labels, example_id)
        if self.truncated:
            logger.warning("%s: %d inputs longer than max_seq_length were truncated around the mention", file_path, self.truncated)

    def read_examples(self, path: str) -> Iterator[Tuple[str, str, Tuple[int, int], List[str]]]:
        """(id, sentence, (start, end) characters, general types) for each example, in either format."""
        with open(path, encoding="utf-8") as f:
            text = f.read()
        if text.lstrip().startswith("["):  # the ERNIE / paper format
            for index, example in enumerate(json.loads(text)):
                example_id = f"{path}:{index}"
                try:
                    sentence, start, end, labels = example["sent"], example["start"], example["end"], example["labels"]
                except KeyError as e:
                    raise ValueError(f"{example_id}: missing field {e}") from None
                unknown = sorted(set(labels) - set(GENERAL_TYPES))
                if unknown:
                    raise ValueError(f"{example_id}: unknown types {unknown}; expected some of {GENERAL_TYPES}")
                yield example_id, sentence, (start, end), list(labels)
            return
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                example = json.loads(line)
                left, mention, right = example["left_context_token"], example["mention_span"], example["right_context_token"]
            except (json.JSONDecodeError, KeyError) as e:
                raise ValueError(f"{path}:{number}: not an Open Entity crowd example ({e})") from None
            prefix = " ".join(left) + (" " if left else "")
            sentence = prefix + mention + (" " if right else "") + " ".join(right)
            labels = [t for t in example.get("y_str", []) if t in GENERAL_TYPES]
            yield example.get("annot_id", f"{path}:{number}"), sentence, (len(prefix), len(prefix) + len(mention)), labels

    def text_to_instance(  # type: ignore[override]
        self, sentence: str, span: Tuple[int, int], labels: Optional[List[str]] = None, example_id: str = "input"
    ) -> Instance:
        start, end = span
        if not 0 <= start < end <= len(sentence):
            raise ValueError(f"{example_id}: mention span {list(span)} is out of range for a text of {len(sentence)} characters")
        encoding = self.tokenizer(sentence, add_special_tokens=False, return_offsets_mapping=True)
        offsets = np.array(encoding["offset_mapping"]).reshape(-1, 2)
        inside = np.nonzero((offsets[:, 0] < end) & (offsets[:, 1] > start))[0]
        if len(inside) == 0:
            raise ValueError(f"{example_id}: mention span {list(span)} covers no subword of {sentence!r}")
        ids = np.array(encoding["input_ids"])
        first, last = int(inside[0]), int(inside[-1])
        room = self.max_seq_length - len(self.prefix) - len(self.suffix)
        if len(ids) > room:  # keep the mention, centred in what fits
            self.truncated += 1
            begin = max(0, min(first - (room - (last - first + 1)) // 2, len(ids) - room))
            ids, first, last = ids[begin : begin + room], first - begin, last - begin
        word_ids = self.prefix + ids.tolist() + self.suffix
        shift = len(self.prefix)
        fields = {
            "word_ids": TensorField(torch.tensor(word_ids), padding_value=self.tokenizer.pad_token_id),
            "word_attention_mask": TensorField(torch.ones(len(word_ids), dtype=torch.bool), padding_value=False),
            "entity_ids": TensorField(torch.tensor([TASK_ENTITY_VOCAB["[MASK]"]])),
            "entity_start_positions": TensorField(torch.tensor([first + shift])),
            "entity_end_positions": TensorField(torch.tensor([last + shift])),
            "metadata": MetadataField({"id": example_id, "sentence": sentence, "span": [start, end]}),
        }
        if labels is not None:
            fields["labels"] = MultiLabelField(labels, label_namespace=self.label_namespace)
        return Instance(fields)
