from typing import Dict

import torch
from allennlp.training.metrics.metric import Metric


@Metric.register("luke_multilabel_f1")
class MultiLabelF1(Metric):
    """
    Micro precision, recall and F1 of multi-label predictions, the "loose micro" scores of entity typing
    (Ling & Weld 2012; the LUKE paper's Table 2): precision = sum |predicted & gold| / sum |predicted|,
    recall = sum |predicted & gold| / sum |gold|, over all examples.
    """

    def __init__(self) -> None:
        self.reset()

    def __call__(self, predictions: torch.Tensor, gold: torch.Tensor, mask=None) -> None:  # type: ignore[override]
        """predictions, gold: (batch, labels), 0/1."""
        predictions, gold = predictions.bool(), gold.bool()
        self._correct += int((predictions & gold).sum())
        self._predicted += int(predictions.sum())
        self._gold += int(gold.sum())

    def get_metric(self, reset: bool = False) -> Dict[str, float]:
        precision = self._correct / self._predicted if self._predicted else 0.0
        recall = self._correct / self._gold if self._gold else 0.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        if reset:
            self.reset()
        return {"precision": precision, "recall": recall, "f1": f1}

    def reset(self) -> None:
        self._correct, self._predicted, self._gold = 0, 0, 0
