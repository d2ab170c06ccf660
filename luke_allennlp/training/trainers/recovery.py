"""
Exact recovery: a checkpoint holds, for every process, the random number generators' states (of the checkpoint and
of the start of every epoch so far), the epoch's running sums and its metrics' accumulated states, so that
`allennlp train --recover` after a kill replays the data order to the checkpoint and then trains on bit-identically
to an uninterrupted run. Every value is plain, for `torch.load(weights_only=True)`.
"""

import json
import logging
import os
from typing import Any, Dict, List, Optional

import torch
import torch.distributed as dist
from allennlp.training.metrics import Metric

from luke_allennlp.training.trainers.random_state import get_random_state, set_random_state

logger = logging.getLogger(__name__)


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


def _metrics_of(model: torch.nn.Module) -> Dict[str, Metric]:
    return {name: value for name, value in vars(model).items() if isinstance(value, Metric)}


def metric_states(model: torch.nn.Module) -> Dict[str, Any]:
    return {name: metric_state(metric) for name, metric in _metrics_of(model).items()}


def load_metric_states(model: torch.nn.Module, states: Dict[str, Any]) -> None:
    for name, metric in _metrics_of(model).items():
        if name in states:
            load_metric_state(metric, states[name])


class Recovery:
    """The random states of each epoch's start so far, and, once a checkpoint is loaded, what it restores when the
    replay of the data reaches it."""

    def __init__(self) -> None:
        self.epoch_start_random_states: List[Dict[str, Any]] = []
        self.pending: Optional[Dict[str, Any]] = None

    def replay_epoch_order(self, epoch: int) -> None:
        """At an epoch's start: where recovering, the random state that drew this epoch's data order again."""
        if epoch < len(self.epoch_start_random_states):
            set_random_state(self.epoch_start_random_states[epoch])

    def keep_epoch_start(self, epoch: int) -> None:
        if epoch >= len(self.epoch_start_random_states):
            self.epoch_start_random_states.append(get_random_state())

    def process_states(self, totals: Dict[str, Any], model: torch.nn.Module, distributed: bool) -> List[Any]:
        """Every process's own state (each draws its own dropout masks and counts its own metrics): a collective
        call when distributed."""
        mine = {
            "random": get_random_state(),
            "epoch_start_random": self.epoch_start_random_states,
            **totals,
            "metrics": metric_states(model),
        }
        if not distributed:
            return [mine]
        processes: List[Any] = [None] * dist.get_world_size()
        dist.all_gather_object(processes, mine)
        return processes

    def load(self, processes: Optional[List[Any]], world_size: int, rank: int) -> None:
        """This process's state from a checkpoint's `processes`; a warning where it holds none for this many."""
        if not processes or len(processes) != world_size:
            logger.warning(
                "The checkpoint holds no random states for %d processes: training resumes, but not bit-identically "
                "to an uninterrupted run",
                world_size,
            )
            return
        self.pending = processes[rank]
        self.epoch_start_random_states = list(self.pending["epoch_start_random"])

    def take(self) -> Optional[Dict[str, Any]]:
        """The checkpoint's state, once (its random state set again), or None where there is none to restore."""
        state, self.pending = self.pending, None
        if state is not None:
            set_random_state(state["random"])
        return state


def last_epoch_metrics(serialization_dir: Optional[str], num_epochs: int) -> Dict[str, Any]:
    """The metrics written after the last epoch (`metrics_epoch_N.json`): a run recovered after its last epoch
    trains no epoch, and allennlp's metrics then lack the `training_*`, `validation_*` and `epoch` fields, which
    `metrics.json` would lose when it is written again."""
    path = os.path.join(serialization_dir or "", f"metrics_epoch_{num_epochs - 1}.json")
    if not serialization_dir or not os.path.exists(path):
        return {}
    with open(path, encoding="utf-8") as f:
        return json.load(f)
