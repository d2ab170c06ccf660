from typing import Hashable, Iterable

from allennlp.training.metrics.metric import Metric

from luke_allennlp.training.metrics.multilabel_f1 import MultiLabelF1


@Metric.register("luke_entity_linking_f1")
class EntityLinkingF1(MultiLabelF1):
    """
    End-to-end entity linking: micro precision, recall and F1 of (span, entity) pairs. A predicted link is right
    only if a gold link has the same span and the same entity (a right span with a wrong entity is a false positive
    and a false negative). The scores are those of `MultiLabelF1` over link sets, exact under distributed training.
    """

    def __call__(self, predicted: Iterable[Iterable[Hashable]], gold: Iterable[Iterable[Hashable]]) -> None:  # type: ignore[override]
        """
        Per document (or any unit that spans are relative to), its predicted and its gold links, each link a hashable
        such as `(start, end, entity)`; repeated links count once.
        """
        for predicted_links, gold_links in zip(predicted, gold):
            predicted_set, gold_set = set(predicted_links), set(gold_links)
            self._counts["counts"].update(
                correct=len(predicted_set & gold_set), predicted=len(predicted_set), gold=len(gold_set)
            )
