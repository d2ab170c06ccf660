"""
What the trackers write (`tensorboard`, `mlflow`, `wandb`), the same in each.

allennlp's log writers wrote the loss every `summary_interval` batches (100 by default; with this project's trainer,
a step between two reports passes the batch metrics of the last report), and with `should_log_learning_rate` one
learning-rate curve per parameter (hundreds for LUKE). A `StepLogWriter` writes, at the step it belongs to (the
optimizer steps done, 1 for the first, counted over the whole run):

- every step (`summary_interval`), `train/batch_loss`, the step's loss, and `learning_rate/group_N`, the learning
  rate each parameter group of the optimizer took that step (`N` in the order of the optimizer's `parameter_groups`,
  the parameters no regex matched last). The trainer keeps the losses on the device (its `step_loss`); they are read
  all at once when the trainer reads the device anyway, every `metrics_every_num_batches` steps: tracking adds no
  wait for a GPU;
- on those report steps (every step with allennlp's `gradient_descent`), the trainer's batch metrics:
  `train/batch_NAME` for the model's metrics over the epoch so far (what the progress bar shows) and
  `train/gradient_norm` where the trainer measures it (`grad_norm`);
- at the end of each epoch, at the step that ended it, the epoch's metrics as `metrics_epoch_N.json` holds them:
  `train/NAME` (its `training_` metrics but memory) and `validation/NAME`.

Only the primary process writes (under distributed training, global rank 0; its own loss). Everything up to a
checkpoint is written when the checkpoint is saved, and the checkpoint holds that step (the callback's state), so
that a run resumed with `--recover` knows which steps it writes again.
"""

from typing import Any, Dict, List, Optional, Tuple, Union

import torch
from allennlp.data import TensorDict
from allennlp.training.callbacks.log_writer import LogWriterCallback
from allennlp.training.util import get_train_and_validation_metrics

SKIPPED_BATCH_METRICS = ("loss", "batch_loss", "reg_loss", "batch_reg_loss")  # the loss is written every step


def _numbers(metrics: Dict[str, Any], prefix: str, skip: Tuple[str, ...] = ()) -> Dict[str, float]:
    return {
        f"{prefix}{name}": float(value)
        for name, value in metrics.items()
        if isinstance(value, (int, float)) and not isinstance(value, bool) and name not in skip
    }


class StepLogWriter(LogWriterCallback):
    """
    An allennlp `LogWriterCallback` that writes what the module's doc says. A subclass's constructor calls
    `_init_writer`, and the subclass implements `write` (and `commit` where writes are batched). allennlp's own options (`should_log_parameter_statistics`,
    `distribution_interval`, `batch_size_interval`) write as allennlp's callbacks do, at the current step.
    """

    def _init_writer(
        self,
        serialization_dir: str,
        summary_interval: int,
        should_log_learning_rate: bool,
        should_log_parameter_statistics: bool = False,
        distribution_interval: Optional[int] = None,
        batch_size_interval: Optional[int] = None,
    ) -> None:
        """What a subclass's constructor calls: allennlp's `LogWriterCallback` constructor (without its learning
        rates per parameter), and the steps' state."""
        LogWriterCallback.__init__(
            self,
            serialization_dir,
            summary_interval=summary_interval,
            distribution_interval=distribution_interval,
            batch_size_interval=batch_size_interval,
            should_log_parameter_statistics=should_log_parameter_statistics,
            should_log_learning_rate=False,
        )
        self._learning_rates = should_log_learning_rate
        self._pending: List[Tuple[int, Union[torch.Tensor, float, None], Dict[str, float]]] = []
        self._resumed_at: Optional[int] = None  # the step of the checkpoint this run resumed from

    # --- what a tracker implements ---------------------------------------------------------------------------

    def write(self, scalars: Dict[str, float], step: int) -> None:
        """Writes `scalars` (full names, e.g. `train/batch_loss`) at `step`."""
        raise NotImplementedError

    def commit(self, durable: bool = False) -> None:
        """Called after each group of writes; `durable` (at a checkpoint and at the end): everything written so far
        must be stored (on disk, on the server)."""

    # --- allennlp's callback hooks ---------------------------------------------------------------------------

    def on_batch(
        self,
        trainer: Any,
        batch_inputs: List[TensorDict],
        batch_outputs: List[Dict[str, Any]],
        batch_metrics: Dict[str, Any],
        epoch: int,
        batch_number: int,
        is_training: bool,
        is_primary: bool = True,
        batch_grad_norm: Optional[float] = None,
        **kwargs: Any,
    ) -> None:
        if not is_training or not is_primary:
            return
        step = trainer._total_batches_completed
        if step % self._summary_interval == 0:
            loss = getattr(trainer, "step_loss", None)  # this project's trainer: on the device, read below
            self._pending.append(
                (step, batch_metrics.get("batch_loss") if loss is None else loss, self._rates(trainer))
            )
        if batch_number % getattr(trainer, "metrics_every_num_batches", 1) == 0:  # the batch metrics are fresh
            self._write_pending()
            fresh = _numbers(batch_metrics, "train/batch_", SKIPPED_BATCH_METRICS)
            if batch_grad_norm is not None:
                fresh["train/gradient_norm"] = float(batch_grad_norm)
            self.write(fresh, step)
            self.commit()
        super().on_batch(  # allennlp's statistics where asked for (`log_batch` below)
            trainer,
            batch_inputs,
            batch_outputs,
            batch_metrics,
            epoch,
            batch_number,
            is_training,
            is_primary=is_primary,
            batch_grad_norm=batch_grad_norm,
            **kwargs,
        )

    def log_batch(
        self,
        batch_grad_norm: Optional[float],
        metrics: Dict[str, float],
        batch_group: List[TensorDict],
        param_updates: Optional[Dict[str, torch.Tensor]],
        batch_number: int,
    ) -> None:
        """allennlp's parameter statistics, distributions and batch sizes where asked for; not its metrics (written
        by `on_batch`)."""
        super().log_batch(batch_grad_norm, {}, batch_group, param_updates, batch_number)

    def log_scalars(
        self, scalars: Dict[str, Union[int, float]], log_prefix: str = "", epoch: Optional[int] = None
    ) -> None:
        """allennlp's statistics, at the current step."""
        assert self.trainer is not None
        prefix = f"{log_prefix}/" if log_prefix else ""
        self.write(_numbers(scalars, prefix), self.trainer._total_batches_completed)

    def on_epoch(
        self, trainer: Any, metrics: Dict[str, Any], epoch: int, is_primary: bool = True, **kwargs: Any
    ) -> None:
        if not is_primary:
            return
        self._write_pending()
        training, validation = get_train_and_validation_metrics(metrics)
        step = trainer._total_batches_completed
        self.write({k: v for k, v in _numbers(training, "train/").items() if "_memory_MB" not in k}, step)
        self.write(_numbers(validation, "validation/"), step)
        self.commit()

    def on_end(
        self,
        trainer: Any,
        metrics: Optional[Dict[str, Any]] = None,
        epoch: Optional[int] = None,
        is_primary: bool = True,
        **kwargs: Any,
    ) -> None:
        if is_primary:
            self._write_pending()
            self.commit(durable=True)
        super().on_end(trainer, metrics=metrics, epoch=epoch, is_primary=is_primary, **kwargs)

    def state_dict(self) -> Dict[str, Any]:
        """At a checkpoint: what is pending written and stored; the step the checkpoint is at."""
        state = super().state_dict()
        if self.trainer is not None:
            self._write_pending()
            self.commit(durable=True)
            state["step"] = self.trainer._total_batches_completed
        return state

    def load_state_dict(self, state_dict: Dict[str, Any]) -> None:
        super().load_state_dict(state_dict)
        self._resumed_at = state_dict.get("step")

    # --- the steps -------------------------------------------------------------------------------------------

    def _rates(self, trainer: Any) -> Dict[str, float]:
        if not self._learning_rates:
            return {}
        groups = trainer.optimizer.param_groups
        return {f"learning_rate/group_{i}": float(group["lr"]) for i, group in enumerate(groups) if "lr" in group}

    def _write_pending(self) -> None:
        """The pending steps' losses read from the device in one go, and each step written."""
        if not self._pending:
            return
        tensors = [loss.detach().float().reshape(()) for _, loss, _ in self._pending if isinstance(loss, torch.Tensor)]
        values = iter(torch.stack(tensors).tolist() if tensors else [])
        for step, loss, rates in self._pending:
            value = next(values) if isinstance(loss, torch.Tensor) else loss
            self.write({**rates, **({"train/batch_loss": float(value)} if value is not None else {})}, step)
        self._pending.clear()
