"""
What a training step costs: each step's wall time and data wait, the epoch's `tokens_per_second` (real word and
entity tokens, i.e. attention-mask positions, over the loop's time) and `padding_fraction`, and, under
`audit_host_syncs`, each step's count of operations that would make the host wait for a GPU.
"""

import logging
from typing import Dict, List, Optional, Tuple

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

    def epoch_audit(self, device: torch.device) -> Optional[SyncAudit]:
        """The audit for an epoch's steps, where steps remain to be audited."""
        if not self.audit or (self.steps is not None and len(self.counts) >= self.steps):
            return None
        return SyncAudit(device)

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
