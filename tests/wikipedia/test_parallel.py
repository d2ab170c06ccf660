import os
import signal

import pytest

from luke_allennlp.wikipedia.dump import WikiPage
from luke_allennlp.wikipedia.parallel import ordered_map, page_batches


def square(x):
    return x * x, os.getpid()


class SigTermReceived(Exception):
    """What allennlp's command line raises on SIGTERM (allennlp.common.util.install_sigterm_handler)."""


@pytest.fixture
def allennlp_sigterm_handler():
    def raise_on_sigterm(signum, frame):
        raise SigTermReceived

    def time_out(signum, frame):
        raise TimeoutError("ordered_map hung")

    previous = signal.signal(signal.SIGTERM, raise_on_sigterm), signal.signal(signal.SIGALRM, time_out)
    signal.alarm(120)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGTERM, previous[0])
    signal.signal(signal.SIGALRM, previous[1])


def test_results_keep_input_order_in_worker_processes(allennlp_sigterm_handler):
    results = list(ordered_map(square, range(50), num_workers=2))
    assert [value for value, _ in results] == [x * x for x in range(50)]
    assert os.getpid() not in {pid for _, pid in results}
    assert [value for value, _ in ordered_map(square, range(5), num_workers=1)] == [0, 1, 4, 9, 16]


def test_stopping_early_ends_the_workers(allennlp_sigterm_handler):
    # Pool.terminate() sends SIGTERM: workers must exit even where the parent turned SIGTERM into an exception.
    results = ordered_map(square, range(1000), num_workers=2)
    assert next(results)[0] == 0
    results.close()


def test_page_batches():
    pages = [WikiPage(str(i), i, 0, "x" * 10) for i in range(7)]
    assert [len(b) for b in page_batches(pages, max_pages=3)] == [3, 3, 1]
    assert [len(b) for b in page_batches(pages, max_chars=25)] == [3, 3, 1]
