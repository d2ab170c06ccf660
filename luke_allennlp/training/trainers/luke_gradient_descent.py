import contextlib
import gc
import json
import logging
import math
import os
import signal
import threading
import time
from typing import Any, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple, Union

import torch
import torch.distributed as dist
from allennlp.common import Lazy, Tqdm
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
from allennlp.training.metrics import Metric
from allennlp.training.momentum_schedulers.momentum_scheduler import MomentumScheduler
from allennlp.training.moving_average import MovingAverage
from allennlp.training.optimizers import Optimizer
from allennlp.training.trainer import Trainer, TrainerCheckpoint

from luke_allennlp.training.checkpointers.luke_checkpointer import LukeCheckpointer
from luke_allennlp.training.device_prefetch import prefetched
from luke_allennlp.training.even_batches import (
    batch_counts,
    evened,
    group_sizes,
    planned_lengths,
    refuse_too_little_data,
    refuse_too_little_validation_data,
    validation_lengths,
)
from luke_allennlp.training.metrics.counting_metric import local_metrics
from luke_allennlp.training.random_state import get_random_state, set_random_state
from luke_allennlp.training.sync_audit import SyncAudit
from luke_allennlp.training.unused_parameters import keep_every_parameter_in_graph
from luke_allennlp_compat import missing_gpu

logger = logging.getLogger(__name__)

PRECISIONS = ("auto", "fp32", "bf16", "fp16")


def resolve_precision(precision: str, use_amp: bool, device: torch.device) -> str:
    """What `"auto"` means on `device`: fp16 with `use_amp`, else bf16 on a GPU that computes in bf16 natively
    (compute capability 8.0 or more: Ampere, Hopper, ...; `torch.cuda.is_bf16_supported()` also says yes on a V100
    or T4, which only emulate it, slowly), else fp32."""
    if precision != "auto":
        return precision
    if use_amp:
        return "fp16"
    return "bf16" if device.type == "cuda" and torch.cuda.get_device_capability(device) >= (8, 0) else "fp32"


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


def resolve_cuda_device(cuda_device: Union[None, int, str, torch.device]) -> Union[int, torch.device]:
    """The device `cuda_device` names: `"auto"` (or None) is the first GPU where there is one, else the CPU (-1).
    Raises a one-line `ConfigurationError` for a GPU that this machine does not have."""
    if cuda_device is None or cuda_device == "auto":
        return 0 if torch.cuda.is_available() else -1
    if isinstance(cuda_device, str):
        try:
            cuda_device = int(cuda_device) if cuda_device.lstrip("-").isdigit() else torch.device(cuda_device)
        except RuntimeError:
            raise ConfigurationError(
                f'trainer.cuda_device must be "auto", a GPU index, or -1 (the CPU), not {cuda_device!r}'
            ) from None
    index = cuda_device if isinstance(cuda_device, int) else None
    if isinstance(cuda_device, torch.device) and cuda_device.type == "cuda":
        index = cuda_device.index or 0
    problem = missing_gpu("trainer.cuda_device", index) if index is not None and index >= 0 else None
    if problem:
        raise ConfigurationError(problem)
    return cuda_device


def describe_device(device: torch.device) -> str:
    if device.type == "cuda":
        return f"{device} ({torch.cuda.get_device_name(device)})"
    return "the CPU" + ("" if torch.cuda.is_available() else " (no GPU found)")


def _plain(value: Any) -> bool:
    """Whether `torch.load(weights_only=True)` reads the value back as it is."""
    if isinstance(value, (bool, int, float, str, type(None), torch.Tensor)):
        return True
    if type(value) in (list, tuple):
        return all(_plain(v) for v in value)
    if type(value) is dict:
        return all(isinstance(k, (str, int)) and _plain(v) for k, v in value.items())
    return False


def metric_state(metric: Metric) -> Dict[str, Any]:
    """A metric's accumulated state: its `state_dict()` (this project's metrics), else its plain attributes (the
    counts of allennlp's metrics, e.g. `CategoricalAccuracy`'s `correct_count` and `total_count`)."""
    if hasattr(metric, "state_dict"):
        return {"state_dict": metric.state_dict()}
    return {"attributes": {k: v for k, v in vars(metric).items() if _plain(v)}}


def load_metric_state(metric: Metric, state: Dict[str, Any]) -> None:
    if "state_dict" in state:
        metric.load_state_dict(state["state_dict"])  # type: ignore[attr-defined]
    else:
        vars(metric).update(state["attributes"])


def stop_data_loader_workers(loader: Optional[DataLoader]) -> None:
    """With `batches_per_epoch`, allennlp's data loader keeps its batch generator, and its worker processes, between
    epochs; left to the interpreter's exit they die writing to a closed pipe (`BrokenPipeError` tracebacks after a
    successful run). Closing the generator runs its own clean-up, which stops and joins the workers."""
    generator = getattr(loader, "_batch_generator", None)
    if generator is not None:
        loader._batch_generator = None  # type: ignore[union-attr]
        generator.close()


@contextlib.contextmanager
def quiet_worker_sigterm() -> Iterator[None]:
    """
    Data-loader workers forked while training inherit the `allennlp` command's SIGTERM handler, which raises
    `SigTermReceived`. A worker still busy when its loader stops (`stop_data_loader_workers` closes the batch
    generator, which gives each worker a second to stop, then terminates it) printed that exception's traceback, one
    per worker, after a successful run. While training, the handler in a forked process (another pid) ends it as the
    default SIGTERM does, silently; in the training process itself it is the handler that was there.
    """
    if threading.current_thread() is not threading.main_thread():  # only the main thread may set handlers
        yield
        return
    training_pid, previous = os.getpid(), signal.getsignal(signal.SIGTERM)

    def handler(signum: int, frame: Any) -> None:
        if os.getpid() != training_pid:  # a forked worker: die as SIG_DFL would
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)
        elif callable(previous):
            previous(signum, frame)
        elif previous != signal.SIG_IGN:
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)

    signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL if previous is None else previous)


@Trainer.register("luke_gradient_descent", constructor="from_partial_objects")
class LukeGradientDescentTrainer(GradientDescentTrainer):
    """
    allennlp's `gradient_descent` trainer (every option of it works the same), for GPU training on today's
    hardware and for exact recovery:

    - `precision`: `"bf16"` runs the forward pass and loss under bf16 autocast, without a gradient scaler
      (Ampere/Hopper GPUs, and CPUs); `"fp16"` is allennlp's mixed precision (`use_amp`) with its gradient scaler;
      `"fp32"` none; `"auto"` is bf16 on a GPU that computes in bf16 natively (compute capability 8.0 or more:
      not a V100 or T4, which only emulate it) and fp32 elsewhere.
    - On CUDA, TF32 matmuls (`allow_tf32`) for what stays in fp32.
    - Gradient accumulation with distributed training all-reduces the gradients once per optimizer step, on the
      last micro-batch (`DistributedDataParallel.no_sync` on the others), instead of on every micro-batch. Each
      micro-batch's loss is divided by the number accumulated, also under fp16 (allennlp's scaler path did not).
    - Distributed training and validation: every process takes the same number of steps, one with fewer batches
      splitting its last ones, so that every batch is trained on and validated (allennlp stopped all processes
      when the first ran out of data); each micro-batch's loss weighs 1 / the micro-batches of all processes in
      that optimizer step (also in the last, uneven, accumulation group). Validation metrics are those of one
      process over the same data.
    - A step the host never waits on: each batch is pinned and copied to the GPU with `non_blocking` on a side stream
      while the step before it runs (`device_prefetch`); the loss, token counts, gradient norm and metrics stay on
      the device and are read every `metrics_every_num_batches` steps (metrics as this process counted them; those
      of all processes at the end of the epoch), so the host queues the optimizer step and fetches the next batch
      while the device works. `audit_host_syncs` counts what would block anyway (`sync_audit`). Distributed, no collective call but the gradient all-reduce, except one small all-reduce per
      step where the data loader has no length or checkpoints are saved every N seconds (rank 0's clock decides).
    - Checkpoints also hold fp16's gradient-scaler state (loss scale, growth tracker), the random number
      generators' states (Python, NumPy, torch, CUDA; those of the start of every epoch and of the checkpoint
      itself, for every process) and the epoch's running loss and metric states,
      so that `allennlp train --recover` after a kill ends bit-identical to an uninterrupted run (with data-loader
      workers, as far as the readers' own randomness is seeded). They are written atomically
      (`luke_checkpointer`, the default here).
    - `cuda_device: "auto"` (the default) trains on the first GPU where there is one, else on the CPU, and says which
      in the log; -1 is the CPU; a GPU index on a machine without that GPU is a one-line error.
    - Data-loader workers are not copied a page at a time as the garbage collector touches the objects loaded
      before training: those are frozen (`gc.freeze()`) when training starts.
    - Training metrics also report `tokens_per_second` (real word + entity tokens, i.e. attention-mask positions)
      and `padding_fraction` (padded positions of all attention masks).

    Registered as a `Trainer` with name "luke_gradient_descent". The parameters below are added to those of
    allennlp's `gradient_descent` trainer.

    # Parameters

    precision : `str`, optional (default = `"auto"`)
        One of `"auto"`, `"fp32"`, `"bf16"`, `"fp16"`. `use_amp: true` is the same as `"fp16"`.
    allow_tf32 : `bool`, optional (default = `True`)
        On CUDA, let fp32 matmuls and convolutions use TF32 tensor cores.
    metrics_every_num_batches : `int`, optional (default = `10`)
        Training metrics (progress bar, callbacks' `batch_metrics`) are computed every this many optimizer steps;
        other steps pass the last ones again, and `batch_grad_norm` None. A NaN loss is found then, at the latest.
    audit_host_syncs : `bool`, optional (default = `False`)
        Run every training step under a `SyncAudit` and keep each step's count of operations that would block the
        host on a GPU in `host_sync_counts` (`(step, reported, count)`) and their names in `host_sync_events`; a
        summary is logged at each epoch's end. See `luke_allennlp.training.sync_audit`.
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
        **kwargs: Any,
    ) -> None:
        if metrics_every_num_batches < 1:
            raise ConfigurationError(f"metrics_every_num_batches must be at least 1, not {metrics_every_num_batches}")
        self._metrics_every_num_batches = metrics_every_num_batches
        if precision not in PRECISIONS:
            raise ConfigurationError(f"precision must be one of {PRECISIONS}, not {precision!r}")
        if use_amp and precision not in ("auto", "fp16"):
            raise ConfigurationError(f'use_amp is fp16 mixed precision: it contradicts precision "{precision}"')
        super().__init__(model, optimizer, data_loader, use_amp=use_amp or precision == "fp16", **kwargs)
        logger.info("Training on %s", describe_device(self.cuda_device))
        # The batches are copied to the device here (`prefetched`), not by the data loaders' blocking copies.
        for loader in (self.data_loader, self._validation_data_loader):
            if loader is not None:
                loader.set_target_device(None)  # type: ignore[arg-type]
        self.audit_host_syncs = audit_host_syncs
        self.host_sync_counts: List[Tuple[int, bool, int]] = []  # (step, reported, count), see sync_audit
        self.host_sync_events: List[Tuple[int, List[str]]] = []
        self.cuda_sync_counts: List[Tuple[int, bool, int]] = []  # on a GPU: PyTorch's sync debug mode's count
        self.data_waits: List[float] = []  # seconds each step waited for its batches
        self.step_times: List[float] = []  # each step's wall time, its data wait included
        self.pass_start_waits: List[float] = []  # the data wait of each epoch's first step
        if self._distributed:  # DDP without find_unused_parameters: see training/unused_parameters.py
            keep_every_parameter_in_graph(self.model)
        on_cuda = self.cuda_device.type == "cuda"
        precision = resolve_precision(precision, use_amp, self.cuda_device)
        self.precision = precision
        if on_cuda:
            torch.backends.cuda.matmul.allow_tf32 = allow_tf32
            torch.backends.cudnn.allow_tf32 = allow_tf32
        logger.info("Training precision: %s%s", precision, " (TF32 matmuls)" if on_cuda and allow_tf32 else "")
        # Recovery (see `get_checkpoint_state`): the random state at the start of each epoch so far, and what a
        # checkpoint restores once the replay of the data reaches it.
        self._epoch_start_random_states: List[Dict[str, Any]] = []
        self._resume: Optional[Dict[str, Any]] = None
        # The sum of this epoch's step losses so far (allennlp's `train_loss`), on the device.
        self._epoch_loss = self._zero_loss()
        self._epoch_tokens: Optional[torch.Tensor] = None  # real tokens so far, on the device (see `count_tokens`)
        self._epoch_positions = 0  # attention-mask positions so far

    def _zero_loss(self) -> torch.Tensor:
        return torch.zeros((), dtype=torch.float64, device=self.cuda_device)

    def train(self) -> Dict[str, Any]:
        # What is loaded by now (model, vocabulary, instances in memory) stays: the collector need not walk it again,
        # and data-loader workers forked later do not copy the pages it would touch.
        if self._distributed:
            self._refuse_too_little_data()
        gc.collect()
        gc.freeze()
        with quiet_worker_sigterm():
            try:
                metrics = super().train()
            finally:
                gc.unfreeze()
                for loader in (self.data_loader, self._validation_data_loader):
                    stop_data_loader_workers(loader)
        if self._start_after_epochs_completed >= self._num_epochs:  # `--recover` of a finished run
            metrics = {**self._last_epoch_metrics(), **metrics}
        return metrics

    def _last_epoch_metrics(self) -> Dict[str, Any]:
        """The metrics written after the last epoch (`metrics_epoch_N.json`): a run recovered after its last epoch
        trains no epoch, and allennlp's metrics then lacked the `training_*`, `validation_*` and `epoch` fields,
        which `metrics.json` lost when it was written again."""
        path = os.path.join(self._serialization_dir or "", f"metrics_epoch_{self._num_epochs - 1}.json")
        if not self._serialization_dir or not os.path.exists(path):
            return {}
        with open(path, encoding="utf-8") as f:
            return json.load(f)

    # --- precision --------------------------------------------------------------------------------------------

    def _autocast(self) -> contextlib.AbstractContextManager:
        if self.precision == "fp32":
            return contextlib.nullcontext()
        dtype = torch.bfloat16 if self.precision == "bf16" else torch.float16
        return torch.autocast(self.cuda_device.type, dtype=dtype)

    def batch_outputs(self, batch: TensorDict, for_training: bool) -> Dict[str, torch.Tensor]:
        with self._autocast():  # training here, and allennlp's validation loop
            return super().batch_outputs(batch, for_training)

    # --- training -----------------------------------------------------------------------------------------------

    def _replaying(self) -> bool:
        """Whether this step was done before the checkpoint being recovered (its data is read, not trained on)."""
        return (self._epochs_completed, self._batches_in_epoch_completed) < (
            self._start_after_epochs_completed,
            self._start_after_batches_in_epoch_completed,
        )

    def _step_signal(self, micro_batches: int) -> Tuple[int, int, bool]:
        """Distributed, where the batch counts are not known ahead or rank 0's clock decides checkpoints: one small
        all-reduce for the step. Returns (micro-batches of all processes, processes with data, rank 0's "time to
        save a checkpoint")."""
        checkpointer = self._checkpointer
        time_is_up = self._primary and isinstance(checkpointer, LukeCheckpointer) and checkpointer.time_is_up()
        signal = torch.tensor([micro_batches, int(micro_batches > 0), int(time_is_up)], device=self.cuda_device)
        dist.all_reduce(signal, dist.ReduceOp.SUM)
        total, with_data, time_is_up = signal.tolist()
        return total, with_data, bool(time_is_up)

    def rescale_gradients(self) -> Optional[torch.Tensor]:  # type: ignore[override]
        """allennlp's, returning the gradient norm as a tensor on the device (read when reported, not every step)."""
        if isinstance(self._grad_norm, bool) and not self._grad_norm:
            return None
        parameters = [p for p in self.model.parameters() if p.grad is not None]
        if isinstance(self._grad_norm, bool):
            return torch.linalg.vector_norm(
                torch.stack([torch.linalg.vector_norm(p.grad.detach()) for p in parameters])
            )
        if self._scaler is not None:
            self._scaler.unscale_(self.optimizer)  # clip the true gradients
        if self._ddp_wrapped_model is not None and self._ddp_wrapped_model.is_sharded:
            return self._ddp_wrapped_model.clip_grad_norm_(self._grad_norm)
        return torch.nn.utils.clip_grad_norm_(parameters, self._grad_norm)

    def _backward(self, outputs: Dict[str, torch.Tensor], loss: torch.Tensor) -> None:
        called = False
        for callback in self._callbacks:
            called |= callback.on_backward(self, outputs, called)
        if not called:
            (self._scaler.scale(loss) if self._scaler is not None else loss).backward()

    def _batch_counts(self, loader: Optional[DataLoader]) -> Optional[Sequence[int]]:
        """Every process's number of batches in `loader` (one all-gather when distributed), or None where the data
        loader has no length (batches read lazily) or there is none."""
        try:
            count = len(loader) if loader is not None else -1
        except TypeError:
            count = -1
        counts = batch_counts(count, self.cuda_device)
        return None if -1 in counts else counts

    def _planned_lengths(self, loader: DataLoader, accumulation: int) -> Optional[List[int]]:
        """Every process's number of micro-batches this epoch once evened (see `even_batches`), or None where the
        data loader has no length (batches read lazily)."""
        counts = self._batch_counts(loader)
        return planned_lengths(counts, accumulation) if counts is not None else None

    def _refuse_too_little_data(self) -> None:
        """Before training: training data that leaves a process without a batch, and validation data that does so
        where the model's metrics reduce at every batch, are refused with every process's count (found only at the
        first validation, the first epoch's work would be lost)."""
        counts = self._batch_counts(self.data_loader)
        if counts is not None:
            refuse_too_little_data(counts, "training data")
        counts = self._batch_counts(self._validation_data_loader)
        if counts is not None:
            refuse_too_little_validation_data(counts, self.model)

    def _sync_buffers_before_uneven_validation(self) -> None:
        """DDP broadcasts rank 0's buffers in the first forward pass after training (a collective call); where a
        process validates no batch, every process makes that broadcast here instead, before validating."""
        ddp = self._pytorch_model
        if isinstance(ddp, torch.nn.parallel.DistributedDataParallel) and ddp.will_sync_module_buffers():
            for buffer in ddp.module.buffers():
                dist.broadcast(buffer, 0)
            ddp.require_forward_param_sync = False  # as DDP's own forward pass without gradients leaves it

    def _train_epoch(self, epoch: int) -> Dict[str, float]:
        logger.info("Epoch %d/%d", epoch, self._num_epochs - 1)
        memory = {f"worker_{w}_memory_MB": m / 2**20 for w, m in common_util.peak_cpu_memory().items()}
        memory.update({f"gpu_{g}_memory_MB": m / 2**20 for g, m in common_util.peak_gpu_memory().items()})
        if epoch < len(self._epoch_start_random_states):  # recovering: this epoch draws its data order again
            set_random_state(self._epoch_start_random_states[epoch])
        self._epoch_loss, self._epoch_tokens, self._epoch_positions = self._zero_loss(), None, 0
        self._maybe_resume()  # when the checkpoint lies at this epoch's start
        if epoch >= len(self._epoch_start_random_states):
            self._epoch_start_random_states.append(get_random_state())
        self._pytorch_model.train()
        ddp = (
            self._pytorch_model if isinstance(self._pytorch_model, torch.nn.parallel.DistributedDataParallel) else None
        )
        accumulation = self._num_gradient_accumulation_steps
        world = dist.get_world_size() if self._distributed else 1
        # Every process takes the same number of optimizer steps (its last batches split if it has fewer), so no
        # batch is left out and no step needs to ask whether another process ran out of data.
        lengths = self._planned_lengths(self.data_loader, accumulation)
        rank = dist.get_rank() if self._distributed else 0
        fetched = time.perf_counter()  # when the loop last had its batches (the data wait runs from there)
        batches: Iterable[TensorDict] = iter(self.data_loader)
        steps: Union[int, float] = float("inf")
        if lengths is not None:
            batches = evened(batches, len(self.data_loader), lengths[rank])
            steps = math.ceil(lengths[rank] / accumulation)
        batches = prefetched(batches, self.cuda_device)
        groups: Iterator[List[TensorDict]] = common_util.lazy_groups_of(batches, accumulation)
        progress = Tqdm.tqdm(groups, total=steps) if self._primary else groups
        # One all-reduce a step only where the batch counts are unknown, or for a checkpoint every N seconds.
        signalled = self._distributed and (
            lengths is None or getattr(self._checkpointer, "_save_every_num_seconds", None) is not None
        )

        metrics: Dict[str, Any] = {}
        timed_tokens: Optional[torch.Tensor] = None  # real tokens of the steps this process trained (and timed)
        done_early = False
        step = -1
        audit = SyncAudit(self.cuda_device) if self.audit_host_syncs else None
        audited = audit if audit is not None else contextlib.nullcontext()
        first = True
        clock = time.perf_counter()  # the loop's time, waiting for data included; replayed steps excluded
        with audited:
            for step, group in enumerate(progress):
                if self._replaying():
                    self._batches_in_epoch_completed += 1
                    self._total_batches_completed += 1
                    self._maybe_resume()
                    clock = fetched = time.perf_counter()
                    if audit is not None:
                        audit.reset()
                    continue
                started = time.perf_counter()
                self.data_waits.append(started - fetched)
                if first:
                    self.pass_start_waits.append(started - fetched)
                    first = False
                timed_tokens, reported, metrics, done_early = self._train_step(
                    epoch, step, group, lengths, accumulation, world, signalled, ddp, progress, metrics, timed_tokens
                )
                fetched = time.perf_counter()
                self.step_times.append(fetched - started + self.data_waits[-1])
                if audit is not None:
                    self.host_sync_counts.append((self._total_batches_completed, reported, audit.count))
                    if audit.gpu:  # PyTorch's own count (sync debug mode)
                        self.cuda_sync_counts.append((self._total_batches_completed, reported, audit.cuda_syncs))
                        if audit.cuda_events:
                            self.host_sync_events.append((self._total_batches_completed, audit.cuda_events))
                    if audit.events:
                        self.host_sync_events.append((self._total_batches_completed, audit.events))
                    audit.reset()
                if done_early:
                    break
        if audit is not None:
            self._log_host_syncs(epoch)

        train_time = time.perf_counter() - clock
        if signalled and not done_early:
            self._step_signal(0)  # tell processes that still have data to stop
        if self._distributed:
            dist.barrier()
        if self._replaying():
            return {}  # an epoch finished before the checkpoint: nothing was trained in it
        epoch_loss = float(self._epoch_loss)
        if math.isnan(epoch_loss):
            raise ValueError("nan loss encountered")
        metrics = training_util.get_metrics(
            self.model, dist_reduce_sum(epoch_loss), None, None, None,
            dist_reduce_sum(self._batches_in_epoch_completed), reset=True,
        )  # fmt: skip
        # (what an end-of-epoch checkpoint holds)
        tokens, positions = self._epoch_tokens, self._epoch_positions
        self._epoch_loss, self._epoch_tokens, self._epoch_positions = self._zero_loss(), None, 0
        # Every process reduces (one may have had no batch); all processes' tokens over this one's time is the job's.
        real = dist_reduce_sum(int(tokens) if tokens is not None else 0)
        positions = dist_reduce_sum(positions)
        timed = dist_reduce_sum(int(timed_tokens) if timed_tokens is not None else 0)
        if positions:
            metrics["padding_fraction"] = 1.0 - real / positions
            metrics["tokens_per_second"] = timed / train_time if train_time else 0.0
        metrics.update(memory)
        return metrics

    def _train_step(
        self,
        epoch: int,
        step: int,
        group: List[TensorDict],
        lengths: Optional[List[int]],
        accumulation: int,
        world: int,
        signalled: bool,
        ddp: Optional[torch.nn.parallel.DistributedDataParallel],
        progress: Any,
        metrics: Dict[str, Any],
        timed_tokens: Optional[torch.Tensor],
    ) -> Tuple[Optional[torch.Tensor], bool, Dict[str, Any], bool]:
        """One optimizer step over `group` (its micro-batches). Nothing here reads the device but on report steps
        (every `metrics_every_num_batches`) and checkpoints. Returns (real tokens of the steps timed so far, whether
        it reported or saved, the last metrics, whether the epoch stops early)."""
        # The micro-batches of all processes in this step: each one's loss weighs 1 / their number.
        total = group_sizes(lengths, accumulation, step) if lengths is not None else len(group) * world
        if signalled:
            total, with_data, time_is_up = self._step_signal(len(group))
            if isinstance(self._checkpointer, LukeCheckpointer):
                self._checkpointer.agreed_time_is_up = time_is_up
            if with_data < world:  # batches read lazily: all stop when one has no more
                rank = dist.get_rank()
                logger.warning("Process %d stops its epoch early: another one has no more data", rank)
                return timed_tokens, False, metrics, True
        self.optimizer.zero_grad()
        group_loss = torch.zeros((), device=self.cuda_device)
        group_outputs = []
        for i, batch in enumerate(group):
            # Distributed: gradients are all-reduced once per step, by the last micro-batch's backward.
            sync = contextlib.nullcontext() if ddp is None or i == len(group) - 1 else ddp.no_sync()
            with sync:
                outputs = self.batch_outputs(batch, for_training=True)
                # (DDP averages the gradients over the processes: hence `world`.)
                loss = outputs["loss"] / (total / world)
                self._backward(outputs, loss)
            group_outputs.append(outputs)
            group_loss += loss.detach().float()
            real, positions = count_tokens(batch)
            if real is not None:
                self._epoch_tokens = real if self._epoch_tokens is None else self._epoch_tokens + real
                self._epoch_positions += positions
                timed_tokens = real if timed_tokens is None else timed_tokens + real
        self._epoch_loss += group_loss  # on the device: read when reported

        grad_norm = self.rescale_gradients()
        self.clip_gradient()
        if self._learning_rate_scheduler:
            self._learning_rate_scheduler.step_batch(self._total_batches_completed + 1)
        if self._momentum_scheduler:
            self._momentum_scheduler.step_batch(self._total_batches_completed + 1)
        if self._scaler is not None:
            self._scaler.step(self.optimizer)
            self._scaler.update()
        else:
            self.optimizer.step()
        if self._moving_average is not None:
            self._moving_average.apply(self._total_batches_completed + 1)
        self._batches_in_epoch_completed += 1
        self._total_batches_completed += 1

        reported = self._batches_in_epoch_completed % self._metrics_every_num_batches == 0
        norm: Optional[float] = None
        if reported:  # one read from the device; this process's metrics so far (gathered at the epoch's end)
            values = torch.stack([self._epoch_loss.float(), group_loss, grad_norm.float() if grad_norm is not None
                                  else group_loss.new_zeros(())]).tolist()  # fmt: skip
            epoch_loss, loss_value, norm = values[0], values[1], values[2] if grad_norm is not None else None
            if math.isnan(loss_value) or math.isnan(epoch_loss):
                raise ValueError("nan loss encountered")
            with local_metrics():
                metrics = training_util.get_metrics(
                    self.model, epoch_loss, None, loss_value, None, self._batches_in_epoch_completed
                )
            if self._primary:
                progress.set_description(training_util.description_from_metrics(metrics), refresh=False)
        for callback in self._callbacks:
            callback.on_batch(self, group, group_outputs, metrics, epoch, self._batches_in_epoch_completed,
                              is_training=True, is_primary=self._primary, batch_grad_norm=norm)  # fmt: skip
        if self._checkpointer is not None:
            saved = self._checkpointer.maybe_save_checkpoint(
                self, self._epochs_completed, self._batches_in_epoch_completed
            )
            reported = reported or bool(saved)  # a checkpoint reads the running loss and metrics
        return timed_tokens, reported, metrics, False

    def _log_host_syncs(self, epoch: int) -> None:
        quiet = [count for _, reported, count in self.host_sync_counts if not reported]
        loud = [count for _, reported, count in self.host_sync_counts if reported]
        logger.info(
            "Host syncs so far (epoch %d): %d on %d steps without a report (most %d), %d on %d report steps",
            epoch, sum(quiet), len(quiet), max(quiet, default=0), sum(loud), len(loud),
        )  # fmt: skip
        for step, events in self.host_sync_events[-3:]:
            logger.info("Host syncs of step %d: %s", step, "; ".join(events[:20]))

    # --- validation ---------------------------------------------------------------------------------------------

    def _validation_loss(self, epoch: int) -> Tuple[float, Optional[float], int]:
        """allennlp's validation loop, over every process's every batch (the evened batches, as in training), with the
        loss kept on the device and progress reports every `metrics_every_num_batches` batches."""
        loader = self._validation_data_loader
        if loader is None:
            raise ConfigurationError("Validation results cannot be calculated without a validation_data_loader")
        counts = self._batch_counts(loader)
        lengths = validation_lengths(counts) if counts is not None else None
        if self._distributed and lengths is None:  # batches read lazily: allennlp's loop (all stop with the first)
            return super()._validation_loss(epoch)
        logger.info("Validating")
        if lengths is not None and 0 in lengths:
            self._sync_buffers_before_uneven_validation()
        self._pytorch_model.eval()
        if self._moving_average is not None:  # the averaged weights, for validation only
            self._moving_average.assign_average_value()
        try:
            batches: Iterable[TensorDict] = loader
            if lengths is not None:
                batches = evened(loader, len(loader), lengths[dist.get_rank() if self._distributed else 0])
            batches = prefetched(batches, self.cuda_device)
            progress = Tqdm.tqdm(batches, total=max(lengths) if lengths else None) if self._primary else batches
            device_losses: Optional[torch.Tensor] = None  # (loss, regularization loss) sums
            count, metrics = 0, {}
            for batch in progress:
                outputs = self.batch_outputs(batch, for_training=False)
                loss = outputs.get("loss")
                if loss is not None:  # (a model need not compute a validation loss; batches count only with one)
                    count += 1
                    reg_loss = outputs.get("reg_loss")
                    reg_loss = reg_loss.detach() if reg_loss is not None else torch.zeros_like(loss)
                    both = torch.stack([loss.detach().double(), reg_loss.double()])
                    device_losses = both if device_losses is None else device_losses + both
                if count and count % self._metrics_every_num_batches == 0:
                    val_loss, val_reg_loss = device_losses.tolist()  # type: ignore[union-attr]
                    with local_metrics():
                        metrics = training_util.get_metrics(self.model, val_loss, None, None, None, count)
                    if self._primary:
                        progress.set_description(training_util.description_from_metrics(metrics), refresh=False)
                for callback in self._callbacks:
                    callback.on_batch(self, [batch], [outputs], metrics, epoch, count, is_training=False,
                                      is_primary=self._primary)  # fmt: skip
            val_loss, val_reg_loss = device_losses.tolist() if device_losses is not None else (0.0, 0.0)
            has_reg = self.model.get_regularization_penalty() is not None
            return val_loss, (val_reg_loss if has_reg else None), count
        finally:
            if self._moving_average is not None:
                self._moving_average.restore()

    # --- checkpoints and exact recovery --------------------------------------------------------------------------

    def _metrics_of_model(self) -> Dict[str, Metric]:
        return {name: value for name, value in vars(self.model).items() if isinstance(value, Metric)}

    def _metric_states(self) -> Dict[str, Any]:
        return {name: metric_state(metric) for name, metric in self._metrics_of_model().items()}

    def _load_metric_states(self, states: Dict[str, Any]) -> None:
        for name, metric in self._metrics_of_model().items():
            if name in states:
                load_metric_state(metric, states[name])

    def get_checkpoint_state(self) -> Optional[TrainerCheckpoint]:
        # Every process's own state: each draws its own dropout masks and counts its own metrics.
        mine = {
            "random": get_random_state(),
            "epoch_start_random": self._epoch_start_random_states,
            "loss": float(self._epoch_loss),
            "metrics": self._metric_states(),
            "tokens": [int(self._epoch_tokens), self._epoch_positions] if self._epoch_tokens is not None else None,
        }
        if self._distributed:
            processes: List[Any] = [None] * dist.get_world_size()
            dist.all_gather_object(processes, mine)
        else:
            processes = [mine]
        checkpoint = super().get_checkpoint_state()
        if checkpoint is not None:
            checkpoint.trainer_state["processes"] = processes
            if self._scaler is not None:  # fp16: the loss scale and its growth tracker (plain values)
                checkpoint.trainer_state["grad_scaler"] = self._scaler.state_dict()
        return checkpoint

    def _maybe_restore_checkpoint(self) -> None:
        """allennlp's restore (model, optimizer, schedulers, metric tracker, callbacks, position), reading the
        checkpoint once, and what this trainer adds: each process's random and metric states."""
        state = self._checkpointer.load_checkpoint() if self._checkpointer is not None else None
        if state is None:
            self._start_after_epochs_completed = self._start_after_batches_in_epoch_completed = 0
            self._best_model_filename = None
            return
        model_state, training_state = state
        if training_state["version"] != 1:
            raise ValueError(f"{type(self).__name__} reads checkpoints of version 1, not {training_state['version']}")
        (self._ddp_wrapped_model if self._distributed else self._pytorch_model).load_state_dict(model_state)
        self._metric_tracker.load_state_dict(training_state["metric_tracker"])
        self.optimizer.load_state_dict(training_state["optimizer"])
        for callback, callback_state in zip(self._callbacks, training_state["callbacks"]):
            callback.load_state_dict(callback_state)
        for name in ("learning_rate_scheduler", "momentum_scheduler", "moving_average"):
            if getattr(self, f"_{name}") is not None:
                getattr(self, f"_{name}").load_state_dict(training_state[name])
        if self._scaler is not None and training_state.get("grad_scaler"):
            self._scaler.load_state_dict(training_state["grad_scaler"])
        self._start_after_epochs_completed = training_state["epochs_completed"]
        self._start_after_batches_in_epoch_completed = training_state["batches_in_epoch_completed"]
        self._best_model_filename = training_state["best_model_filename"]

        processes = training_state.get("processes")
        world_size = dist.get_world_size() if self._distributed else 1
        if not processes or len(processes) != world_size:
            logger.warning(
                "The checkpoint holds no random states for %d processes: training resumes, but not bit-identically "
                "to an uninterrupted run", world_size,
            )  # fmt: skip
            return
        self._resume = processes[dist.get_rank() if self._distributed else 0]
        self._epoch_start_random_states = list(self._resume["epoch_start_random"])

    def _maybe_resume(self) -> None:
        """Once the replay of the data reaches the checkpoint: its random states, running loss and metric states."""
        if self._resume is None or self._replaying():
            return
        resume, self._resume = self._resume, None
        set_random_state(resume["random"])
        self._epoch_loss = self._zero_loss() + resume["loss"]
        tokens = resume["tokens"]  # (real tokens, positions)
        self._epoch_tokens = torch.tensor(tokens[0], device=self.cuda_device) if tokens else None
        self._epoch_positions = tokens[1] if tokens else 0
        self._load_metric_states(resume["metrics"])

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
    ) -> Trainer:
        """allennlp's `gradient_descent` construction (see its docs), with `precision` and `allow_tf32`, and
        `luke_checkpointer` as the default checkpointer. Distributed, the learning rate schedule counts the steps
        every process takes (those of the process with the most batches, see `even_batches`): each process counted
        its own, and with uneven data the schedules, hence the weights, drifted apart. `cuda_device` is `"auto"` by
        default (see `resolve_cuda_device`), checked before the model is moved."""
        cuda_device = resolve_cuda_device(cuda_device)
        if distributed and learning_rate_scheduler is not None:
            try:
                count = len(data_loader)
            except TypeError:
                count = None
            if count is not None:
                device = torch.device("cuda", cuda_device) if isinstance(cuda_device, int) and cuda_device >= 0 else (
                    cuda_device if isinstance(cuda_device, torch.device) else torch.device("cpu"))  # fmt: skip
                steps = max(math.ceil(c / num_gradient_accumulation_steps) for c in batch_counts(count, device))
                schedule = learning_rate_scheduler
                learning_rate_scheduler = Lazy(
                    lambda **kwargs: schedule.construct(**{**kwargs, "num_steps_per_epoch": steps})
                )
        return super().from_partial_objects(
            model, serialization_dir, data_loader, validation_data_loader=validation_data_loader, local_rank=local_rank,
            patience=patience, validation_metric=validation_metric, num_epochs=num_epochs, cuda_device=cuda_device,
            grad_norm=grad_norm, grad_clipping=grad_clipping, distributed=distributed, world_size=world_size,
            num_gradient_accumulation_steps=num_gradient_accumulation_steps, use_amp=use_amp, no_grad=no_grad,
            optimizer=optimizer, learning_rate_scheduler=learning_rate_scheduler, momentum_scheduler=momentum_scheduler,
            moving_average=moving_average, checkpointer=checkpointer, callbacks=callbacks,
            enable_default_callbacks=enable_default_callbacks, run_confidence_checks=run_confidence_checks,
            grad_scaling=grad_scaling, ddp_accelerator=ddp_accelerator, precision=precision, allow_tf32=allow_tf32,
            metrics_every_num_batches=metrics_every_num_batches, audit_host_syncs=audit_host_syncs,
        )  # fmt: skip
