"""
`allennlp tune CONFIG SPACE -s DIR --trials N [--storage URL] [--study-name NAME] [-o OVERRIDES] [--jobs J]`: a
hyperparameter search on Optuna. SPACE, a Jsonnet file beside the config, says which settings to search and how
(`luke_allennlp.experiments.search_space`); each trial trains CONFIG with its settings as `allennlp train`, reporting
the validation metric after every epoch so that the pruner can stop a poor trial early; the study lives in URL (default
`sqlite:///DIR/study.db`), where other `allennlp tune` processes, on this machine or others, can work on it at the same
time (`luke_allennlp.experiments.study`). At the end the best trial is written out as a runnable config
(`DIR/best_config.json`) and Optuna's plots are saved (`DIR/plots/`). Needs the `tune` extra (Optuna, matplotlib).
"""

import argparse
import os

from allennlp.commands.subcommand import Subcommand

from luke_allennlp.experiments import runs as child_runs


@Subcommand.register("tune")
class Tune(Subcommand):
    def add_subparser(self, parser: argparse._SubParsersAction) -> argparse.ArgumentParser:
        description = (
            "Search hyperparameters with Optuna: N trials of CONFIG with the settings of the search space SPACE "
            "(a Jsonnet file), pruned from their validation metric after each epoch; the best trial written as "
            "DIR/best_config.json, Optuna's plots in DIR/plots/. Several processes may share the study (--storage)."
        )
        subparser = parser.add_parser(self.name, description=description, help="Search hyperparameters with Optuna.")
        subparser.add_argument("config", help="the training config (as for allennlp train)")
        subparser.add_argument("space", help="the search space (a Jsonnet file: parameters, metric, direction, ...)")
        subparser.add_argument("-s", "--serialization-dir", required=True, help="the directory of the search")
        subparser.add_argument(
            "--trials", type=int, required=True, help="the number of trials of the study, all processes together"
        )
        subparser.add_argument(
            "--storage",
            help="the study's storage: a database URL Optuna takes (default: sqlite:///DIR/study.db); give other "
            "processes the same URL to share the search",
        )
        subparser.add_argument("--study-name", help="the study's name (default: CONFIG's and SPACE's names)")
        subparser.add_argument(
            "-o", "--overrides", default="", help="a JSON structure overriding the config, as for allennlp train"
        )
        subparser.add_argument(
            "--jobs",
            type=int,
            help="trials at once on the CPU (default: one per 4 cores); with GPUs one trial per GPU, at most this many",
        )
        subparser.set_defaults(func=_run)
        return subparser


def _run(args: argparse.Namespace) -> None:
    from luke_allennlp.experiments.storage import optuna_module

    optuna_module()  # (the extra, before anything is written)
    from luke_allennlp.experiments import study as studies
    from luke_allennlp.experiments.search_space import load_space
    from luke_allennlp.experiments.seeds import resolved_config

    if args.trials < 1:
        raise ValueError(f"--trials must be at least 1, not {args.trials}")
    directory = args.serialization_dir
    config = resolved_config(args.config, args.overrides)
    space = load_space(args.space, config)
    os.makedirs(directory, exist_ok=True)
    url = args.storage or studies.default_storage(directory)
    name = args.study_name or studies.default_study_name(args.config, args.space)
    search = studies.Search(directory, args.config, config, space, url, name, args.trials, args.include_package)
    slots = child_runs.devices(config, search.trials, args.jobs)
    print(
        f"Study {name} in {url}: {len(search.study.trials)} trials so far, up to {search.trials}; "
        f"{space.direction} best_validation_{space.metric}; {len(slots)} trial(s) at a time here "
        f"({slots[0].describe()} each)",
        flush=True,
    )
    search.run(slots)
    counts = ", ".join(f"{n} {state}" for state, n in sorted(studies.counts(search.study).items()))
    print(f"The study has {len(search.study.trials)} trials ({counts}); this process ran {len(search.ran)}")
    best = studies.write_best(search.study, space, config, directory)
    skipped = studies.save_plots(search.study, directory)
    for what in skipped:
        print(f"  plot not drawn: {what}")
    if best is None:
        raise studies.StudyError(f"no trial of {name} completed: no best config (the trials' logs: {directory}/logs)")
    settings = ", ".join(f"{path}={value}" for path, value in best["params"].items())
    print(
        f"Best: trial {best['number']}, {best['metric']} {best['value']:.4f} ({settings}).\nWritten: "
        f"{os.path.join(directory, 'best_config.json')} (train it: allennlp train "
        f"{os.path.join(directory, 'best_config.json')} -s DIR), best_trial.json, plots/"
    )
