"""Data-loader worker processes that end quietly with training."""

import contextlib
import os
import signal
import threading
from typing import Any, Iterator, Optional

from allennlp.data.data_loaders.data_loader import DataLoader

from luke_allennlp.training.trainers.allennlp_state import take_batch_generator


def stop_data_loader_workers(loader: Optional[DataLoader]) -> None:
    """With `batches_per_epoch`, allennlp's data loader keeps its batch generator, and its worker processes, between
    epochs; left to the interpreter's exit they die writing to a closed pipe (`BrokenPipeError` tracebacks after a
    successful run). Closing the generator runs its own clean-up, which stops and joins the workers."""
    generator = take_batch_generator(loader)
    if generator is not None:
        generator.close()  # type: ignore[attr-defined]


@contextlib.contextmanager
def quiet_worker_sigterm() -> Iterator[None]:
    """
    Data-loader workers forked while training inherit the `allennlp` command's SIGTERM handler, which raises
    `SigTermReceived`. A worker still busy when its loader stops (`stop_data_loader_workers` closes the batch
    generator, which gives each worker a second to stop, then terminates it) would print that exception's traceback,
    one per worker, after a successful run. While training, the handler in a forked process (another pid) ends it as
    the default SIGTERM does, silently; in the training process itself it is the handler that was there.
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
