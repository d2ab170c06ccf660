import contextlib
from collections import Counter
from typing import Any, Callable, Dict, Iterable, Iterator, List

import torch
from allennlp.common.util import is_distributed
from allennlp.training.metrics.metric import Metric

_local = False


@contextlib.contextmanager
def local_metrics() -> Iterator[None]:
    """Within it, this project's metrics report what this process counted, without gathering the others' counts
    (the trainer's progress reports during an epoch: no collective call on the training path)."""
    global _local
    before, _local = _local, True
    try:
        yield
    finally:
        _local = before


def gathering() -> bool:
    """Whether a metric sums the counts of all processes now (distributed, and not within `local_metrics`)."""
    return is_distributed() and not _local


class CountingMetric(Metric):
    """
    A metric computed from counts (`Counter`s keyed by label, span type, ...), exact under distributed training:
    each process counts what it sees, and `counts()` sums the counts of all processes, so every process reports
    the metric of the whole data. Keys may differ between processes (a type seen by one only), which is why the
    counters travel as Python objects rather than fixed-size tensors.

    Subclasses name their counters in `COUNTERS`, update `self._counts[name]` in `__call__`, and compute their
    values from `self.counts()` in `get_metric`. `state_dict` / `load_state_dict` hold the counts as plain
    dictionaries, so a training checkpoint can carry a metric's state exactly.

    `defer(update)` keeps an update (a function that calls the metric) until the counts are read: a model whose
    metric needs its predictions on the host (decoding) reads them from the device when metrics are reported, not
    at every batch, so the training step does not wait for the device.
    """

    supports_distributed = True
    # Every process makes its one collective call when the metric is read, not at each batch: a process that
    # validates no batch still reads it with the others (see `even_batches.metrics_reduced_per_batch`).
    gathered_when_read = True
    COUNTERS: Iterable[str] = ()

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self._counts: Dict[str, Counter] = {name: Counter() for name in self.COUNTERS}
        self._deferred: List[Callable[[], None]] = []

    def defer(self, update: Callable[[], None]) -> None:
        self._deferred.append(update)

    def _settle(self) -> None:
        deferred, self._deferred = self._deferred, []
        for update in deferred:
            update()

    def counts(self) -> Dict[str, Counter]:
        """The counts of every process, summed (a collective call when distributed: every process must make it)."""
        self._settle()
        if not gathering():
            return self._counts
        gathered = [None] * torch.distributed.get_world_size()
        torch.distributed.all_gather_object(gathered, self._counts)
        total: Dict[str, Counter] = {name: Counter() for name in self.COUNTERS}
        for counts in gathered:
            for name, counter in counts.items():  # type: ignore[union-attr]
                total[name].update(counter)
        return total

    def state_dict(self) -> Dict[str, Any]:
        self._settle()
        return {name: dict(counter) for name, counter in self._counts.items()}

    def load_state_dict(self, state: Dict[str, Any]) -> None:
        self._deferred = []
        self._counts = {name: Counter(state.get(name, {})) for name in self.COUNTERS}


def precision_recall_f1(correct: int, predicted: int, gold: int) -> Dict[str, float]:
    """Precision, recall and F1 from counts; 0 where a denominator is 0."""
    precision = correct / predicted if predicted else 0.0
    recall = correct / gold if gold else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"precision": precision, "recall": recall, "f1": f1}
