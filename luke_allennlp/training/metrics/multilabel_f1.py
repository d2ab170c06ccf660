from typing import Dict

import torch
from allennlp.training.metrics.metric import Metric

from luke_allennlp.training.metrics.counting_metric import CountingMetric, precision_recall_f1


@Metric.register("luke_multilabel_f1")
class MultiLabelF1(CountingMetric):
    """
    Micro precision, recall and F1 of multi-label predictions, the "loose micro" scores of entity typing
    (Ling & Weld 2012; the LUKE paper's Table 2): precision = sum |predicted & gold| / sum |predicted|,
    recall = sum |predicted & gold| / sum |gold|, over all examples. Exact under distributed training.

    allennlp's `F1MultiLabelMeasure(average="micro")` computes the same numbers from thresholded scores, but keeps
    float32 counts, raises before its first batch and names F1 `fscore`; these integer counts avoid all three.
    """

    COUNTERS = ("counts",)

    def __call__(self, predictions: torch.Tensor, gold: torch.Tensor, mask=None) -> None:  # type: ignore[override]
        """predictions, gold: (batch, labels), 0/1."""
        predictions, gold = predictions.detach().bool(), gold.detach().bool()
        # Counted on the device, read when the metric is (a training step does not wait for it).
        sums = torch.stack([(predictions & gold).sum(), predictions.sum(), gold.sum()])
        self.defer(lambda: self._counts["counts"].update(dict(zip(("correct", "predicted", "gold"), sums.tolist()))))

    def get_metric(self, reset: bool = False) -> Dict[str, float]:
        counts = self.counts()["counts"]
        if reset:
            self.reset()
        return precision_recall_f1(counts["correct"], counts["predicted"], counts["gold"])
