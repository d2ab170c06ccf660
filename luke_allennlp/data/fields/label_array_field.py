from collections import Counter
from typing import Dict, Optional

import numpy as np
import torch
from allennlp.data.fields.field import Field
from allennlp.data.vocabulary import Vocabulary

from luke_allennlp.data.fields.sourced_label_fields import unknown_labels_error

PADDING_INDEX = -1


class LabelArrayField(Field[torch.Tensor]):
    """
    An array of string labels (any shape), indexed into one vocabulary namespace and padded with -1, the
    index that losses ignore. One field holds all of an instance's span labels, where a `ListField` of
    `LabelField`s would build one Python object per span (hundreds per CoNLL sentence).

    # Parameters

    labels : `np.ndarray`
        Strings, or `None` where there is no label (padding inside the instance; indexed as -1).
    label_namespace : `str`, optional (default = `"labels"`)
    source : `str`, optional (default = `""`)
        Where the labels come from (e.g. `file:line`), named when a label is not in the vocabulary.
    """

    __slots__ = ["labels", "_label_namespace", "_indices", "_source"]

    def __init__(self, labels: np.ndarray, label_namespace: str = "labels", source: str = "") -> None:
        self.labels = np.asarray(labels, dtype=object)
        self._label_namespace = label_namespace
        self._source = source
        self._indices: Optional[np.ndarray] = None

    def count_vocab_items(self, counter: Dict[str, Dict[str, int]]) -> None:
        present = self.labels[self.labels != None]  # noqa: E711  (elementwise on an object array)
        for label, count in Counter(present.tolist()).items():
            counter[self._label_namespace][label] += count

    def index(self, vocab: Vocabulary) -> None:
        indices = np.full(self.labels.shape, PADDING_INDEX, dtype=np.int64)
        present = self.labels != None  # noqa: E711
        uniques, inverse = np.unique(self.labels[present].astype(str), return_inverse=True)
        known = vocab.get_token_to_index_vocabulary(self._label_namespace)
        if any(u not in known for u in uniques):
            raise unknown_labels_error(self._source, uniques, self._label_namespace, vocab)
        ids = np.array([known[u] for u in uniques], dtype=np.int64)
        indices[present] = ids[inverse] if len(uniques) else indices[present]
        self._indices = indices

    def get_padding_lengths(self) -> Dict[str, int]:
        return {f"dimension_{i}": size for i, size in enumerate(self.labels.shape)}

    def as_tensor(self, padding_lengths: Dict[str, int]) -> torch.Tensor:
        if self._indices is None:
            raise RuntimeError("LabelArrayField must be indexed before it is turned into a tensor")
        shape = [padding_lengths[f"dimension_{i}"] for i in range(self.labels.ndim)]
        tensor = torch.full(shape, PADDING_INDEX, dtype=torch.long)
        tensor[tuple(slice(0, n) for n in self._indices.shape)] = torch.from_numpy(self._indices)
        return tensor

    def empty_field(self) -> "LabelArrayField":
        field = LabelArrayField(np.empty((0,) * self.labels.ndim, dtype=object), self._label_namespace)
        field._indices = np.empty((0,) * self.labels.ndim, dtype=np.int64)
        return field

    def human_readable_repr(self):
        return self.labels.tolist()

    def __len__(self) -> int:
        return len(self.labels)
