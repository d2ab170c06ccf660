"""
Label fields that name their example when a label is not in the vocabulary (a label seen at evaluation but
never in training), instead of allennlp's bare `KeyError`.
"""

from typing import Iterable, List, Sequence

from allennlp.data.fields import LabelField, MultiLabelField
from allennlp.data.vocabulary import Vocabulary


def unknown_labels_error(source: str, labels: Iterable[str], namespace: str, vocab: Vocabulary) -> ValueError:
    """The error for labels missing from `namespace`: the example, the labels and the labels the vocabulary has."""
    known = vocab.get_token_to_index_vocabulary(namespace)
    unknown = sorted({str(label) for label in labels if label not in known})
    return ValueError(
        f"{source or 'an instance'}: label(s) {unknown} not in the {namespace!r} vocabulary, which has {sorted(known)}"
        " (a label never seen in the training data cannot be predicted)"
    )


def check_labels(source: str, labels: Iterable, namespace: str, vocab: Vocabulary) -> None:
    """Raises `unknown_labels_error` before allennlp's `get_token_index` would log ERROR lines ("Namespace: ...",
    "Token: ...") for a label that a namespace without an OOV token lacks."""
    known = vocab.get_token_to_index_vocabulary(namespace)
    if vocab._oov_token not in known and any(isinstance(label, str) and label not in known for label in labels):
        raise unknown_labels_error(source, labels, namespace, vocab)


class SourcedLabelField(LabelField):
    """A `LabelField` whose example (`source`, e.g. `file:id`) is named when its label is not in the vocabulary."""

    __slots__ = ["_source"]

    def __init__(self, label: str, label_namespace: str = "labels", source: str = "") -> None:
        super().__init__(label, label_namespace=label_namespace)
        self._source = source

    def index(self, vocab: Vocabulary) -> None:
        if self._label_id is None:
            check_labels(self._source, [self.label], self._label_namespace, vocab)
        try:
            super().index(vocab)
        except KeyError:
            raise unknown_labels_error(self._source, [self.label], self._label_namespace, vocab) from None


class SourcedMultiLabelField(MultiLabelField):
    """A `MultiLabelField` whose example (`source`) is named when one of its labels is not in the vocabulary."""

    __slots__ = ["_source"]

    def __init__(self, labels: Sequence[str], label_namespace: str = "labels", source: str = "") -> None:
        super().__init__(list(labels), label_namespace=label_namespace)
        self._source = source

    def index(self, vocab: Vocabulary) -> None:
        if self._label_ids is None:
            check_labels(self._source, self.labels, self._label_namespace, vocab)
        try:
            super().index(vocab)
        except KeyError:
            labels: List[str] = list(self.labels)  # type: ignore[arg-type]
            raise unknown_labels_error(self._source, labels, self._label_namespace, vocab) from None
