"""A trainer in this process on a two-layer regression in two parameter groups: 6 steps an epoch, in milliseconds."""

from pathlib import Path
from typing import Any, Dict, List

import torch
from allennlp.common import Params
from allennlp.training.trainer import Trainer

STEPS_PER_EPOCH = 6
LEARNING_RATES = (1e-3, 1e-2)  # group 0 (`first.*`), group 1 (the rest)
WARMUP = 2


class TwoLayers(torch.nn.Module):
    """Records the loss of each training batch (a batch is a step here; `record_losses=False`: a forward pass that
    never reads the device) and has one metric, read on report steps."""

    def __init__(self, record_losses: bool = True) -> None:
        super().__init__()
        self.first = torch.nn.Linear(2, 2)
        self.second = torch.nn.Linear(2, 1)
        self.record_losses = record_losses
        self.losses: List[float] = []
        self.total, self.count = torch.zeros(()), 0

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> Dict[str, torch.Tensor]:
        error = self.second(self.first(x)) - y
        loss = (error**2).mean()
        if self.training and self.record_losses:
            self.losses.append(loss.item())
        self.total, self.count = self.total + error.detach().abs().sum(), self.count + error.numel()
        return {"loss": loss}

    def get_metrics(self, reset: bool = False) -> Dict[str, float]:
        metrics = {"mean_error": float(self.total) / max(self.count, 1)}
        if reset:
            self.total, self.count = torch.zeros(()), 0
        return metrics

    def get_regularization_penalty(self) -> None:
        return None


def expected_learning_rate(group: int, step: int, steps: int) -> float:
    """allennlp's `linear_with_warmup` at `step` (1-based) of `steps`: up over `WARMUP` steps, then down to 0."""
    scale = step / WARMUP if step < WARMUP else (steps - step) / (steps - WARMUP)
    return LEARNING_RATES[group] * scale


def build_trainer(serialization_dir: Path, model: TwoLayers, epochs: int = 2, **params: Any) -> Trainer:
    from allennlp.data import Instance
    from allennlp.data.data_loaders import SimpleDataLoader
    from allennlp.data.fields import TensorField

    generator = torch.Generator().manual_seed(0)
    instances = [
        Instance(
            {
                "x": TensorField(torch.randn(2, generator=generator)),
                "y": TensorField(torch.randn(1, generator=generator)),
            }
        )
        for _ in range(STEPS_PER_EPOCH)
    ]
    return Trainer.from_params(
        Params(
            {
                "type": "luke_gradient_descent",
                "precision": "fp32",
                "num_epochs": epochs,
                "checkpointer": None,
                "optimizer": {
                    "type": "luke_adamw",
                    "lr": LEARNING_RATES[1],
                    "parameter_groups": [[["^first\\."], {"lr": LEARNING_RATES[0]}]],
                },
                "learning_rate_scheduler": {"type": "linear_with_warmup", "warmup_steps": WARMUP},
                **params,
            }
        ),
        model=model,
        serialization_dir=str(serialization_dir),
        data_loader=SimpleDataLoader(instances, batch_size=1),
        validation_data_loader=SimpleDataLoader(instances[:3], batch_size=1),
    )


def read_scalars(directory: Path) -> Dict[str, List]:
    """{tag: [(step, value), ...]} of the TensorBoard event files in `directory`, by TensorBoard's own reader."""
    from tensorboard.backend.event_processing.event_accumulator import SCALARS, EventAccumulator

    events = EventAccumulator(str(directory), size_guidance={SCALARS: 0})
    events.Reload()
    return {tag: [(e.step, e.value) for e in events.Scalars(tag)] for tag in events.Tags()["scalars"]}
