"""
Pearson and Spearman correlation of predicted and gold scores over a whole split (STS-B, JSTS), exact under
distributed training: each process keeps its (prediction, gold) pairs and `get_metric` gathers every process's
pairs before computing, as a correlation is not a sum of per-batch parts.
"""

from typing import Any, Dict, List, Tuple

import numpy as np
import torch
from allennlp.common.util import is_distributed
from allennlp.training.metrics.metric import Metric


def ranks(values: np.ndarray) -> np.ndarray:
    """1-based ranks, ties sharing the mean of their ranks (scipy's `rankdata(method="average")`)."""
    order = np.argsort(values, kind="mergesort")
    ordered = values[order]
    # Runs of equal values: each gets the mean of the positions it spans.
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
    ends = np.r_[starts[1:], len(values)]
    mean_rank = (starts + ends + 1) / 2.0  # mean of (start+1 .. end)
    out = np.empty(len(values), dtype=np.float64)
    out[order] = np.repeat(mean_rank, ends - starts)
    return out


def pearson(x: np.ndarray, y: np.ndarray) -> float:
    """Pearson's r; 0 when either side is constant (undefined) or there are fewer than two pairs."""
    if len(x) < 2:
        return 0.0
    x, y = x - x.mean(), y - y.mean()
    denominator = np.sqrt((x * x).sum() * (y * y).sum())
    return float((x * y).sum() / denominator) if denominator > 0 else 0.0


@Metric.register("luke_correlation")
class Correlation(Metric):
    """
    `pearson` and `spearman` (Pearson's r of the ranks, ties averaged) of predictions against gold scores over every
    pair seen since the last reset, in all processes. Call it with (batch,) tensors or sequences of floats; tensors
    on a device are read from it when the metric is (a training step does not wait for them). `state_dict` holds
    plain lists, so a training checkpoint carries the metric's state exactly.
    """

    supports_distributed = True
    # Every process makes its one collective call when the metric is read, not at each batch: a process that
    # validates no batch still reads it with the others (see `even_batches.metrics_reduced_per_batch`).
    gathered_when_read = True

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self._predictions: List[float] = []
        self._golds: List[float] = []
        self._pending: List[Tuple[torch.Tensor, torch.Tensor]] = []  # (predictions, golds) not read yet

    def __call__(self, predictions: Any, gold_labels: Any, mask: Any = None) -> None:  # type: ignore[override]
        predictions, gold_labels = self.detach_tensors(predictions, gold_labels)
        predicted = torch.as_tensor(predictions, dtype=torch.float64).reshape(-1)
        gold = torch.as_tensor(gold_labels, dtype=torch.float64).reshape(-1)
        if predicted.shape != gold.shape:
            raise ValueError(f"{predicted.numel()} predictions but {gold.numel()} gold scores")
        if mask is not None:
            keep = torch.as_tensor(mask).reshape(-1).bool()
            predicted, gold = predicted[keep], gold[keep]
        self._pending.append((predicted, gold))

    def _settle(self) -> None:
        pending, self._pending = self._pending, []
        for predicted, gold in pending:
            self._predictions.extend(predicted.tolist())
            self._golds.extend(gold.tolist())

    def pairs(self) -> np.ndarray:
        """(pairs, 2) predictions and golds of every process (a collective call when distributed)."""
        self._settle()
        mine = (self._predictions, self._golds)
        if is_distributed():
            gathered: List[Any] = [None] * torch.distributed.get_world_size()
            torch.distributed.all_gather_object(gathered, mine)
        else:
            gathered = [mine]
        predicted = [p for part in gathered for p in part[0]]
        gold = [g for part in gathered for g in part[1]]
        return np.array([predicted, gold], dtype=np.float64).reshape(2, -1).T

    def get_metric(self, reset: bool = False) -> Dict[str, float]:
        pairs = self.pairs()
        predicted, gold = pairs[:, 0], pairs[:, 1]
        result = {"pearson": pearson(predicted, gold), "spearman": pearson(ranks(predicted), ranks(gold))}
        if reset:
            self.reset()
        return result

    def state_dict(self) -> Dict[str, Any]:
        self._settle()
        return {"predictions": list(self._predictions), "golds": list(self._golds)}

    def load_state_dict(self, state: Dict[str, Any]) -> None:
        self._predictions, self._golds = list(state["predictions"]), list(state["golds"])
        self._pending = []
