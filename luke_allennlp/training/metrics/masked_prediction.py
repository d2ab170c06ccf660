import math
from typing import Any, Dict, Optional

import torch
import torch.nn.functional as F
from allennlp.training.metrics.metric import Metric

from luke_allennlp.training.metrics.counting_metric import gathering


@Metric.register("luke_masked_prediction")
class MaskedPrediction(Metric):
    """
    Accuracy and perplexity of masked-token prediction (masked words or masked entities), over every
    predicted position since the last reset: perplexity = exp(mean cross-entropy). Exact under distributed training
    (the sums of all processes). The sums stay on the device until `get_metric`, so a training step is not held up
    by a device sync per micro-batch.
    """

    supports_distributed = True
    # Every process makes its one collective call when the metric is read, not at each batch: a process that
    # validates no batch still reads it with the others (see `even_batches.metrics_reduced_per_batch`).
    gathered_when_read = True

    def __init__(self) -> None:
        self.reset()

    def __call__(  # type: ignore[override]
        self, logits: torch.Tensor, targets: torch.Tensor, loss: Optional[torch.Tensor] = None
    ) -> None:
        """
        logits: (positions, classes), targets: (positions,), for the predicted positions only (targets of -100,
        padding of a static-size gather, are not counted). loss: their mean cross-entropy, if the caller has it
        already (it saves a second softmax over the classes).
        """
        logits, targets = logits.detach(), targets.detach()
        counted = targets.ne(-100)
        count = counted.sum()
        if loss is None:
            loss_sum = F.cross_entropy(logits.float(), targets, reduction="sum")  # (ignores -100)
        else:
            loss_sum = loss.detach().float() * count
        correct = (logits.argmax(-1).eq(targets) & counted).sum()
        sums = torch.stack([loss_sum.double(), correct.double(), count.double()])
        self._sums = sums if self._sums is None else self._sums.to(sums.device) + sums

    def get_metric(self, reset: bool = False) -> Dict[str, float]:
        sums = self._sums.clone() if self._sums is not None else torch.zeros(3, dtype=torch.double)
        if gathering():
            if sums.device.type == "cpu" and torch.distributed.get_backend() == "nccl":
                sums = sums.cuda()
            torch.distributed.all_reduce(sums)
        loss, correct, count = sums.tolist()
        if reset:
            self.reset()
        return {
            "accuracy": correct / count if count else 0.0,
            "perplexity": math.exp(min(loss / count, 700.0)) if count else 0.0,
        }

    def reset(self) -> None:
        self._sums: Optional[torch.Tensor] = None  # (loss sum, correct, count)

    def state_dict(self) -> Dict[str, Any]:
        return {"sums": self._sums.cpu() if self._sums is not None else None}

    def load_state_dict(self, state: Dict[str, Any]) -> None:
        self._sums = state["sums"]
