import os
import subprocess
import sys
import textwrap

from luke_allennlp.wikipedia.dump import WikiPage
from luke_allennlp.wikipedia.parallel import page_batches
from tests.conftest import REPO_ROOT


def square(x):
    return x * x, os.getpid()


class SigTermReceived(Exception):
    """What allennlp's command line raises on SIGTERM (allennlp.common.util.install_sigterm_handler)."""


PRELUDE = (
    "import os, signal\n"
    "from luke_allennlp.wikipedia.parallel import ordered_map\n"
    "from tests.wikipedia.test_parallel import SigTermReceived, square\n"
)


def run_fresh(code: str) -> None:
    """Runs `code` in a fresh interpreter, as the builders' commands do, within 120 s: forking the pool from the test
    process, after hundreds of tests have left their thread pools in it, once left a worker that
    `Pool.terminate()` then waited for without end (a fork of a multi-threaded process)."""
    script = PRELUDE + textwrap.dedent(code)
    result = subprocess.run([sys.executable, "-c", script], cwd=REPO_ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-3000:]


def test_results_keep_input_order_in_worker_processes():
    run_fresh(
        """
        results = list(ordered_map(square, range(50), num_workers=2))
        assert [value for value, _ in results] == [x * x for x in range(50)]
        assert os.getpid() not in {pid for _, pid in results}
        assert [value for value, _ in ordered_map(square, range(5), num_workers=1)] == [0, 1, 4, 9, 16]
        """
    )


def test_stopping_early_ends_the_workers():
    # Pool.terminate() sends SIGTERM: workers must exit even where the parent turned SIGTERM into an exception
    # (allennlp's command line does: allennlp.common.util.install_sigterm_handler).
    run_fresh(
        """
        def raise_on_sigterm(signum, frame):
            raise SigTermReceived

        signal.signal(signal.SIGTERM, raise_on_sigterm)
        results = ordered_map(square, range(1000), num_workers=2)
        assert next(results)[0] == 0
        results.close()
        import multiprocessing
        assert not multiprocessing.active_children()
        """
    )


def test_page_batches():
    pages = [WikiPage(str(i), i, 0, "x" * 10) for i in range(7)]
    assert [len(b) for b in page_batches(pages, max_pages=3)] == [3, 3, 1]
    assert [len(b) for b in page_batches(pages, max_chars=25)] == [3, 3, 1]
