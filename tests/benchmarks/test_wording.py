import sys

from tests.conftest import REPO_ROOT

sys.path.insert(0, str(REPO_ROOT / "benchmarks"))
from wording import memory, speed  # noqa: E402


def test_a_slowdown_is_called_slower():
    assert speed(1.0, 1.03) == "1.03x slower"  # not "0.97x faster"
    assert speed(1.5, 1.0) == "1.50x faster"
    assert speed(1.0, 1.004) == "as fast"


def test_memory_says_less_or_more():
    assert memory(200, 100) == "2.00x less memory"
    assert memory(100, 110) == "1.10x more memory"
    assert memory(100, 100) == "as much memory"
