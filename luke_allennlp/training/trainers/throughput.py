"""
What a training step costs: each step's wall time and data wait, the epoch's `tokens_per_second` (real word and
entity tokens, i.e. attention-mask positions, over the loop's time) and `padding_fraction`, and, under
`audit_host_syncs`, each step's count of operations that would make the host wait for a GPU.
"""

import contextlib
import logging
import time
from typing import Any, Dict, Iterator, List, Optional, Tuple

import torch
from allennlp.common.checks import ConfigurationError
from allennlp.nn.util import dist_reduce_sum

from luke_allennlp.training.trainers.sync_audit import SyncAudit

logger = logging.getLogger(__name__)


class StepTimes:
    def __init__(self) -> None:
        self.data_waits: List[float] = []  # seconds each step waited for its batches
        self.step_times: List[float] = []  # each step's wall time, its data wait included
        self.pass_start_waits: List[float] = []  # the data wait of each epoch's first step

    def record(self, wait: float, seconds: float, first: bool) -> None:
        self.data_waits.append(wait)
        self.step_times.append(seconds + wait)
        if first:
            self.pass_start_waits.append(wait)


class EpochClock:
    """An epoch loop's time: each step's data wait (from when the loop last had its batches) and wall time, recorded
    into `StepTimes`, and the loop's own time for `tokens_per_second`, the steps replayed by a recovery excluded."""

    def __init__(self, times: StepTimes) -> None:
        self.times = times
        self.fetched = self.started = time.perf_counter()  # when the loop last had its batches; when it started
        self.first = True

    def start(self) -> None:
        self.started = time.perf_counter()

    def restart(self) -> None:
        """After a replayed step: the loop's time and the next step's data wait run from now."""
        self.started = self.fetched = time.perf_counter()

    @contextlib.contextmanager
    def step(self) -> Iterator[None]:
        started = time.perf_counter()
        yield
        self.fetched, wait = time.perf_counter(), started - self.fetched
        self.times.record(wait, self.fetched - started, self.first)
        self.first = False

    def seconds(self) -> float:
        return time.perf_counter() - self.started


def epoch_throughput(
    tokens: Optional[torch.Tensor], positions: int, timed_tokens: Optional[torch.Tensor], seconds: float
) -> Dict[str, float]:
    """`padding_fraction` and `tokens_per_second` of all processes (every process reduces, one may have had no
    batch): all processes' tokens over this one's time is the job's."""
    real = dist_reduce_sum(int(tokens) if tokens is not None else 0)
    positions = dist_reduce_sum(positions)
    timed = dist_reduce_sum(int(timed_tokens) if timed_tokens is not None else 0)
    if not positions:
        return {}
    return {"padding_fraction": 1.0 - real / positions, "tokens_per_second": timed / seconds if seconds else 0.0}


class HostSyncRecord:
    """Each audited step's count of host syncs (`(step, reported, count)`), their names, and on a GPU PyTorch's own
    count (sync debug mode)."""

    def __init__(self, audit: bool = False, steps: Optional[int] = None) -> None:
        if steps is not None and steps < 1:
            raise ConfigurationError(f"audited_steps must be at least 1 (or null: every step), not {steps}")
        self.audit, self.steps = audit, steps  # whether to audit, and how many steps (None: all)
        self.counts: List[Tuple[int, bool, int]] = []
        self.events: List[Tuple[int, List[str]]] = []
        self.cuda_counts: List[Tuple[int, bool, int]] = []

    def epoch_audit(self, device: torch.device, epoch: int) -> "AuditedSteps":
        """The audit of an epoch's steps (a context manager), active where steps remain to be audited."""
        if not self.audit or (self.steps is not None and len(self.counts) >= self.steps):
            return AuditedSteps(self, None, epoch)
        return AuditedSteps(self, SyncAudit(device), epoch)

    def record(self, audit: SyncAudit, step: int, reported: bool) -> bool:
        """The step's counts from `audit`, which is then reset for the next step; False once the steps to audit are
        done (the audit is to be closed)."""
        self.counts.append((step, reported, audit.count))
        if audit.gpu:
            self.cuda_counts.append((step, reported, audit.cuda_syncs))
            if audit.cuda_events:
                self.events.append((step, audit.cuda_events))
        if audit.events:
            self.events.append((step, audit.events))
        audit.reset()
        return self.steps is None or len(self.counts) < self.steps

    def log(self, epoch: int) -> None:
        quiet = [count for _, reported, count in self.counts if not reported]
        loud = [count for _, reported, count in self.counts if reported]
        logger.info(
            "Host syncs so far (epoch %d): %d on %d steps without a report (most %d), %d on %d report steps",
            epoch,
            sum(quiet),
            len(quiet),
            max(quiet, default=0),
            sum(loud),
            len(loud),
        )
        for step, events in self.events[-3:]:
            logger.info("Host syncs of step %d: %s", step, "; ".join(events[:20]))


class AuditedSteps:
    """
    An epoch's steps under a `SyncAudit` (None: not audited), as a context manager entered before the loop fetches
    its first batch: a step's count runs from the end of the step before to its own end. Closed as soon as the steps
    to audit are done, so that the next ones run at full speed; the record is logged at the epoch's end.
    """

    def __init__(self, record: HostSyncRecord, audit: Optional[SyncAudit], epoch: int) -> None:
        self.record, self.audit, self.epoch = record, audit, epoch
        self.audited = audit is not None

    def __enter__(self) -> "AuditedSteps":
        if self.audit is not None:
            self.audit.__enter__()
        return self

    def skip(self) -> None:
        """A step replayed by a recovery (its data read, not trained on): not counted."""
        if self.audit is not None:
            self.audit.reset()

    def step_done(self, step: int, reported: bool) -> None:
        """The step's count, `reported`: whether it read the device on purpose (a report or a checkpoint)."""
        if self.audit is not None and not self.record.record(self.audit, step, reported):
            self._close(None, None, None)

    def _close(self, *exc: Any) -> None:
        audit, self.audit = self.audit, None
        if audit is not None:
            audit.__exit__(*exc)

    def __exit__(self, *exc: Any) -> None:
        self._close(*exc)
        if self.audited and exc[0] is None:
            self.record.log(self.epoch)
