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

Also measured, in the same interleaved run: `import luke_allennlp.modeling` (the model in plain PyTorch), against
its peer `import torch` (what it needs; target at most 1.1) and against `import luke_allennlp.plugin` (the
registration that importing the package ran before the plugin entry existed).

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
IMPORTS = {
    "modeling": "import luke_allennlp.modeling",
    "torch": "import torch",
    "plugin": "import luke_allennlp.plugin",
}
VARIANTS = {"plugins": (False, False), "bare": (True, False), "eager": (False, True)}  # (bare, eager)


def run_child(code: str, eager: bool = False):
    """(CPU seconds, wall seconds, the child) of one fresh `python -c CODE`: its user + system time, once reaped."""
    env = {**os.environ, "ALLENNLP_LOG_LEVEL": "WARNING"}
    env.pop("LUKE_ALLENNLP_EAGER_IMPORTS", None)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if eager:
        env["LUKE_ALLENNLP_EAGER_IMPORTS"] = "1"
    before, started = os.times(), time.perf_counter()
    child = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True)
    wall, after = time.perf_counter() - started, os.times()
    cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    return cpu, wall, child


def measure(args, bare: bool, eager: bool):
    """(CPU seconds, wall seconds) of one fresh `allennlp ARGS`."""
    cpu, wall, child = run_child(RUNNER.format(bare=bare, args=args), eager)
    if child.returncode != 0 or b"usage: allennlp" not in child.stdout:
        raise SystemExit(f"allennlp {' '.join(args)} failed:\n{child.stderr.decode()[-3000:]}")
    return cpu, wall


def measure_import(name: str):
    """(CPU seconds, wall seconds) of one fresh interpreter running `IMPORTS[name]`."""
    cpu, wall, child = run_child(IMPORTS[name])
    if child.returncode != 0:
        raise SystemExit(f"{IMPORTS[name]} failed:\n{child.stderr.decode()[-3000:]}")
    return cpu, wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5, help="repetitions of each variant (interleaved)")
    parser.add_argument("--commands", nargs="+", default=list(COMMANDS), choices=list(COMMANDS))
    args = parser.parse_args()

    measure(COMMANDS["--help"], bare=False, eager=True)  # warm-up: bytecode caches written
    measure_import("modeling")
    results = {(c, v): [] for c in args.commands for v in VARIANTS}
    imports = {name: [] for name in IMPORTS}
    order, import_order = list(VARIANTS), list(IMPORTS)
    for repetition in range(args.repeat):
        for command in args.commands:
            for variant in order[repetition % len(order) :] + order[: repetition % len(order)]:  # rotated
                results[command, variant].append(measure(COMMANDS[command], *VARIANTS[variant]))
        for name in import_order[repetition % len(import_order) :] + import_order[: repetition % len(import_order)]:
            imports[name].append(measure_import(name))
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
    for name, samples in imports.items():
        medians[name] = (statistics.median(s[0] for s in samples), statistics.median(s[1] for s in samples))
        print(f"| `{IMPORTS[name]}` | | {medians[name][0]:.2f} | {medians[name][1]:.2f} |")
    print()
    for command in args.commands:
        (p_cpu, p_wall), (b_cpu, b_wall), (e_cpu, e_wall) = (medians[command, v] for v in ("plugins", "bare", "eager"))
        print(
            f"allennlp {command}: plugins / bare = {p_cpu / b_cpu:.2f} CPU, {p_wall / b_wall:.2f} wall (target <= 1.1); "
            f"with / without the deferral = {p_cpu / e_cpu:.2f} CPU, {p_wall / e_wall:.2f} wall (target <= 0.5 CPU)"
        )
    (m_cpu, m_wall), (t_cpu, t_wall), (r_cpu, r_wall) = (medians[name] for name in ("modeling", "torch", "plugin"))
    print(
        f"import luke_allennlp.modeling: / import torch = {m_cpu / t_cpu:.2f} CPU, {m_wall / t_wall:.2f} wall "
        f"(target <= 1.1); / import luke_allennlp.plugin = {m_cpu / r_cpu:.2f} CPU, {m_wall / r_wall:.2f} wall"
    )


if __name__ == "__main__":
    main()
