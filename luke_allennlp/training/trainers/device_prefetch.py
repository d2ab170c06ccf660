"""Batches copied to the training device one ahead of the step that needs them, without a blocking copy."""

import contextlib
from typing import Any, Callable, Iterable, Iterator, Optional, Tuple

import torch

from luke_allennlp.training.trainers import sync_audit


def map_tensors(value: Any, function: Callable[[torch.Tensor], torch.Tensor]) -> Any:
    """`value` (nested dicts, lists and tuples, as a batch is) with `function` applied to each tensor, in new
    containers (the data loader's are left as they are)."""
    if isinstance(value, torch.Tensor):
        return function(value)
    if isinstance(value, dict):
        return {key: map_tensors(item, function) for key, item in value.items()}
    if isinstance(value, tuple) and hasattr(value, "_fields"):  # a named tuple
        return type(value)(*(map_tensors(item, function) for item in value))
    if isinstance(value, (list, tuple)):
        return type(value)(map_tensors(item, function) for item in value)
    return value


def _host_side(batches: Iterable[Any]) -> Iterator[Any]:
    """`batches`, each read with an active `SyncAudit` paused: the data loader works on host tensors."""
    iterator = iter(batches)
    while True:
        audit = sync_audit.current()
        with audit.paused() if audit is not None else contextlib.nullcontext():
            batch = next(iterator, _END)
        if batch is _END:
            return
        yield batch


_END = object()


def prefetched(batches: Iterable[Any], device: torch.device) -> Iterator[Any]:
    """
    `batches` on `device`. On a GPU each batch is pinned and copied with `non_blocking` on a side stream as soon as
    the one before it is handed out, so the copy overlaps the step before and the step never waits for it on the
    host; the step's stream waits for the copy's event on the device. Elsewhere the batches pass as they are (under
    an active `SyncAudit` on the CPU, copied with `non_blocking` so that the audit tells batch tensors on the host
    from those on the device).
    """
    batches = _host_side(batches)
    if device.type != "cuda":
        for batch in batches:
            audit = sync_audit.current()
            if audit is not None and not audit.gpu:
                audit.mark_host(batch)
                batch = map_tensors(batch, lambda t: t.to(device, non_blocking=True, copy=True))
            yield batch
        return

    stream = torch.cuda.Stream(device)

    def load(batch: Any) -> Tuple[Any, torch.cuda.Event]:
        sync_audit.mark_host(batch)
        with torch.cuda.stream(stream):
            moved = map_tensors(batch, lambda t: t.pin_memory().to(device, non_blocking=True))
            event = torch.cuda.Event()
            event.record(stream)
        return moved, event

    def ready(loaded: Tuple[Any, torch.cuda.Event]) -> Any:
        moved, event = loaded
        current = torch.cuda.current_stream(device)
        current.wait_event(event)
        # The caching allocator must not reuse the batch's memory before the step's stream is done with it.
        map_tensors(moved, lambda t: t.record_stream(current) or t)
        return moved

    pending: Optional[Tuple[Any, torch.cuda.Event]] = None
    for batch in batches:
        loaded = load(batch)
        if pending is not None:
            yield ready(pending)
        pending = loaded
    if pending is not None:
        yield ready(pending)
