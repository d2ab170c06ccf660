"""
Ordered, bounded parallel map over batches of pages.

`multiprocessing.Pool.imap` reads its whole input as fast as it can, so a dump streamed into it would pile
up in memory whenever the workers are slower than the reader. `ordered_map` keeps at most
`2 * num_workers` batches in flight and yields results in input order, so the output does not depend on the
number of workers.
"""

import collections
import multiprocessing
import os
import signal
from typing import Any, Callable, Iterable, Iterator, List, Optional, Set, Tuple, TypeVar

from luke_allennlp.resources.output import worker_signals
from luke_allennlp.wikipedia.dump import WikiPage

# Blocked while workers are forked, until `_start_worker` has set their handlers.
WORKER_SIGNALS = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGINT", "SIGHUP") if hasattr(signal, name))

T = TypeVar("T")
R = TypeVar("R")


def default_num_workers() -> int:
    """The CPU cores this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def ordered_map(
    function: Callable[[T], R],
    items: Iterable[T],
    num_workers: int,
    initializer: Optional[Callable[..., None]] = None,
    initargs: Tuple[Any, ...] = (),
) -> Iterator[R]:
    """
    `function` over `items` in `num_workers` processes (in this process when `num_workers` <= 1), results in
    input order. `initializer(*initargs)` sets up each worker; with the `fork` start method (Linux) large
    `initargs` (a title index) are inherited, not copied through pipes.
    """
    if num_workers <= 1:
        if initializer is not None:
            initializer(*initargs)
        for item in items:
            yield function(item)
        return
    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("fork" if "fork" in methods else None)
    # Workers are forked with SIGTERM blocked and unblock it once its handler is the default (`_start_worker`).
    # Forked unblocked, a worker inherits the parent's Python-level SIGTERM handler (allennlp's command line installs
    # one): a SIGTERM from `Pool.terminate()` arriving before the worker resets it is taken by CPython's C handler and
    # then dropped (the handler it finds by then is the default), so the worker lives on and `terminate()` waits for
    # it without end. The pool's helper threads, started here, keep the mask: SIGTERM reaches this thread only.
    blocked = _block(*WORKER_SIGNALS)  # (Ctrl-C and SIGHUP too: they reach the whole process group, see below)
    try:
        pool = context.Pool(num_workers, initializer=_start_worker, initargs=(initializer, initargs))
    finally:
        _unblock(blocked)
    try:
        pending: collections.deque = collections.deque()
        for item in items:
            pending.append(pool.apply_async(function, (item,)))
            if len(pending) >= 2 * num_workers:
                yield pending.popleft().get()
        while pending:
            yield pending.popleft().get()
        pool.close()
    except BaseException:  # an error, or the caller stopped early (GeneratorExit)
        pool.terminate()
        raise
    finally:
        pool.join()


def _start_worker(initializer: Optional[Callable[..., None]], initargs: Tuple[Any, ...]) -> None:
    # `allennlp`'s command line turns SIGTERM into an exception (SigTermReceived), which a worker would catch as
    # a failed task and then outlive `Pool.terminate()`: workers go back to the default, exiting.
    # Ctrl-C (and a closed terminal's SIGHUP) reach the whole process group: the main process stops the pool and says
    # so in one line, where each worker printed a KeyboardInterrupt traceback of its own: workers ignore them.
    worker_signals()
    _unblock(set(WORKER_SIGNALS))  # a SIGTERM sent meanwhile (it waited, blocked) ends the worker now
    if initializer is not None:
        initializer(*initargs)


def _block(*signums: int) -> Set[int]:
    """Blocks `signums` in this thread (where the platform has signal masks); those that were not blocked yet, what
    `_unblock` takes back."""
    if not hasattr(signal, "pthread_sigmask"):
        return set()
    was_blocked = signal.pthread_sigmask(signal.SIG_BLOCK, set(signums))
    return set(signums) - set(was_blocked)


def _unblock(signums: Set[int]) -> None:
    if signums and hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, signums)


def page_batches(
    pages: Iterable[WikiPage], max_pages: int = 64, max_chars: int = 1_000_000
) -> Iterator[List[WikiPage]]:
    """Consecutive pages in batches of at most `max_pages` pages or about `max_chars` characters of markup."""
    batch: List[WikiPage] = []
    chars = 0
    for page in pages:
        batch.append(page)
        chars += len(page.text)
        if len(batch) >= max_pages or chars >= max_chars:
            yield batch
            batch, chars = [], 0
    if batch:
        yield batch
