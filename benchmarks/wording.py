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


def paired(sides, rounds: int, warmup: int = 1, label: str = ""):
    """
    Times each side (`{name: function}`) `rounds` times after `warmup` untimed calls, the sides alternating in each
    round and their order reversed every other round, so that the load of a shared machine falls on all alike.
    Returns `{name: [(wall seconds, CPU seconds of this thread), ...]}` (the thread's CPU time leaves out the time
    the machine gave other processes).
    """
    names = list(sides)
    for _ in range(warmup):
        for name in names:
            sides[name]()
    samples = {name: [] for name in names}
    for round_ in range(rounds):
        for name in names if round_ % 2 == 0 else names[::-1]:
            if label:
                progress(f"{label}: round {round_ + 1} of {rounds}, {name}")
            wall, cpu = time.perf_counter(), time.thread_time()
            sides[name]()
            samples[name].append((time.perf_counter() - wall, time.thread_time() - cpu))
    return samples


def spread(samples, which: int = 1) -> str:
    """ "median (min-max)" of one column of `paired`'s samples (1: CPU seconds, 0: wall seconds), in seconds."""
    import statistics

    values = [sample[which] for sample in samples]
    return f"{statistics.median(values):.3f} s ({min(values):.3f}-{max(values):.3f})"


def median(samples, which: int = 1) -> float:
    import statistics

    return statistics.median(sample[which] for sample in samples)
