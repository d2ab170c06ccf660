import math
from typing import Dict, Optional

import torch
import torch.nn.functional as F
from allennlp.common.util import is_distributed
from allennlp.training.metrics.metric import Metric


@Metric.register("luke_masked_prediction")
class MaskedPrediction(Metric):
    """
    Accuracy and perplexity of masked-token prediction (masked words or masked entities), over every
    predicted position since the last reset: perplexity = exp(mean cross-entropy). Sums are gathered across
    distributed workers.
    """

    def __init__(self) -> None:
        self.reset()

    def __call__(  # type: ignore[override]
        self, logits: torch.Tensor, targets: torch.Tensor, loss: Optional[torch.Tensor] = None
    ) -> None:
        """
        logits: (positions, classes), targets: (positions,), for the predicted positions only. loss: their mean
        cross-entropy, if the caller has it already (it saves a second softmax over the classes).
        """
        logits, targets = logits.detach(), targets.detach()
        if loss is None:
            loss_sum = F.cross_entropy(logits.float(), targets, reduction="sum")
        else:
            loss_sum = loss.detach().float() * targets.numel()
        sums = torch.stack([
            loss_sum,
            logits.argmax(-1).eq(targets).sum().float(),
            torch.tensor(float(targets.numel()), device=logits.device),
        ])  # fmt: skip
        if is_distributed():
            torch.distributed.all_reduce(sums)
        loss, correct, count = sums.tolist()
        self._loss += loss
        self._correct += int(correct)
        self._count += int(count)

    def get_metric(self, reset: bool = False) -> Dict[str, float]:
        accuracy = self._correct / self._count if self._count else 0.0
        perplexity = math.exp(min(self._loss / self._count, 700.0)) if self._count else 0.0
        if reset:
            self.reset()
        return {"accuracy": accuracy, "perplexity": perplexity}

    def reset(self) -> None:
        self._loss, self._correct, self._count = 0.0, 0, 0
