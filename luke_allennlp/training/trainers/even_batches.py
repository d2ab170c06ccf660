"""
Distributed training and validation step in lockstep: every process must make the same collective calls (the
gradient all-reduce of each optimizer step, metrics that all-reduce per batch), so every process needs the same
number of batches. allennlp stopped every process when the first ran out of data, so the others' last batches were
never trained on nor counted. Here a process with fewer batches splits its last ones (each batch of a tensor dict is
cut along its first dimension, the batch dimension), so that every instance is seen exactly once.

Validation data may leave a process with no batch at all (a validation file of one document): that process
validates nothing and joins the reductions that make the loss and the metrics with zero counts, so the metrics are
those of one process over the whole file. That holds for metrics that make their one collective call when they are
read; a metric that reduces at every batch (allennlp's own, e.g. `CategoricalAccuracy`) would wait at the first
batch for the process that has none, so such a model is refused before training.
"""

import math
from typing import Any, Iterable, Iterator, List, Optional, Sequence, Tuple

import torch
import torch.distributed as dist
from allennlp.common import Lazy
from allennlp.training.metrics import Metric


def batch_size(batch: Any) -> Optional[int]:
    """The number of instances in a tensor dict (the first dimension of its first tensor, or its first list's
    length); None if it holds neither."""
    if isinstance(batch, torch.Tensor):
        return batch.shape[0] if batch.dim() else None
    if isinstance(batch, dict):
        for value in batch.values():
            size = batch_size(value)
            if size is not None:
                return size
    if isinstance(batch, (list, tuple)):
        return len(batch)
    return None


def slice_batch(batch: Any, start: int, end: int) -> Any:
    """Instances `start:end` of a tensor dict (tensors and lists cut along their first dimension)."""
    if isinstance(batch, torch.Tensor):
        return batch[start:end] if batch.dim() else batch
    if isinstance(batch, dict):
        return {key: slice_batch(value, start, end) for key, value in batch.items()}
    if isinstance(batch, (list, tuple)):
        return batch[start:end]
    return batch


def split_to(batches: List[Any], count: int) -> List[Any]:
    """`batches` cut into `count` (at least as many) batches, in order, by halving the largest one again and again."""
    pieces = list(batches)
    while len(pieces) < count:
        sizes = [batch_size(piece) or 0 for piece in pieces]
        largest = max(range(len(pieces)), key=lambda i: sizes[i]) if pieces else None
        if largest is None or sizes[largest] < 2:
            raise ValueError(
                f"This process has {sum(sizes)} instances in its last {len(batches)} batches but needs {count} "
                "batches to keep in step with the other processes: use fewer processes, smaller batches or more data"
            )
        half = math.ceil(sizes[largest] / 2)
        whole = pieces[largest]
        pieces[largest : largest + 1] = [slice_batch(whole, 0, half), slice_batch(whole, half, sizes[largest])]
    return pieces


def evened(batches: Iterable[Any], have: int, want: int) -> Iterator[Any]:
    """The `have` batches of `batches` as `want` (>= `have`): the first `have - (want - have)` as they are, the rest
    split (see `split_to`). Raises if `batches` yields another number than `have` (the others would hang)."""
    extra = max(want - have, 0)
    keep = max(have - extra, 0)
    yielded, tail = 0, []
    for batch in batches:
        if yielded < keep:
            yielded += 1
            yield batch
        else:
            tail.append(batch)
    if yielded + len(tail) != have:
        raise RuntimeError(f"The data loader yielded {yielded + len(tail)} batches, though its length said {have}")
    yield from split_to(tail, want - keep)


def batch_counts(count: int, device: torch.device) -> Sequence[int]:
    """Every process's number of batches (one all-gather; `[count]` without distributed training)."""
    if not (dist.is_available() and dist.is_initialized()):
        return [count]
    mine = torch.tensor([count], device=device)
    gathered = [torch.zeros_like(mine) for _ in range(dist.get_world_size())]
    dist.all_gather(gathered, mine)
    return [int(c) for c in torch.cat(gathered).tolist()]


def _without_a_batch(counts: Sequence[int], what: str) -> Optional[str]:
    if not (0 in counts and max(counts) > 0):
        return None
    empty = [str(rank) for rank, count in enumerate(counts) if count == 0]
    who = f"process {empty[0]} gets" if len(empty) == 1 else f"processes {', '.join(empty)} get"
    return f"The {what} is too small for {len(counts)} processes: {who} no batch (batches per process: {list(counts)})"


def loader_batch_counts(loader: Any, device: torch.device) -> Optional[Sequence[int]]:
    """Every process's number of batches in `loader` (one all-gather when distributed), or None where a loader has
    no length (batches read lazily) or there is none."""
    try:
        count = len(loader) if loader is not None else -1
    except TypeError:
        count = -1
    counts = batch_counts(count, device)
    return None if -1 in counts else counts


def scheduled_by_every_process(schedule: Lazy, data_loader: Any, accumulation: int, cuda_device: Any) -> Lazy:
    """`schedule` (a lazy learning-rate scheduler) counting the optimizer steps every process takes in an epoch
    (those of the process with the most batches; one all-gather): with each process counting its own, the
    schedules, hence the weights, drift apart on uneven data. Unchanged for a loader without a length."""
    try:
        count = len(data_loader)
    except TypeError:
        return schedule
    device = (
        torch.device("cuda", cuda_device)
        if isinstance(cuda_device, int) and cuda_device >= 0
        else (cuda_device if isinstance(cuda_device, torch.device) else torch.device("cpu"))
    )
    steps = max(math.ceil(c / accumulation) for c in batch_counts(count, device))
    return Lazy(lambda **kwargs: schedule.construct(**{**kwargs, "num_steps_per_epoch": steps}))


def step_signal(micro_batches: int, time_is_up: bool, device: torch.device) -> Tuple[int, int, bool]:
    """One small all-reduce for a step, where the batch counts are not known ahead or rank 0's clock decides
    checkpoints: (micro-batches of all processes, processes with data, whether rank 0 says to save)."""
    signal = torch.tensor([micro_batches, int(micro_batches > 0), int(time_is_up)], device=device)
    dist.all_reduce(signal, dist.ReduceOp.SUM)
    total, with_data, up = signal.tolist()
    return total, with_data, bool(up)


def sync_buffers_before_uneven_validation(model: torch.nn.Module) -> None:
    """DDP broadcasts rank 0's buffers in the first forward pass after training (a collective call); where a
    process validates no batch, every process makes that broadcast here instead, before validating."""
    if isinstance(model, torch.nn.parallel.DistributedDataParallel) and model.will_sync_module_buffers():
        for buffer in model.module.buffers():
            dist.broadcast(buffer, 0)
        model.require_forward_param_sync = False  # as DDP's own forward pass without gradients leaves it


def refuse_too_little_data(counts: Sequence[int], what: str = "data") -> None:
    """Raises a `ValueError` with every process's batch count where some processes have batches and others none:
    a process without a batch has nothing to split and could not keep in step with the others."""
    problem = _without_a_batch(counts, what)
    if problem:
        raise ValueError(f"{problem}; use fewer processes or more data")


def metrics_reduced_per_batch(model: torch.nn.Module) -> List[str]:
    """The model's metrics (attributes of its modules, or values of a dict attribute) that may make collective calls
    at every batch: every allennlp `Metric` but those marked `gathered_when_read`, as `"name (Class)"`."""
    found = []
    for prefix, module in model.named_modules():
        for attribute, value in vars(module).items():
            named = value.items() if isinstance(value, dict) else [(None, value)]
            for key, metric in named:
                if isinstance(metric, Metric) and not getattr(metric, "gathered_when_read", False):
                    name = ".".join(part for part in (prefix, attribute, key) if part)
                    found.append(f"{name} ({type(metric).__name__})")
    return found


def refuse_too_little_validation_data(counts: Sequence[int], model: torch.nn.Module) -> None:
    """Raises a `ValueError` where some process gets no validation batch and the model has a metric that reduces
    at every batch (see the module's docstring); a process without a validation batch is otherwise fine."""
    problem = _without_a_batch(counts, "validation data")
    per_batch = metrics_reduced_per_batch(model) if problem else []
    if per_batch:
        raise ValueError(
            f"{problem}, and the model's metric {', '.join(per_batch)} sums over the processes at every batch, "
            "so the others would wait for it; use fewer processes, more validation data, or metrics that gather "
            "their counts when read (this project's luke_* metrics)"
        )


def planned_lengths(counts: Sequence[int], accumulation: int) -> List[int]:
    """Each process's number of micro-batches once evened: the same number of optimizer steps everywhere (the
    most any process has), each process keeping its own batches where that gives it as many steps already."""
    refuse_too_little_data(counts)
    steps = max(math.ceil(c / accumulation) for c in counts)
    return [c if math.ceil(c / accumulation) == steps else (steps - 1) * accumulation + 1 for c in counts]


def validation_lengths(counts: Sequence[int]) -> List[int]:
    """Each process's number of validation batches once evened: the most any process has, and none for a process
    that has none (it validates nothing and adds nothing to the sums that make the metrics)."""
    most = max(counts, default=0)
    return [most if count else 0 for count in counts]


def group_sizes(lengths: Sequence[int], accumulation: int, step: int) -> int:
    """The number of micro-batches, summed over the processes, of optimizer step `step` (from 0)."""
    return sum(min(accumulation, max(n - step * accumulation, 0)) for n in lengths)


def refuse_too_little_data_for(
    data_loader: Any, validation_loader: Any, model: torch.nn.Module, device: torch.device
) -> None:
    """Before training: training data that leaves a process without a batch, and validation data that does so
    where the model's metrics reduce at every batch, are refused with every process's count (found only at the
    first validation, the first epoch's work would be lost)."""
    counts = loader_batch_counts(data_loader, device)
    if counts is not None:
        refuse_too_little_data(counts, "training data")
    counts = loader_batch_counts(validation_loader, device)
    if counts is not None:
        refuse_too_little_validation_data(counts, model)
