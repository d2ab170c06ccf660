from collections import Counter
from typing import Dict, Iterable, Sequence

from allennlp.training.metrics.metric import Metric

from luke_allennlp.training.metrics.counting_metric import CountingMetric, precision_recall_f1

NEGATIVE_LABELS = ("no_relation", "Other")


def relation_type(label: str) -> str:
    """The relation without its direction: `Component-Whole(e2,e1)` -> `Component-Whole`."""
    return label.split("(")[0]


@Metric.register("luke_relation_f1")
class RelationF1(CountingMetric):
    """
    Relation classification scores, as the official scorers compute them. Exact under distributed training.

    - `precision`, `recall`, `f1`: TACRED's scorer (micro, the negative class left out): a prediction of the
      negative class is no prediction; one of another relation is right only if it equals the gold label.
      Precision is 1.0 when nothing but the negative class is predicted (the scorer's convention).
    - `macro_f1`: the official SemEval-2010 Task 8 score, (9+1)-way with direction: for each relation type of the
      answer key (the gold labels, the negative class left out; a label's type is the label without its
      direction), precision = exactly right predictions / predictions of that type in either direction, recall =
      exactly right predictions / gold of that type; the F1s are averaged over the key's types. Predictions of a
      type the key does not have count as the negative class, as in the scorer.

    allennlp's `FBetaMeasure` gives precision 0 without predictions and has no direction-aware type level, so these
    are counted here.

    # Parameters

    negative_labels : `Sequence[str]`, optional (default = `("no_relation", "Other")`)
    """

    COUNTERS = ("correct", "predicted", "gold")  # by label, the negative ones left out

    def __init__(self, negative_labels: Sequence[str] = NEGATIVE_LABELS) -> None:
        self.negative = set(negative_labels)
        super().__init__()

    def __call__(self, predictions: Iterable[str], golds: Iterable[str]) -> None:  # type: ignore[override]
        correct, predicted, gold = (self._counts[name] for name in self.COUNTERS)
        for prediction, answer in zip(predictions, golds):
            if prediction not in self.negative:
                predicted[prediction] += 1
            if answer not in self.negative:
                gold[answer] += 1
                if prediction == answer:
                    correct[answer] += 1

    def get_metric(self, reset: bool = False) -> Dict[str, float]:
        counts = self.counts()
        correct, predicted, gold = (counts[name] for name in self.COUNTERS)
        metrics = precision_recall_f1(sum(correct.values()), sum(predicted.values()), sum(gold.values()))
        if not predicted:
            metrics["precision"] = 1.0  # f1 stays as computed: 0 unless recall is positive, which it cannot be
        by_type = {name: Counter() for name in self.COUNTERS}
        for name, counter in counts.items():
            for label, count in counter.items():
                by_type[name][relation_type(label)] += count
        key_types = sorted(by_type["gold"])
        per_type = [
            precision_recall_f1(by_type["correct"][t], by_type["predicted"][t], by_type["gold"][t])["f1"]
            for t in key_types
        ]
        metrics["macro_f1"] = sum(per_type) / len(per_type) if per_type else 0.0
        if reset:
            self.reset()
        return metrics
