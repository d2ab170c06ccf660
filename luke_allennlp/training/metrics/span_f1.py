from typing import Dict, Iterable, Tuple

from allennlp.training.metrics.metric import Metric

from luke_allennlp.training.metrics.counting_metric import CountingMetric, precision_recall_f1

Spans = Dict[Tuple[int, int], str]  # (start, end exclusive) -> type


@Metric.register("luke_span_f1")
class SpanF1(CountingMetric):
    """
    Span-level micro precision, recall and F1, overall and per type, as the `conlleval` script defines them:
    a predicted entity counts only if its start, end and type all match a gold entity.

    Returns `precision`, `recall` and `f1`; with `reset=True` (the end of an epoch, and `allennlp evaluate`) also
    `precision-X`, `recall-X`, `f1-X` for each type X, which would only crowd the progress bar during an epoch.
    Exact under distributed training (see `CountingMetric`).

    allennlp's `SpanBasedF1Measure` scores tag sequences; span models predict spans, so they are scored here.
    """

    COUNTERS = ("true_positives", "false_positives", "false_negatives")

    def __call__(self, predictions: Iterable[Spans], golds: Iterable[Spans]) -> None:  # type: ignore[override]
        true_positives, false_positives, false_negatives = (self._counts[name] for name in self.COUNTERS)
        for predicted, gold in zip(predictions, golds):
            for span, kind in predicted.items():
                if gold.get(span) == kind:
                    true_positives[kind] += 1
                else:
                    false_positives[kind] += 1
            for span, kind in gold.items():
                if predicted.get(span) != kind:
                    false_negatives[kind] += 1

    def get_metric(self, reset: bool = False) -> Dict[str, float]:
        counts = self.counts()
        tp, fp, fn = (counts[name] for name in self.COUNTERS)
        metrics: Dict[str, float] = {}
        if reset:
            for kind in sorted(set(tp) | set(fp) | set(fn)):
                scores = precision_recall_f1(tp[kind], tp[kind] + fp[kind], tp[kind] + fn[kind])
                metrics.update({f"{name}-{kind}": value for name, value in scores.items()})
            self.reset()
        total_tp = sum(tp.values())
        metrics.update(precision_recall_f1(total_tp, total_tp + sum(fp.values()), total_tp + sum(fn.values())))
        return metrics
