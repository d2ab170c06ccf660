"""
The spread of several training runs' results: for every final metric of the runs' `metrics.json` (the
`best_validation_*` metrics of the best epoch and the `test_*` metrics of `evaluate_on_test`), the mean, the sample
standard deviation (n - 1 in the denominator; none for a single run), the minimum, the maximum, the number of runs
and each run's value, with the paper's figure beside it where the runs' config names one (its top-level `paper` key).

`summary.json`:

    {"metrics": {NAME: {"mean", "sd", "min", "max", "n", "values", "runs", ["paper"]}},
     "runs": [{"name", "dir", ["seed"]}], ["paper": {"source", "metrics"}]}

`values` and `runs` are in the same order (a metric that some run lacks counts only the runs that have it); a run's
`dir` is relative to the summary's folder when it lies inside it, else absolute (`os.path.join(summary folder, dir)`
finds it either way). `summary.md` is the same as a table for people.

A config names its published figures with a top-level key that training ignores (`luke_allennlp.cli.paper_figures`):

    paper: {source: 'Yamada et al. (2020), LUKE-large, CoNLL-2003 test set', metrics: {test_f1: 0.943}}

each figure under the name of the `metrics.json` metric it compares with and in that metric's unit (F1 as a
fraction: the paper's 94.3 is 0.943).
"""

import json
import math
import os
import statistics
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence

FINAL_METRICS = ("best_validation_", "test_")
PAPER_KEY = "paper"


class SummaryError(ValueError):
    """A run that cannot be summarised (unfinished, unreadable), or a malformed `paper` key."""

    user_error = True


@dataclass
class Run:
    """A finished training run: its serialization directory, name and seed (if known), final metrics."""

    directory: str
    name: str
    metrics: Dict[str, float]
    seed: Optional[int] = None
    paper: Optional[Dict[str, Any]] = None


def final_metrics(metrics: Dict[str, Any]) -> Dict[str, float]:
    """The `best_validation_*` and `test_*` numbers of a `metrics.json`."""
    return {
        name: float(value)
        for name, value in metrics.items()
        if name.startswith(FINAL_METRICS) and isinstance(value, (int, float)) and not isinstance(value, bool)
    }


def paper_figures(config: Dict[str, Any], where: str) -> Optional[Dict[str, Any]]:
    """The config's `paper` key checked (`{"source": str, "metrics": {NAME: number}}`), or None without one."""
    paper = config.get(PAPER_KEY)
    if paper is None:
        return None
    if not isinstance(paper, dict) or not isinstance(paper.get("metrics"), dict) or not paper["metrics"]:
        raise SummaryError(f"{where}: {PAPER_KEY} must be an object with a non-empty 'metrics' object (NAME: figure)")
    unknown = sorted(set(paper) - {"source", "metrics"})
    if unknown:
        raise SummaryError(f"{where}: {PAPER_KEY}.{unknown[0]}: not a key of {PAPER_KEY} (its keys: source, metrics)")
    for name, value in paper["metrics"].items():
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            raise SummaryError(f"{where}: {PAPER_KEY}.metrics.{name}: expected a number, not {json.dumps(value)}")
        if not name.startswith(FINAL_METRICS):
            raise SummaryError(
                f"{where}: {PAPER_KEY}.metrics.{name}: name a final metric of metrics.json (best_validation_* or test_*)"
            )
    if not isinstance(paper.get("source", ""), str):
        raise SummaryError(f"{where}: {PAPER_KEY}.source: expected a string")
    return {"source": paper.get("source", ""), "metrics": dict(paper["metrics"])}


def read_run(directory: str, name: Optional[str] = None, seed: Optional[int] = None) -> Run:
    """A finished run's serialization directory: its `metrics.json` (required) and its config's `paper` key."""
    path = os.path.join(directory, "metrics.json")
    if not os.path.isfile(path):
        raise SummaryError(f"{directory}: no metrics.json: not a finished training run (allennlp train writes it last)")
    try:
        with open(path, encoding="utf-8") as f:
            metrics = json.load(f)
    except (OSError, ValueError) as error:
        raise SummaryError(f"{path}: not readable as JSON ({error})") from None
    config_path = os.path.join(directory, "config.json")
    paper = None
    if os.path.isfile(config_path):
        with open(config_path, encoding="utf-8") as f:
            paper = paper_figures(json.load(f), config_path)
    return Run(directory, name or os.path.basename(os.path.normpath(directory)), final_metrics(metrics), seed, paper)


def _statistics(values: List[float]) -> Dict[str, Any]:
    return {
        "mean": statistics.fmean(values),
        "sd": statistics.stdev(values) if len(values) > 1 else None,
        "min": min(values),
        "max": max(values),
        "n": len(values),
        "values": values,
    }


def _relative(directory: str, base: Optional[str]) -> str:
    directory = os.path.abspath(directory)
    if base is not None:
        relative = os.path.relpath(directory, os.path.abspath(base))
        if not relative.startswith(os.pardir):
            return relative
    return directory


def summarize(runs: Sequence[Run], base: Optional[str] = None) -> Dict[str, Any]:
    """The summary of `runs` (see the module's doc); run directories relative to `base` where inside it. The paper's
    figures are those the runs' configs name, if they agree."""
    if not runs:
        raise SummaryError("no runs to summarise")
    names = sorted({name for run in runs for name in run.metrics})
    papers = {json.dumps(run.paper, sort_keys=True) for run in runs}
    paper = runs[0].paper if len(papers) == 1 else None
    metrics: Dict[str, Any] = {}
    for name in names:
        having = [run for run in runs if name in run.metrics]
        metrics[name] = {**_statistics([run.metrics[name] for run in having]), "runs": [run.name for run in having]}
        if paper and name in paper["metrics"]:
            metrics[name]["paper"] = paper["metrics"][name]
    summary: Dict[str, Any] = {
        "metrics": metrics,
        "runs": [
            {
                "name": run.name,
                "dir": _relative(run.directory, base),
                **({"seed": run.seed} if run.seed is not None else {}),
            }
            for run in runs
        ],
    }
    if paper:
        summary["paper"] = paper
    return summary


def _number(value: Optional[float]) -> str:
    if value is None:
        return "–"
    return f"{value:.4f}" if math.isfinite(value) and abs(value) < 1e5 else f"{value:.4g}"


def markdown(summary: Dict[str, Any], title: str = "Runs") -> str:
    """`summary` as Markdown: one row per metric (mean ± sd, min, max, n, the paper's figure, each run's value)."""
    runs = [run["name"] for run in summary["runs"]]
    lines = [
        f"# {title}",
        "",
        f"{len(runs)} runs: " + ", ".join(f"`{run['dir']}`" for run in summary["runs"]) + ".",
        "Mean ± sample standard deviation (n - 1) of each run's final metric (metrics.json: `best_validation_*` at "
        "the best epoch, `test_*` with evaluate_on_test).",
        "",
        "| metric | mean ± sd | min | max | n | paper | " + " | ".join(runs) + " |",
        "|---|---:|---:|---:|---:|---:|" + "---:|" * len(runs),
    ]
    for name, row in summary["metrics"].items():
        by_run = dict(zip(row["runs"], row["values"]))
        cells = [_number(by_run.get(run)) for run in runs]
        spread = _number(row["mean"]) + (f" ± {_number(row['sd'])}" if row["sd"] is not None else "")
        lines.append(
            f"| {name} | {spread} | {_number(row['min'])} | {_number(row['max'])} | {row['n']} | "
            f"{_number(row.get('paper'))} | " + " | ".join(cells) + " |"
        )
    paper = summary.get("paper")
    if paper:
        lines += ["", f"Paper: {paper['source'] or 'the config names no source'}."]
        unmeasured = {k: v for k, v in paper["metrics"].items() if k not in summary["metrics"]}
        if unmeasured:
            figures = ", ".join(f"`{k}` {_number(v)}" for k, v in unmeasured.items())
            lines.append(
                f"Not measured by these runs: {figures} (a `test_*` figure needs `test_data_path` and "
                '`"evaluate_on_test": true`; a hidden test set, the benchmark\'s own server).'
            )
    return "\n".join(lines) + "\n"


def write_summary(directory: str, summary: Dict[str, Any], title: str = "Runs") -> None:
    """`summary.json` and `summary.md` into `directory`, each written whole (a temporary renamed into place)."""
    from luke_allennlp.resources.output import replaced_output

    os.makedirs(directory, exist_ok=True)
    with replaced_output(os.path.join(directory, "summary.json")) as temporary:
        with open(temporary, "w", encoding="utf-8") as f:
            json.dump(summary, f, indent=2)
            f.write("\n")
    with replaced_output(os.path.join(directory, "summary.md")) as temporary:
        with open(temporary, "w", encoding="utf-8") as f:
            f.write(markdown(summary, title))
