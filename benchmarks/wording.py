"""How the benchmarks word a comparison: a ratio always >= 1 with the direction in words ("1.03x slower", never
"0.97x faster"), and progress lines printed as the work happens."""

import sys
import time

_START = time.perf_counter()


def ratio(reference: float, value: float, smaller: str, larger: str, same: str) -> str:
    """`value` against `reference` as a ratio >= 1 followed by the direction's word (`same` within 0.5%)."""
    if abs(value - reference) <= 0.005 * reference:
        return same
    if value < reference:
        return f"{reference / value:.2f}x {smaller}"
    return f"{value / reference:.2f}x {larger}"


def speed(reference_seconds: float, seconds: float) -> str:
    """ "1.42x faster", "1.03x slower" or "as fast"."""
    return ratio(reference_seconds, seconds, "faster", "slower", "as fast")


def memory(reference_bytes: float, used_bytes: float) -> str:
    """ "1.80x less memory", "1.10x more memory" or "as much memory"."""
    return ratio(reference_bytes, used_bytes, "less memory", "more memory", "as much memory")


def progress(message: str) -> None:
    """A line on stderr with the time since the start, flushed at once (so that `make bench | tee` shows it)."""
    print(f"[{time.perf_counter() - _START:6.1f} s] {message}", file=sys.stderr, flush=True)
