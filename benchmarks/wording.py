"""How the benchmarks word a comparison: a ratio always >= 1 with the direction in words ("1.03x slower", never
"0.97x faster"), and progress lines printed as the work happens."""
import sys
import time

_START = time.perf_counter()


def speed(reference_seconds: float, seconds: float) -> str:
    """`seconds` against `reference_seconds`: "1.42x faster", "1.03x slower" or "as fast" (within 0.5%)."""
    if abs(seconds - reference_seconds) <= 0.005 * reference_seconds:
        return "as fast"
    if seconds < reference_seconds:
        return f"{reference_seconds / seconds:.2f}x faster"
    return f"{seconds / reference_seconds:.2f}x slower"


def memory(reference_bytes: float, used_bytes: float) -> str:
    """`used_bytes` against `reference_bytes`: "1.80x less memory", "1.10x more memory" or "as much memory"."""
    if abs(used_bytes - reference_bytes) <= 0.005 * reference_bytes:
        return "as much memory"
    if used_bytes < reference_bytes:
        return f"{reference_bytes / used_bytes:.2f}x less memory"
    return f"{used_bytes / reference_bytes:.2f}x more memory"


def progress(message: str) -> None:
    """A line on stderr with the time since the start, flushed at once (so that `make bench | tee` shows it)."""
    print(f"[{time.perf_counter() - _START:6.1f} s] {message}", file=sys.stderr, flush=True)
