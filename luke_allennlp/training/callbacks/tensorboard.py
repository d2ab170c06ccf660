"""
The `tensorboard` callback: allennlp's registered name, this project's callback, which writes every optimizer step.
"""

import os
from typing import Any, Dict, Optional

import torch
from allennlp.training.callbacks.callback import TrainerCallback
from tensorboardX import SummaryWriter

from luke_allennlp.training.callbacks.log_writer import StepLogWriter


@TrainerCallback.register("tensorboard", exist_ok=True)
class TensorBoardCallback(StepLogWriter):
    """
    TensorBoard event files (tensorboardX's) in `log/train` and `log/validation` under the serialization directory,
    as allennlp's `tensorboard` callback wrote them, holding what `luke_allennlp.training.callbacks.log_writer` says:
    the loss and each parameter group's learning rate every optimizer step, the batch metrics every
    `metrics_every_num_batches` steps, the epoch's metrics at the step that ended it (`validation/...` in
    `log/validation`, the rest in `log/train`). Each point's step is the optimizer steps done. Only the primary
    process opens the files (allennlp's opened them in every process). A run resumed with `--recover` writes new
    files whose first event tells TensorBoard to drop what the earlier files hold from the checkpoint's next step on
    (`purge_step`), so that each step has one point.

    Registered as a `TrainerCallback` with name "tensorboard" (replacing allennlp's). The parameters are those of
    allennlp's callback, with other defaults.

    # Parameters

    summary_interval : `int`, optional (default = `1`)
        The loss and learning rates every this many steps.
    distribution_interval : `int`, optional (default = `None`)
        allennlp's: histograms of the parameters, their updates and the activations of modules that ask for them
        (`should_log_activations`), every this many steps (each one reads every parameter from the device).
    batch_size_interval : `int`, optional (default = `None`)
        allennlp's: the batch size and its mean, every this many steps.
    should_log_parameter_statistics : `bool`, optional (default = `False`)
        allennlp's: the mean and standard deviation of every parameter and its gradient (four curves a parameter),
        every `summary_interval` steps.
    should_log_learning_rate : `bool`, optional (default = `True`)
        One learning-rate curve per parameter group (allennlp's: one per parameter, off by default).
    """

    def __init__(
        self,
        serialization_dir: str,
        summary_interval: int = 1,
        distribution_interval: Optional[int] = None,
        batch_size_interval: Optional[int] = None,
        should_log_parameter_statistics: bool = False,
        should_log_learning_rate: bool = True,
    ) -> None:
        self._init_writer(
            serialization_dir,
            summary_interval,
            should_log_learning_rate,
            should_log_parameter_statistics,
            distribution_interval,
            batch_size_interval,
        )
        self._logs: Dict[str, SummaryWriter] = {}

    def on_start(self, trainer: Any, is_primary: bool = True, **kwargs: Any) -> None:
        super().on_start(trainer, is_primary=is_primary, **kwargs)
        if is_primary and not self._logs:
            purge_step = None if self._resumed_at is None else self._resumed_at + 1
            for name in ("train", "validation"):
                directory = os.path.join(self.serialization_dir, "log", name)
                os.makedirs(directory, exist_ok=True)
                self._logs[name] = SummaryWriter(directory, purge_step=purge_step)

    def write(self, scalars: Dict[str, float], step: int) -> None:
        for name, value in scalars.items():
            self._logs["validation" if name.startswith("validation/") else "train"].add_scalar(name, value, step)

    def log_tensors(self, tensors: Dict[str, torch.Tensor], log_prefix: str = "", epoch: Optional[int] = None) -> None:
        assert self.trainer is not None
        for key, values in tensors.items():
            name = f"{log_prefix}/{key}" if log_prefix else key
            histogram = values.detach().float().cpu().numpy().flatten()
            self._logs["train"].add_histogram(name, histogram, self.trainer._total_batches_completed)

    def commit(self, durable: bool = False) -> None:
        if durable:
            for log in self._logs.values():
                log.flush()

    def close(self) -> None:
        super().close()
        for log in self._logs.values():
            log.close()
        self._logs = {}
