import gc
import logging
import math
from typing import Any, Dict, List, Optional, Tuple, Union

import torch
import torch.distributed as dist
from allennlp.common import Lazy
from allennlp.common import util as common_util
from allennlp.common.checks import ConfigurationError
from allennlp.data.data_loaders.data_loader import DataLoader, TensorDict
from allennlp.models.model import Model
from allennlp.nn.parallel import DdpAccelerator
from allennlp.nn.util import dist_reduce_sum
from allennlp.training import util as training_util
from allennlp.training.callbacks import TrainerCallback
from allennlp.training.gradient_descent_trainer import GradientDescentTrainer
from allennlp.training.learning_rate_schedulers.learning_rate_scheduler import LearningRateScheduler
from allennlp.training.momentum_schedulers.momentum_scheduler import MomentumScheduler
from allennlp.training.moving_average import MovingAverage
from allennlp.training.optimizers import Optimizer
from allennlp.training.trainer import Trainer, TrainerCheckpoint

from luke_allennlp.modeling.static_shapes import runs_compiled
from luke_allennlp.training.callbacks.console_logger import default_callbacks
from luke_allennlp.training.checkpointers.luke_checkpointer import LukeCheckpointer
from luke_allennlp.training.devices import describe_device, resolve_cuda_device
from luke_allennlp.training.trainers.allennlp_state import AllenNlpTrainerState
from luke_allennlp.training.trainers.epoch_loop import EpochLoop
from luke_allennlp.training.trainers.even_batches import (
    loader_batch_counts,
    refuse_too_little_data_for,
    scheduled_by_every_process,
    validation_lengths,
)
from luke_allennlp.training.trainers.loader_workers import quiet_worker_sigterm, stop_data_loader_workers
from luke_allennlp.training.trainers.precision import allow_tf32 as set_tf32
from luke_allennlp.training.trainers.precision import (
    autocast,
    check_precision,
    gradient_norm,
    resolve_precision,
    scaled,
)
from luke_allennlp.training.trainers.recovery import Recovery, last_epoch_metrics, load_metric_states
from luke_allennlp.training.trainers.step_metrics import EpochTotals, local_progress_metrics, read_report
from luke_allennlp.training.trainers.throughput import HostSyncRecord, StepTimes, epoch_throughput
from luke_allennlp.training.trainers.unused_parameters import keep_every_parameter_in_graph
from luke_allennlp.training.trainers.validation import validation_loss

logger = logging.getLogger(__name__)


@Trainer.register("luke_gradient_descent", constructor="from_partial_objects")
class LukeGradientDescentTrainer(GradientDescentTrainer):
    """
    allennlp's `gradient_descent` trainer (every option of it works the same), for GPU training on today's
    hardware and for exact recovery. The class keeps the loop: an epoch (`_train_epoch`) runs its steps, and a step
    (`_train_step`) reads as nanoGPT's does: batch, forward, backward, optimizer step, log. Each concern is a module of
    its own beside it, a collaborator named in the loop, whose docstring says the details:

    - `epoch_loop.EpochLoop`: one epoch's state, which its steps share: the batches grouped into steps, copied to the
      device a step ahead (`device_prefetch`), the micro-batches of every process in a step, the last reported
      metrics. Gradient accumulation under DDP all-reduces the gradients once per optimizer step (`no_sync` on all
      but the last micro-batch); each micro-batch's loss is divided by the number accumulated, also under fp16.
    - `even_batches`: every process takes the same number of steps, one with fewer batches splitting its last ones,
      so that every batch is trained on and validated; each micro-batch's loss weighs 1 / the micro-batches of all
      processes in its step, and the learning-rate schedule counts the steps every process takes. Validation
      metrics are those of one process over the same data, also where a process gets no validation batch
      (`validation`); training data too small for the processes is refused before training, with the counts.
    - `precision`: bf16 autocast without a gradient scaler, fp16 with allennlp's scaler (`use_amp`), or fp32;
      `"auto"` is bf16 on a GPU that computes in bf16 natively (compute capability 8.0 or more), else fp32. TF32
      matmuls on CUDA (`allow_tf32`) for what stays in fp32.
    - `step_metrics`: a step the host never waits on. Loss, token counts, gradient norm and metrics stay on the device
      and are read every `metrics_every_num_batches` steps. Distributed, no collective call but the gradient
      all-reduce, except one small all-reduce per step where the data loader has no length or checkpoints are saved
      every N seconds (rank 0's clock decides). `audit_host_syncs` counts what would block anyway (`sync_audit`).
    - `recovery` (with `random_state`): checkpoints (`luke_checkpointer`, the default here, writes them atomically)
      also hold fp16's gradient-scaler state and, for every process, the random states and the epoch's running sums
      and metric states, so that `allennlp train --recover` after a kill ends bit-identical to an uninterrupted run.
    - `throughput`: training metrics also report `tokens_per_second` (real word + entity tokens) and
      `padding_fraction`; each step's time and data wait are kept (`step_times`, `data_waits`), and the host-sync
      audit's counts.
    - `unused_parameters`: distributed, every trainable parameter takes part in every step's graph (DDP without
      `find_unused_parameters`).
    - `cuda_device: "auto"` (the default) trains on the first GPU where there is one, else on the CPU, and says which
      in the log; -1 is the CPU; a GPU index on a machine without that GPU is a one-line error (`training.devices`).
    - `loader_workers`: data-loader workers end quietly with training; objects loaded before training are frozen
      (`gc.freeze()`), so forked workers do not copy the pages the collector would touch.
    - Callbacks: `step_loss` is the last optimizer step's loss, a tensor on the device (the trackers of
      `luke_allennlp.training.callbacks` read it with the trainer's own reads); allennlp's default console logger
      does not print the first batches' raw tensors (`callbacks.console_logger`).

    allennlp's private trainer state is read and written only through `allennlp_state.AllenNlpTrainerState`; the
    checkpointer sees only allennlp's public `Trainer` and `Checkpointer` interfaces. Registered as a `Trainer` with
    name "luke_gradient_descent". The parameters below are added to those of allennlp's `gradient_descent` trainer.

    # Parameters

    precision : `str`, optional (default = `"auto"`)
        One of `"auto"`, `"fp32"`, `"bf16"`, `"fp16"`. `use_amp: true` is the same as `"fp16"`.
    allow_tf32 : `bool`, optional (default = `True`)
        On CUDA, let fp32 matmuls and convolutions use TF32 tensor cores.
    metrics_every_num_batches : `int`, optional (default = `10`)
        Training metrics (progress bar, callbacks' `batch_metrics`) are computed every this many optimizer steps;
        other steps pass the last ones again, and `batch_grad_norm` None. A NaN loss is found then, at the latest.
    audit_host_syncs : `bool`, optional (default = `False`)
        Count in each training step the operations that would block the host on a GPU (`sync_audit`), into
        `host_sync_counts` (`(step, reported, count)`) and `host_sync_events`; a summary is logged each epoch.
    audited_steps : `int`, optional (default = `None`)
        Audit only the run's first this many steps (`None`: all). The audit passes each operation through Python,
        which slows a step: later steps run at full speed and can be timed.
    """

    def __init__(
        self,
        model: Model,
        optimizer: torch.optim.Optimizer,
        data_loader: DataLoader,
        precision: str = "auto",
        allow_tf32: bool = True,
        metrics_every_num_batches: int = 10,
        use_amp: bool = False,
        audit_host_syncs: bool = False,
        audited_steps: Optional[int] = None,
        **kwargs: Any,
    ) -> None:
        if metrics_every_num_batches < 1:
            raise ConfigurationError(f"metrics_every_num_batches must be at least 1, not {metrics_every_num_batches}")
        check_precision(precision, use_amp)
        callbacks = list(kwargs.pop("callbacks", None) or [])
        if kwargs.pop("enable_default_callbacks", True):  # added here: the console logger without batch inputs
            callbacks += default_callbacks(kwargs.get("serialization_dir"), callbacks)
        super().__init__(
            model,
            optimizer,
            data_loader,
            use_amp=use_amp or precision == "fp16",
            callbacks=callbacks,
            enable_default_callbacks=False,
            **kwargs,
        )
        self.step_loss: Optional[torch.Tensor] = None  # the last step's loss, on the device (for callbacks)
        self._allennlp = state = AllenNlpTrainerState(self)
        self.metrics_every_num_batches = metrics_every_num_batches
        logger.info("Training on %s", describe_device(self.cuda_device))
        # The batches are copied to the device here (`prefetched`), not by the data loaders' blocking copies.
        for loader in (self.data_loader, state.validation_data_loader):
            if loader is not None:
                loader.set_target_device(None)  # type: ignore[arg-type]
        self.host_syncs = HostSyncRecord(audit_host_syncs, audited_steps)
        self.host_sync_counts = self.host_syncs.counts  # (step, reported, count), see sync_audit
        self.host_sync_events = self.host_syncs.events
        self.cuda_sync_counts = self.host_syncs.cuda_counts  # on a GPU: PyTorch's sync debug mode's count
        self.timings = StepTimes()
        self.data_waits, self.step_times = self.timings.data_waits, self.timings.step_times
        self.pass_start_waits = self.timings.pass_start_waits
        if state.distributed:  # DDP without find_unused_parameters (see `unused_parameters`)
            keep_every_parameter_in_graph(self.model)
        self.precision = resolve_precision(precision, use_amp, self.cuda_device)
        tf32 = set_tf32(self.cuda_device, allow_tf32)
        logger.info("Training precision: %s%s", self.precision, " (TF32 matmuls)" if tf32 else "")
        self.recovery = Recovery()
        self.totals = EpochTotals(self.cuda_device)

    def train(self) -> Dict[str, Any]:
        state = self._allennlp
        if state.distributed:
            refuse_too_little_data_for(self.data_loader, state.validation_data_loader, self.model, self.cuda_device)
        # What is loaded by now (model, vocabulary, instances in memory) stays: the collector need not walk it again,
        # and data-loader workers forked later do not copy the pages it would touch.
        gc.collect()
        gc.freeze()
        with quiet_worker_sigterm():
            try:
                metrics = super().train()
            finally:
                gc.unfreeze()
                for loader in (self.data_loader, state.validation_data_loader):
                    stop_data_loader_workers(loader)
        if state.start_after_epochs_completed >= state.num_epochs:  # `--recover` of a finished run
            metrics = {**last_epoch_metrics(state.serialization_dir, state.num_epochs), **metrics}
        return metrics

    def batch_outputs(self, batch: TensorDict, for_training: bool) -> Dict[str, torch.Tensor]:
        with autocast(self.precision, self.cuda_device):  # training here, and allennlp's validation loop
            return super().batch_outputs(batch, for_training)

    def rescale_gradients(self) -> Optional[torch.Tensor]:  # type: ignore[override]
        """allennlp's, returning the gradient norm as a tensor on the device (read when reported, not every step)."""
        state = self._allennlp
        return gradient_norm(self.model, state.grad_norm, state.scaler, self.optimizer, state.ddp_wrapped_model)

    def _backward(self, outputs: Dict[str, torch.Tensor], loss: torch.Tensor) -> None:
        called = False
        for callback in self._allennlp.callbacks:
            called |= callback.on_backward(self, outputs, called)
        if not called:
            scaled(loss, self._allennlp.scaler).backward()

    # --- training -----------------------------------------------------------------------------------------------

    def _train_epoch(self, epoch: int) -> Dict[str, float]:
        state = self._allennlp
        logger.info("Epoch %d/%d", epoch, state.num_epochs - 1)
        memory = {f"worker_{w}_memory_MB": m / 2**20 for w, m in common_util.peak_cpu_memory().items()}
        memory.update({f"gpu_{g}_memory_MB": m / 2**20 for g, m in common_util.peak_gpu_memory().items()})
        self._start_epoch(epoch)
        loop = EpochLoop(epoch, state, self.data_loader, self.cuda_device, self.timings)
        with self.host_syncs.epoch_audit(self.cuda_device, epoch) as audit:
            for group in loop:
                if self._replaying():  # a step before the checkpoint being recovered: its data read, not trained on
                    self._replay_step()
                    loop.clock.restart()
                    audit.skip()
                    continue
                with loop.clock.step():
                    reported = self._train_step(loop, group)
                audit.step_done(state.total_batches_completed, reported)
                if loop.stopped_early:
                    break
        loop.end()
        if self._replaying():
            return {}  # an epoch finished before the checkpoint: nothing was trained in it
        return {**self._epoch_metrics(loop), **memory}

    def _train_step(self, loop: EpochLoop, group: List[TensorDict]) -> bool:
        """One optimizer step over `group` (its micro-batches): forward, backward, optimizer step, log. Nothing here
        reads the device but on report steps (every `metrics_every_num_batches`) and checkpoints; returns whether
        this one did."""
        total = loop.micro_batches_in_step(len(group))  # of all processes: each one's loss weighs 1 / total
        if total is None:  # (another process has no more data: the epoch stops)
            return False
        self.optimizer.zero_grad()
        step_loss = torch.zeros((), device=self.cuda_device)
        outputs = []
        for batch, gradient_sync in loop.micro_batches(group):
            with gradient_sync:
                output = self.batch_outputs(batch, for_training=True)
                loss = output["loss"] / (total / loop.world)  # (DDP averages the gradients over the processes)
                self._backward(output, loss)
            outputs.append(output)
            step_loss += loss.detach().float()
            loop.count_timed(self.totals.add_tokens(batch))
        self.totals.loss += step_loss  # on the device: read when reported
        grad_norm = self.rescale_gradients()
        self.clip_gradient()
        self._allennlp.optimizer_step(self.optimizer)
        return self._log_step(loop, group, outputs, step_loss, grad_norm)

    def _log_step(
        self,
        loop: EpochLoop,
        group: List[TensorDict],
        outputs: List[Dict[str, Any]],
        step_loss: torch.Tensor,
        grad_norm: Optional[torch.Tensor],
    ) -> bool:
        """The step's metrics (read from the device on report steps only), the callbacks, the checkpoint; whether
        the device was read (a report, or a checkpoint, which reads the running loss and metrics)."""
        state = self._allennlp
        batches = state.batches_in_epoch_completed
        reported = batches % self.metrics_every_num_batches == 0
        norm: Optional[float] = None
        if reported:  # one read from the device; this process's metrics so far (gathered at the epoch's end)
            epoch_loss, loss_value, norm = read_report(self.totals.loss, step_loss, grad_norm)
            loop.report(local_progress_metrics(self.model, epoch_loss, loss_value, batches))
        self.step_loss = step_loss
        for callback in state.callbacks:
            callback.on_batch(
                self,
                group,
                outputs,
                loop.metrics,
                loop.epoch,
                batches,
                is_training=True,
                is_primary=state.primary,
                batch_grad_norm=norm,
            )
        if state.checkpointer is not None:
            reported |= bool(state.checkpointer.maybe_save_checkpoint(self, state.epochs_completed, batches))
        return reported

    def _epoch_metrics(self, loop: EpochLoop) -> Dict[str, float]:
        """allennlp's training metrics of the epoch, over every process, and its throughput."""
        state = self._allennlp
        epoch_loss = float(self.totals.loss)
        if math.isnan(epoch_loss):
            raise ValueError("nan loss encountered")
        metrics = training_util.get_metrics(
            self.model,
            dist_reduce_sum(epoch_loss),
            None,
            None,
            None,
            dist_reduce_sum(state.batches_in_epoch_completed),
            reset=True,
        )
        tokens, positions = self.totals.tokens, self.totals.positions
        self.totals.reset()  # (what an end-of-epoch checkpoint holds)
        metrics.update(epoch_throughput(tokens, positions, loop.timed_tokens, loop.seconds))
        return metrics

    def _start_epoch(self, epoch: int) -> None:
        """Where recovering, the random state that drew this epoch's data order again (and, when the checkpoint
        lies at the epoch's start, what it restores); the running sums from zero; the model in training mode."""
        self.recovery.replay_epoch_order(epoch)
        self.totals.reset()
        self._maybe_resume()
        self.recovery.keep_epoch_start(epoch)
        self._allennlp.pytorch_model.train()

    def _replaying(self) -> bool:
        """Whether this step was done before the checkpoint being recovered (its data is read, not trained on)."""
        state = self._allennlp
        return (state.epochs_completed, state.batches_in_epoch_completed) < (
            state.start_after_epochs_completed,
            state.start_after_batches_in_epoch_completed,
        )

    def _replay_step(self) -> None:
        state = self._allennlp
        state.batches_in_epoch_completed += 1
        state.total_batches_completed += 1
        self._maybe_resume()

    def _maybe_resume(self) -> None:
        """Once the replay of the data reaches the checkpoint: its random states, running sums and metric states."""
        if self.recovery.pending is None or self._replaying():
            return
        resume = self.recovery.take()
        self.totals.load(resume)  # type: ignore[arg-type]
        load_metric_states(self.model, resume["metrics"])  # type: ignore[index]

    def _validation_loss(self, epoch: int) -> Tuple[float, Optional[float], int]:
        """allennlp's validation loop, over every process's every batch (the evened batches, as in training; none
        in a process that has none), with the loss kept on the device and progress reports every
        `metrics_every_num_batches` batches."""
        state = self._allennlp
        loader = state.validation_data_loader
        if loader is None:
            raise ConfigurationError("Validation results cannot be calculated without a validation_data_loader")
        counts = loader_batch_counts(loader, self.cuda_device)
        lengths = validation_lengths(counts) if counts is not None else None
        if state.distributed and lengths is None:  # batches read lazily: allennlp's loop (all stop with the first)
            return super()._validation_loss(epoch)
        return validation_loss(self, state, lengths, epoch)

    # --- checkpoints and exact recovery (see `recovery`) ---------------------------------------------------------

    def get_checkpoint_state(self) -> Optional[TrainerCheckpoint]:
        state = self._allennlp
        processes = self.recovery.process_states(self.totals.state(), self.model, state.distributed)
        checkpoint = super().get_checkpoint_state()
        if checkpoint is not None:
            checkpoint.trainer_state["processes"] = processes
            if state.scaler is not None:  # fp16: the loss scale and its growth tracker (plain values)
                checkpoint.trainer_state["grad_scaler"] = state.scaler.state_dict()
        return checkpoint

    def _maybe_restore_checkpoint(self) -> None:
        """allennlp's restore (model, optimizer, schedulers, metric tracker, callbacks, position), reading the
        checkpoint once, and what this trainer adds: each process's random and metric states."""
        state = self._allennlp
        loaded = state.checkpointer.load_checkpoint() if state.checkpointer is not None else None
        if loaded is None:
            state.start_after_epochs_completed = state.start_after_batches_in_epoch_completed = 0
            state.best_model_filename = None
            return
        model_state, training_state = loaded
        if training_state["version"] != 1:
            raise ValueError(f"{type(self).__name__} reads checkpoints of version 1, not {training_state['version']}")
        state.restore(model_state, training_state, self.optimizer)
        world_size = dist.get_world_size() if state.distributed else 1
        self.recovery.load(training_state.get("processes"), world_size, dist.get_rank() if state.distributed else 0)

    # --- construction ------------------------------------------------------------------------------------------

    @classmethod
    def from_partial_objects(  # type: ignore[override]
        cls,
        model: Model,
        serialization_dir: str,
        data_loader: DataLoader,
        validation_data_loader: DataLoader = None,
        local_rank: int = 0,
        patience: int = None,
        validation_metric: Union[str, List[str]] = "-loss",
        num_epochs: int = 20,
        cuda_device: Optional[Union[int, str, torch.device]] = "auto",
        grad_norm: Union[float, bool] = False,
        grad_clipping: float = None,
        distributed: bool = False,
        world_size: int = 1,
        num_gradient_accumulation_steps: int = 1,
        use_amp: bool = False,
        no_grad: List[str] = None,
        optimizer: Lazy[Optimizer] = Lazy(Optimizer.default),  # noqa: B008  (allennlp's own default)
        learning_rate_scheduler: Lazy[LearningRateScheduler] = None,
        momentum_scheduler: Lazy[MomentumScheduler] = None,
        moving_average: Lazy[MovingAverage] = None,
        checkpointer: Optional[Lazy[LukeCheckpointer]] = Lazy(LukeCheckpointer),  # noqa: B008  (as allennlp's)
        callbacks: List[Lazy[TrainerCallback]] = None,
        enable_default_callbacks: bool = True,
        run_confidence_checks: bool = True,
        grad_scaling: bool = True,
        ddp_accelerator: Optional[DdpAccelerator] = None,
        precision: str = "auto",
        allow_tf32: bool = True,
        metrics_every_num_batches: int = 10,
        audit_host_syncs: bool = False,
        audited_steps: Optional[int] = None,
    ) -> Trainer:
        """allennlp's `gradient_descent` construction (see its docs), with `precision` and `allow_tf32`, and
        `luke_checkpointer` as the default checkpointer, and without allennlp's confidence checks for a model that
        runs compiled (`compile`). Distributed, the learning rate schedule counts the steps
        every process takes (those of the process with the most batches, see `even_batches`): each process counted
        its own, and with uneven data the schedules, hence the weights, drifted apart. `cuda_device` is `"auto"` by
        default (see `resolve_cuda_device`), checked before the model is moved."""
        cuda_device = resolve_cuda_device(cuda_device)
        if run_confidence_checks and runs_compiled(model):
            # allennlp's checks hook every module for the first batch, then unhook them: dynamo would compile that
            # batch's bucket with the hooks and, at the next batch of it, again without (minutes at LUKE base on a GPU).
            logger.info("the model runs under torch.compile: allennlp's confidence checks are skipped")
            run_confidence_checks = False
        if distributed and learning_rate_scheduler is not None:
            learning_rate_scheduler = scheduled_by_every_process(
                learning_rate_scheduler, data_loader, num_gradient_accumulation_steps, cuda_device
            )
        return super().from_partial_objects(
            model,
            serialization_dir,
            data_loader,
            validation_data_loader=validation_data_loader,
            local_rank=local_rank,
            patience=patience,
            validation_metric=validation_metric,
            num_epochs=num_epochs,
            cuda_device=cuda_device,
            grad_norm=grad_norm,
            grad_clipping=grad_clipping,
            distributed=distributed,
            world_size=world_size,
            num_gradient_accumulation_steps=num_gradient_accumulation_steps,
            use_amp=use_amp,
            no_grad=no_grad,
            optimizer=optimizer,
            learning_rate_scheduler=learning_rate_scheduler,
            momentum_scheduler=momentum_scheduler,
            moving_average=moving_average,
            checkpointer=checkpointer,
            callbacks=callbacks,
            enable_default_callbacks=enable_default_callbacks,
            run_confidence_checks=run_confidence_checks,
            grad_scaling=grad_scaling,
            ddp_accelerator=ddp_accelerator,
            precision=precision,
            allow_tf32=allow_tf32,
            metrics_every_num_batches=metrics_every_num_batches,
            audit_host_syncs=audit_host_syncs,
            audited_steps=audited_steps,
        )
