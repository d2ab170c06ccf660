import os

import pytest


def _busy_worker() -> None:
    import time

    time.sleep(30)  # a data-loader worker still reading when its loader stops


def test_a_worker_terminated_at_the_end_of_training_dies_without_a_traceback(capfd):
    """The `allennlp` command turns SIGTERM into `SigTermReceived`; a data-loader worker forked while training
    inherits that handler, and one that the loader terminates at the end printed the exception's traceback (six after
    a successful single-process pretraining run). Under the trainer's `quiet_worker_sigterm` it dies as by default,
    and the training process keeps the command's handler."""
    import multiprocessing
    import signal

    from allennlp.common.util import SigTermReceived, _handle_sigterm

    from luke_allennlp.training.trainers.loader_workers import quiet_worker_sigterm

    previous = signal.signal(signal.SIGTERM, _handle_sigterm)  # as allennlp's __main__ installs it
    try:
        with quiet_worker_sigterm():
            worker = multiprocessing.get_context("fork").Process(target=_busy_worker, daemon=True)
            worker.start()
            worker.join(0.5)
            worker.terminate()
            worker.join(10)
        assert worker.exitcode == -signal.SIGTERM
        assert "Traceback" not in capfd.readouterr().err
        assert signal.getsignal(signal.SIGTERM) is _handle_sigterm
        with quiet_worker_sigterm(), pytest.raises(SigTermReceived):  # the training process: the command's handler
            os.kill(os.getpid(), signal.SIGTERM)
    finally:
        signal.signal(signal.SIGTERM, previous)
