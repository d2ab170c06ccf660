"""
Training metrics without a device sync per step: the epoch's loss and token counts are summed on the device and read
only on report steps (every `metrics_every_num_batches`) and at the epoch's end; between reports a step never makes
the host wait for the device. Reports show this process's metrics so far; those of all processes are gathered once,
at the epoch's end.
"""

import math
from typing import Any, Dict, Optional, Tuple

import torch
from allennlp.models.model import Model
from allennlp.training import util as training_util

from luke_allennlp.training.metrics.counting_metric import local_metrics


def count_tokens(batch: Any) -> Tuple[Optional[torch.Tensor], int]:
    """(real tokens, positions) over the batch's attention masks (word and entity inputs): the real tokens as a
    tensor on the batch's device (a sum, read when reported), the positions as a host count (the masks' sizes); (None,
    0) if the batch has no masks. Neither makes the host wait for the device."""
    real: Optional[torch.Tensor] = None
    positions = 0
    if isinstance(batch, dict):
        for key, value in batch.items():
            if (
                isinstance(value, torch.Tensor)
                and key.endswith("mask")
                and value.dtype in (torch.bool, torch.long, torch.int)
            ):
                total, count = value.sum(), value.numel()
            elif isinstance(value, dict):
                total, count = count_tokens(value)  # type: ignore[assignment]
                if total is None:
                    continue
            else:
                continue
            real = total if real is None else real + total
            positions += count
    return real, positions


class EpochTotals:
    """This epoch's running sums: the step losses (allennlp's `train_loss`) and real tokens on the device, the
    attention-mask positions on the host."""

    def __init__(self, device: torch.device) -> None:
        self.device = device
        self.reset()

    def reset(self) -> None:
        self.loss = torch.zeros((), dtype=torch.float64, device=self.device)
        self.tokens: Optional[torch.Tensor] = None
        self.positions = 0

    def add_tokens(self, batch: Any) -> Optional[torch.Tensor]:
        """Counts the batch's tokens (see `count_tokens`); returns its real tokens (None without masks)."""
        real, positions = count_tokens(batch)
        if real is not None:
            self.tokens = real if self.tokens is None else self.tokens + real
            self.positions += positions
        return real

    def state(self) -> Dict[str, Any]:
        """Plain values, for a checkpoint (reads the device)."""
        return {
            "loss": float(self.loss),
            "tokens": [int(self.tokens), self.positions] if self.tokens is not None else None,
        }

    def load(self, state: Dict[str, Any]) -> None:
        self.loss = torch.zeros((), dtype=torch.float64, device=self.device) + state["loss"]
        tokens = state["tokens"]  # (real tokens, positions)
        self.tokens = torch.tensor(tokens[0], device=self.device) if tokens else None
        self.positions = tokens[1] if tokens else 0


def read_report(
    epoch_loss: torch.Tensor, step_loss: torch.Tensor, grad_norm: Optional[torch.Tensor]
) -> Tuple[float, float, Optional[float]]:
    """(epoch loss so far, the step's loss, its gradient norm or None) in one read from the device; a NaN loss is an
    error."""
    norm = grad_norm.float() if grad_norm is not None else step_loss.new_zeros(())
    values = torch.stack([epoch_loss.float(), step_loss, norm]).tolist()
    if math.isnan(values[0]) or math.isnan(values[1]):
        raise ValueError("nan loss encountered")
    return values[0], values[1], values[2] if grad_norm is not None else None


def local_progress_metrics(model: Model, loss: float, batch_loss: Optional[float], batches: int) -> Dict[str, Any]:
    """allennlp's progress metrics, with this process's metric counts (no collective call)."""
    with local_metrics():
        return training_util.get_metrics(model, loss, None, batch_loss, None, batches)
