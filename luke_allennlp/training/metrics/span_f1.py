from collections import Counter
from typing import Dict, Iterable, Tuple

from allennlp.training.metrics.metric import Metric

Spans = Dict[Tuple[int, int], str]  # (start, end exclusive) -> type


@Metric.register("luke_span_f1")
class SpanF1(Metric):
    """
    Span-level micro precision, recall and F1, overall and per type, as the `conlleval` script defines them:
    a predicted entity counts only if its start, end and type all match a gold entity.
    Returns `precision`, `recall`, `f1` and `precision-X`, `recall-X`, `f1-X` for each type X.
    """

    def __init__(self) -> None:
        self.reset()

    def __call__(self, predictions: Iterable[Spans], golds: Iterable[Spans]) -> None:  # type: ignore[override]
        for predicted, gold in zip(predictions, golds):
            for span, kind in predicted.items():
                if gold.get(span) == kind:
                    self._true_positives[kind] += 1
                else:
                    self._false_positives[kind] += 1
            for span, kind in gold.items():
                if predicted.get(span) != kind:
                    self._false_negatives[kind] += 1

    @staticmethod
    def _prf(tp: int, fp: int, fn: int) -> Tuple[float, float, float]:
        precision = tp / (tp + fp) if tp + fp else 0.0
        recall = tp / (tp + fn) if tp + fn else 0.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        return precision, recall, f1

    def get_metric(self, reset: bool = False) -> Dict[str, float]:
        metrics: Dict[str, float] = {}
        kinds = set(self._true_positives) | set(self._false_positives) | set(self._false_negatives)
        for kind in sorted(kinds):
            p, r, f = self._prf(self._true_positives[kind], self._false_positives[kind], self._false_negatives[kind])
            metrics.update({f"precision-{kind}": p, f"recall-{kind}": r, f"f1-{kind}": f})
        p, r, f = self._prf(
            sum(self._true_positives.values()), sum(self._false_positives.values()), sum(self._false_negatives.values())
        )
        metrics.update({"precision": p, "recall": r, "f1": f})
        if reset:
            self.reset()
        return metrics

    def reset(self) -> None:
        self._true_positives: Counter = Counter()
        self._false_positives: Counter = Counter()
        self._false_negatives: Counter = Counter()
