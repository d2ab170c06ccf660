from typing import Optional

import torch
from allennlp.training.metrics.metric import Metric

from luke_allennlp.training.metrics.counting_metric import CountingMetric


@Metric.register("luke_accuracy")
class Accuracy(CountingMetric):
    """
    Top-1 accuracy of (batch, classes) scores against (batch,) gold labels, as allennlp's `CategoricalAccuracy`
    (ties go to the first class), counted on the device and read when the metric is: a training step does not wait
    for it. Exact under distributed training (see `CountingMetric`).
    """

    COUNTERS = ("counts",)

    def __call__(  # type: ignore[override]
        self, predictions: torch.Tensor, gold_labels: torch.Tensor, mask: Optional[torch.Tensor] = None
    ) -> None:
        predictions, gold_labels = predictions.detach(), gold_labels.detach()
        right = predictions.argmax(-1).eq(gold_labels.long())
        if mask is None:
            correct, total = right.sum(), gold_labels.numel()
            self.defer(lambda: self._counts["counts"].update(correct=int(correct), total=total))
        else:
            mask = mask.detach().bool()
            sums = torch.stack([(right & mask).sum(), mask.sum()])
            self.defer(lambda: self._counts["counts"].update(dict(zip(("correct", "total"), sums.tolist()))))

    def get_metric(self, reset: bool = False) -> float:  # type: ignore[override]
        counts = self.counts()["counts"]
        if reset:
            self.reset()
        return counts["correct"] / counts["total"] if counts["total"] else 0.0
