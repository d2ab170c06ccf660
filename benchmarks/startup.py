"""
Start-up of the `allennlp` command: the CPU time (user + system of the child process) and the wall time of
`allennlp --help` and `allennlp train --help`, in fresh interpreters, measured in one run with the variants interleaved
(the machine is shared: ratios of medians taken side by side are what can be compared).

Variants:
- `plugins`: the command as users run it, from the repository root (`.allennlp_plugins` and the installed plugin
  package), with the compatibility layer's start-up deferral (`luke_allennlp_compat.startup`);
- `bare`: the same allennlp and compatibility layer without this project's plugins (plugin discovery finds none, as
  outside the repository without the package installed; allennlp's `import_plugins` still imports all of allennlp),
  the deferral on;
- `eager`: the plugins, the deferral off (LUKE_ALLENNLP_EAGER_IMPORTS=1): what the deferral saves.

The children write and use bytecode caches as a user's Python does (PYTHONDONTWRITEBYTECODE is unset for them; one
unmeasured warm-up run first), so that the plugins are not compiled from source on every start.

Printed: each variant's median CPU and wall seconds, and the ratios plugins / bare (the plugins' share; target at most
1.1) and plugins / eager (with / without the deferral; target at most 0.5, in CPU time).

    python benchmarks/startup.py              # 5 repetitions
    python benchmarks/startup.py --repeat 1   # one quick pass
"""

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

# A fresh interpreter running the `allennlp` console script's entry point, optionally without the plugins.
RUNNER = """
import sys
if {bare!r}:
    import allennlp.common.plugins as plugins
    plugins.discover_plugins = lambda: iter(())  # import_plugins still imports all of allennlp, as it does without plugins
sys.argv = ["allennlp", *{args!r}]
from allennlp.__main__ import run
try:
    run()
except SystemExit:
    pass
"""

COMMANDS = {"--help": ["--help"], "train --help": ["train", "--help"]}
VARIANTS = {"plugins": (False, False), "bare": (True, False), "eager": (False, True)}  # (bare, eager)


def measure(args, bare: bool, eager: bool):
    """(CPU seconds, wall seconds) of one fresh `allennlp ARGS`: the child's user + system time, once reaped."""
    env = {**os.environ, "ALLENNLP_LOG_LEVEL": "WARNING"}
    env.pop("LUKE_ALLENNLP_EAGER_IMPORTS", None)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if eager:
        env["LUKE_ALLENNLP_EAGER_IMPORTS"] = "1"
    before, started = os.times(), time.perf_counter()
    child = subprocess.run(
        [sys.executable, "-c", RUNNER.format(bare=bare, args=args)], cwd=REPO, env=env, capture_output=True
    )
    wall, after = time.perf_counter() - started, os.times()
    if child.returncode != 0 or b"usage: allennlp" not in child.stdout:
        raise SystemExit(f"allennlp {' '.join(args)} failed:\n{child.stderr.decode()[-3000:]}")
    cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    return cpu, wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5, help="repetitions of each variant (interleaved)")
    parser.add_argument("--commands", nargs="+", default=list(COMMANDS), choices=list(COMMANDS))
    args = parser.parse_args()

    measure(COMMANDS["--help"], bare=False, eager=True)  # warm-up: bytecode caches written
    results = {(c, v): [] for c in args.commands for v in VARIANTS}
    order = list(VARIANTS)
    for repetition in range(args.repeat):
        for command in args.commands:
            for variant in order[repetition % len(order) :] + order[: repetition % len(order)]:  # rotated
                results[command, variant].append(measure(COMMANDS[command], *VARIANTS[variant]))
        print(f"repetition {repetition + 1}/{args.repeat} done", file=sys.stderr)

    print(
        f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}, "
        f"{args.repeat} repetition(s), medians"
    )
    print("| command | variant | CPU s (user+sys) | wall s |")
    print("|---|---|---:|---:|")
    medians = {}
    for (command, variant), samples in results.items():
        cpu = statistics.median(s[0] for s in samples)
        wall = statistics.median(s[1] for s in samples)
        medians[command, variant] = (cpu, wall)
        print(f"| allennlp {command} | {variant} | {cpu:.2f} | {wall:.2f} |")
    print()
    for command in args.commands:
        (p_cpu, p_wall), (b_cpu, b_wall), (e_cpu, e_wall) = (medians[command, v] for v in ("plugins", "bare", "eager"))
        print(
            f"allennlp {command}: plugins / bare = {p_cpu / b_cpu:.2f} CPU, {p_wall / b_wall:.2f} wall (target <= 1.1); "
            f"with / without the deferral = {p_cpu / e_cpu:.2f} CPU, {p_wall / e_wall:.2f} wall (target <= 0.5 CPU)"
        )


if __name__ == "__main__":
    main()
