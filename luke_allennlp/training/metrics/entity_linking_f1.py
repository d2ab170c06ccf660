from typing import Dict, Hashable, Iterable

from allennlp.nn.util import dist_reduce_sum
from allennlp.training.metrics.metric import Metric


@Metric.register("luke_entity_linking_f1")
class EntityLinkingF1(Metric):
    """
    End-to-end entity linking: micro precision, recall and F1 of (span, entity) pairs. A predicted link is right
    only if a gold link has the same span and the same entity (a right span with a wrong entity is a false positive
    and a false negative). Counts are summed across distributed processes.
    """

    def __init__(self) -> None:
        self.reset()

    def __call__(self, predicted: Iterable[Iterable[Hashable]], gold: Iterable[Iterable[Hashable]]) -> None:  # type: ignore[override]
        """
        Per document (or any unit that spans are relative to), its predicted and its gold links, each link a hashable
        such as `(start, end, entity)`; repeated links count once.
        """
        true_positives = predictions = golds = 0
        for predicted_links, gold_links in zip(predicted, gold):
            predicted_set, gold_set = set(predicted_links), set(gold_links)
            true_positives += len(predicted_set & gold_set)
            predictions += len(predicted_set)
            golds += len(gold_set)
        self._true_positives += int(dist_reduce_sum(true_positives))
        self._predictions += int(dist_reduce_sum(predictions))
        self._golds += int(dist_reduce_sum(golds))

    def get_metric(self, reset: bool = False) -> Dict[str, float]:
        precision = self._true_positives / self._predictions if self._predictions else 0.0
        recall = self._true_positives / self._golds if self._golds else 0.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        if reset:
            self.reset()
        return {"precision": precision, "recall": recall, "f1": f1}

    def reset(self) -> None:
        self._true_positives = self._predictions = self._golds = 0
