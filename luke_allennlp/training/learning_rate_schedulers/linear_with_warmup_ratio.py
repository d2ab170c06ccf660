import math

import torch
from allennlp.training.learning_rate_schedulers.learning_rate_scheduler import LearningRateScheduler
from allennlp.training.learning_rate_schedulers.linear_with_warmup import LinearWithWarmup


@LearningRateScheduler.register("linear_with_warmup_ratio")
class LinearWithWarmupRatio(LinearWithWarmup):
    """
    allennlp's `linear_with_warmup` (linear warm-up, then linear decay to 0) with the warm-up given as a
    fraction of all training steps, as the LUKE paper gives it (6%).

    Registered as a `LearningRateScheduler` with name "linear_with_warmup_ratio".

    # Parameters

    optimizer : `torch.optim.Optimizer`
    num_epochs : `int`
        Filled in by the trainer.
    num_steps_per_epoch : `int`
        Filled in by the trainer.
    warmup_ratio : `float`, optional (default = `0.06`)
    last_epoch : `int`, optional (default = `-1`)
    """

    def __init__(
        self,
        optimizer: torch.optim.Optimizer,
        num_epochs: int,
        num_steps_per_epoch: int,
        warmup_ratio: float = 0.06,
        last_epoch: int = -1,
    ) -> None:
        if not 0.0 <= warmup_ratio < 1.0:
            raise ValueError(f"warmup_ratio must be in [0, 1), not {warmup_ratio}")
        warmup_steps = math.ceil(warmup_ratio * num_epochs * num_steps_per_epoch)
        super().__init__(optimizer, num_epochs, num_steps_per_epoch, warmup_steps=warmup_steps, last_epoch=last_epoch)
