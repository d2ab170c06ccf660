"""
`allennlp seeds CONFIG -s DIR --seeds N [-o OVERRIDES] [--jobs J] [-f]`: trains CONFIG with N seeds (or
`--seeds 13,42,7`), each run in `DIR/seed-S` (every seed of the config varied: `luke_allennlp.experiments.seeds`), as
`allennlp train` child processes, one per GPU or `--jobs` at once on the CPU (`luke_allennlp.experiments.runs`), each
logging to `DIR/logs/seed-S.log`; then writes `DIR/summary.json` and `DIR/summary.md`: the mean, sample standard
deviation, minimum, maximum and each run's value of every final metric, beside the paper's figure where the config
names one (`luke_allennlp.experiments.summary`). Run again, it keeps the finished seeds and resumes the others. DIR has
one `seeds` command at a time (`DIR/.lock`), each run's directory one `allennlp train`.

`allennlp seeds --summarize RUN_DIR... [-s OUT]`: the same summary over serialization directories trained elsewhere
(or a seeds DIR: its runs), printed, and written to OUT where given.
"""

import argparse
import os
import time
from typing import List, Optional

from allennlp.commands.subcommand import Subcommand

from luke_allennlp.experiments import runs as child_runs
from luke_allennlp.experiments import seeds as seeds_plan
from luke_allennlp.experiments.summary import SummaryError, markdown, read_run, summarize, write_summary
from luke_allennlp.resources.output import OutputLock, delegation, remove


@Subcommand.register("seeds")
class Seeds(Subcommand):
    def add_subparser(self, parser: argparse._SubParsersAction) -> argparse.ArgumentParser:
        description = (
            "Train a config with several seeds, each in its own serialization directory under -s, and summarise the "
            "spread of their final metrics (summary.json, summary.md). Run again to resume. With --summarize, "
            "summarise existing serialization directories instead."
        )
        subparser = parser.add_parser(
            self.name, description=description, help="Train a config with several seeds; mean and spread."
        )
        subparser.add_argument("config", nargs="?", help="the training config (as for allennlp train)")
        subparser.add_argument(
            "-s",
            "--serialization-dir",
            help="the directory of the runs (DIR/seed-S) and the summary; with --summarize, where to write the summary",
        )
        subparser.add_argument(
            "--seeds", help="how many seeds (N: the seeds 1 to N), or which (a comma-separated list: 13,42,7)"
        )
        subparser.add_argument(
            "-o", "--overrides", default="", help="a JSON structure overriding the config, as for allennlp train"
        )
        subparser.add_argument(
            "--jobs",
            type=int,
            help="runs at once on the CPU (default: one per 4 cores); with GPUs one run per GPU, at most this many",
        )
        subparser.add_argument(
            "-f", "--force", action="store_true", help="delete the runs in DIR and start every seed afresh"
        )
        subparser.add_argument(
            "--summarize",
            nargs="+",
            metavar="RUN_DIR",
            help="summarise these finished serialization directories (or seeds directories) instead of training",
        )
        subparser.set_defaults(func=_run)
        return subparser


def _run(args: argparse.Namespace) -> None:
    if args.summarize:
        if args.config:
            raise seeds_plan.SeedsError("give either CONFIG (to train) or --summarize RUN_DIR... (to summarise)")
        _summarize_only(args.summarize, args.serialization_dir)
        return
    if not args.config or not args.serialization_dir or not args.seeds:
        raise seeds_plan.SeedsError("allennlp seeds CONFIG -s DIR --seeds N: CONFIG, -s and --seeds are required")
    seeds = seeds_plan.parse_seeds(args.seeds)
    directory = args.serialization_dir
    os.makedirs(directory, exist_ok=True)
    lock = OutputLock(
        os.path.join(directory, ".lock"),
        directory,
        advice="one `allennlp seeds` per directory: wait for it to end (or stop it), or choose another -s",
    )
    with lock:
        if args.force:
            for name in os.listdir(directory):
                if name != ".lock":
                    remove(os.path.join(directory, name))
        config = seeds_plan.resolved_config(args.config, args.overrides)
        seeds_plan.check_plan(directory, args.config, config)
        _train_seeds(args, directory, config, seeds)


def _train_seeds(args: argparse.Namespace, directory: str, config: dict, seeds: List[int]) -> None:
    planned = seeds_plan.plan_runs(directory, seeds)
    pending = [run for run in planned if run.state != "finished"]
    slots = child_runs.devices(config, len(pending), args.jobs)
    print(
        f"{len(seeds)} seeds of {args.config} in {directory}: {seeds_plan.describe(planned)}"
        + (f"; {len(slots)} at a time ({slots[0].describe()} each)" if pending else "")
    )
    queue = list(pending)
    failures: List[str] = []

    def next_job() -> Optional[child_runs.Job]:
        if not queue:
            return None
        run = queue.pop(0)
        overrides = seeds_plan.merged_overrides(args.overrides, seeds_plan.seed_overrides(config, run.seed))
        command = child_runs.train_command(
            args.config,
            run.directory,
            overrides,
            recover=run.state == "recover",
            force=run.state == "restart",
            include_package=args.include_package,
        )
        name = seeds_plan.run_name(run.seed)
        log = os.path.join(directory, "logs", f"{name}.log")
        job = child_runs.Job(name, command, log, data=run, environment=delegation(directory))  # (DIR is ours)
        verb = {"recover": "resuming", "restart": "starting again", "new": "starting"}[run.state]
        print(f"  {name}: {verb} (log: {job.log})", flush=True)
        return job

    def finished(job: child_runs.Job, code: int) -> None:
        took = f"{time.time() - job.started:.0f} s"
        if code == 0:
            print(f"  {job.name}: finished in {took}", flush=True)
        else:
            failures.append(f"{job.name} ({job.last_line() or f'exit status {code}'})")
            print(f"  {job.name}: failed after {took} (exit status {code}; see {job.log})", flush=True)

    child_runs.run_jobs(slots, next_job, finished)
    done = [run for run in seeds_plan.plan_runs(directory, seeds) if run.state == "finished"]
    if done:
        summary = summarize(
            [read_run(run.directory, seeds_plan.run_name(run.seed), run.seed) for run in done], base=directory
        )
        write_summary(directory, summary, title=f"{len(done)} seeds of {args.config}")
        print(markdown(summary, title=f"{len(done)} seeds of {args.config}"))
        print(f"Written: {os.path.join(directory, 'summary.json')} and summary.md")
    if failures:
        raise seeds_plan.SeedsError(
            f"{len(failures)} of {len(seeds)} seeds failed: {'; '.join(failures)}. Run the same command again to "
            "resume them (the finished seeds are kept)"
        )


def _summarize_only(directories: List[str], output: Optional[str]) -> None:
    runs = []
    for directory in directories:
        plan = os.path.join(directory, seeds_plan.PLAN_FILE)
        if not os.path.exists(os.path.join(directory, "metrics.json")) and os.path.exists(plan):
            found = sorted(
                (int(name.split("-", 1)[1]), os.path.join(directory, name))
                for name in os.listdir(directory)
                if name.startswith("seed-") and name.split("-", 1)[1].lstrip("-").isdigit()
            )
            runs += [read_run(path, seed=seed) for seed, path in found if seeds_plan.state_of(path) == "finished"]
        else:
            runs.append(read_run(directory))
    names = [run.name for run in runs]
    if len(set(names)) != len(names):  # (runs of the same name from different places: named by their path)
        for run in runs:
            run.name = os.path.normpath(run.directory)
    if not runs:
        raise SummaryError(f"no finished runs in {', '.join(directories)}")
    summary = summarize(runs, base=output)
    print(markdown(summary, title=f"{len(runs)} runs"))
    if output:
        with OutputLock(os.path.join(output, "summary.lock"), output):
            write_summary(output, summary, title=f"{len(runs)} runs")
        print(f"Written: {os.path.join(output, 'summary.json')} and summary.md")
