from collections import Counter
from typing import Dict, Iterable, Sequence

from allennlp.training.metrics.metric import Metric

NEGATIVE_LABELS = ("no_relation", "Other")


@Metric.register("luke_relation_f1")
class RelationF1(Metric):
    """
    Relation classification scores.

    - `precision`, `recall`, `f1`: micro scores over all relations but the negative class, as TACRED's
      scorer defines them (a prediction of the negative class is no prediction; one of another relation is
      right only if it equals the gold label).
    - `macro_f1`: the official SemEval-2010 Task 8 score (9+1-way, direction taken into account): for each
      relation type (the label without its `(e1,e2)` direction), precision = right predictions / predictions
      of that type, recall = right predictions / gold of that type; F1 per type, averaged over the types seen,
      the negative class excluded.

    # Parameters

    negative_labels : `Sequence[str]`, optional (default = `("no_relation", "Other")`)
    """

    def __init__(self, negative_labels: Sequence[str] = NEGATIVE_LABELS) -> None:
        self.negative = set(negative_labels)
        self.reset()

    def __call__(self, predictions: Iterable[str], golds: Iterable[str]) -> None:  # type: ignore[override]
        for predicted, gold in zip(predictions, golds):
            if predicted not in self.negative:
                self._predicted += 1
                self._type_predicted[predicted.split("(")[0]] += 1
            if gold not in self.negative:
                self._gold += 1
                self._type_gold[gold.split("(")[0]] += 1
                if predicted == gold:
                    self._correct += 1
                    self._type_correct[gold.split("(")[0]] += 1

    @staticmethod
    def _f1(correct: int, predicted: int, gold: int) -> float:
        precision = correct / predicted if predicted else 0.0
        recall = correct / gold if gold else 0.0
        return 2 * precision * recall / (precision + recall) if precision + recall else 0.0

    def get_metric(self, reset: bool = False) -> Dict[str, float]:
        precision = self._correct / self._predicted if self._predicted else 0.0
        recall = self._correct / self._gold if self._gold else 0.0
        types = set(self._type_gold) | set(self._type_predicted)
        per_type = [self._f1(self._type_correct[t], self._type_predicted[t], self._type_gold[t]) for t in types]
        metrics = {
            "precision": precision,
            "recall": recall,
            "f1": self._f1(self._correct, self._predicted, self._gold),
            "macro_f1": sum(per_type) / len(per_type) if per_type else 0.0,
        }
        if reset:
            self.reset()
        return metrics

    def reset(self) -> None:
        self._correct = self._predicted = self._gold = 0
        self._type_correct: Counter = Counter()
        self._type_predicted: Counter = Counter()
        self._type_gold: Counter = Counter()
