"""
One epoch of training as an object: what the epoch plans (every process's number of batches once evened, the
micro-batches a step accumulates, the processes), its batches grouped into steps and copied to the device behind the
progress bar, its clock, and what the steps leave for the epoch's end (the last reported metrics, the real tokens of
the steps timed, whether it stopped early). `LukeGradientDescentTrainer._train_epoch` makes one an epoch; each step
reads and updates it.
"""

import contextlib
import logging
import math
from typing import Any, Dict, Iterable, Iterator, List, Optional, Tuple, Union

import torch
import torch.distributed as dist
from allennlp.common import Tqdm
from allennlp.common import util as common_util
from allennlp.data.data_loaders.data_loader import DataLoader, TensorDict
from allennlp.training import util as training_util

from luke_allennlp.training.checkpointers.luke_checkpointer import LukeCheckpointer
from luke_allennlp.training.trainers.allennlp_state import AllenNlpTrainerState
from luke_allennlp.training.trainers.device_prefetch import prefetched
from luke_allennlp.training.trainers.even_batches import (
    evened,
    group_sizes,
    loader_batch_counts,
    planned_lengths,
    step_signal,
)
from luke_allennlp.training.trainers.throughput import EpochClock, StepTimes

logger = logging.getLogger(__name__)


class EpochLoop:
    """
    The steps of one epoch (iterating over it gives each step's micro-batches, `step` its index in the epoch, replayed
    steps included) and the state they share. Every process takes the same number of steps, one with fewer batches
    splitting its last ones (`even_batches`), so that no batch is left out and no step needs to ask whether another
    process ran out of data. Where the batch counts are not known ahead (a loader without a length) or rank 0's clock
    decides checkpoints, each step makes one small all-reduce instead (`signalled`, see `even_batches.step_signal`).

    # Parameters

    epoch : `int`
        The epoch (from 0).
    state : `AllenNlpTrainerState`
        The trainer's settings (processes, accumulation) and the model its steps call.
    data_loader : `DataLoader`
        The training data, whose batches stay on the host: they are copied to `device` here, a step ahead.
    device : `torch.device`
        The training device.
    times : `StepTimes`
        Where the epoch's clock records each step's time and data wait.
    """

    def __init__(
        self,
        epoch: int,
        state: AllenNlpTrainerState,
        data_loader: DataLoader,
        device: torch.device,
        times: StepTimes,
    ) -> None:
        self.epoch = epoch
        self.device, self.distributed, self.primary = device, state.distributed, state.primary
        model = state.pytorch_model
        self.ddp = model if isinstance(model, torch.nn.parallel.DistributedDataParallel) else None
        self.accumulation: int = state.num_gradient_accumulation_steps
        self.world = dist.get_world_size() if self.distributed else 1
        counts = loader_batch_counts(data_loader, device)
        # every process's number of batches once evened; None where batches are read lazily
        self.lengths: Optional[List[int]] = planned_lengths(counts, self.accumulation) if counts is not None else None
        rank = dist.get_rank() if self.distributed else 0
        self.clock = EpochClock(times)  # (the first step's data wait runs from here)
        batches: Iterable[TensorDict] = iter(data_loader)
        steps: Union[int, float] = float("inf")
        if self.lengths is not None:
            batches = evened(batches, len(data_loader), self.lengths[rank])
            steps = math.ceil(self.lengths[rank] / self.accumulation)
        groups = common_util.lazy_groups_of(prefetched(batches, device), self.accumulation)
        self.progress: Iterable[List[TensorDict]] = Tqdm.tqdm(groups, total=steps) if self.primary else groups
        # `luke_checkpointer` every N seconds: rank 0's clock decides, and tells the others at each step
        checkpointer = state.checkpointer
        self.checkpointer = checkpointer if isinstance(checkpointer, LukeCheckpointer) else None
        saves_by_time = self.checkpointer is not None and self.checkpointer.saves_by_time
        self.signalled = self.distributed and (self.lengths is None or saves_by_time)
        self.step = 0
        self.metrics: Dict[str, Any] = {}  # the last reported training metrics
        self.timed_tokens: Optional[torch.Tensor] = None  # real tokens of the steps this process trained (and timed)
        self.stopped_early = False  # another process had no more data
        self.seconds = 0.0  # the loop's time, waiting for data included (set by `end`)

    def __iter__(self) -> Iterator[List[TensorDict]]:
        self.clock.start()
        for step, group in enumerate(self.progress):
            self.step = step
            yield group

    def micro_batches_in_step(self, micro_batches: int) -> Optional[int]:
        """The micro-batches of all processes in this step (`micro_batches`: this process's); None where another
        process has no more data (all stop). Where steps are signalled, one small all-reduce says it, with rank 0's
        decision to save a checkpoint (told to the checkpointer)."""
        if not self.signalled:
            if self.lengths is None:
                return micro_batches * self.world
            return group_sizes(self.lengths, self.accumulation, self.step)
        checkpointer = self.checkpointer
        time_is_up = self.primary and checkpointer is not None and checkpointer.time_is_up()
        total, with_data, time_is_up = step_signal(micro_batches, time_is_up, self.device)
        if checkpointer is not None:
            checkpointer.agreed_time_is_up = time_is_up
        if with_data < self.world:  # batches read lazily: all stop when one has no more
            logger.warning("Process %d stops its epoch early: another one has no more data", dist.get_rank())
            self.stopped_early = True
            return None
        return total

    def micro_batches(self, group: List[TensorDict]) -> Iterator[Tuple[TensorDict, contextlib.AbstractContextManager]]:
        """Each micro-batch of a step, with the context of its forward and backward pass: distributed, the gradients
        are all-reduced once a step, by the last micro-batch's backward (`no_sync` on the others)."""
        for i, batch in enumerate(group):
            last = i == len(group) - 1
            yield batch, contextlib.nullcontext() if self.ddp is None or last else self.ddp.no_sync()

    def count_timed(self, real_tokens: Optional[torch.Tensor]) -> None:
        if real_tokens is not None:
            self.timed_tokens = real_tokens if self.timed_tokens is None else self.timed_tokens + real_tokens

    def report(self, metrics: Dict[str, Any]) -> None:
        """A report step's metrics: passed on until the next report, and shown on the primary's progress bar."""
        self.metrics = metrics
        if self.primary:
            description = training_util.description_from_metrics(metrics)
            self.progress.set_description(description, refresh=False)  # type: ignore[attr-defined]

    def end(self) -> None:
        """After the last step: the loop's time; distributed, the processes that still have data told to stop (where
        steps are signalled), and all of them waiting for the others."""
        self.seconds = self.clock.seconds()
        if self.signalled and not self.stopped_early:
            step_signal(0, False, self.device)
        if self.distributed:
            dist.barrier()
