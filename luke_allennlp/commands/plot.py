"""
`allennlp plot DIR... --out FILE.png|FILE.html`: training runs and seeds summaries drawn with matplotlib, into a PNG or
a self-contained HTML page (no server: the image is embedded, and so is every value drawn, as JSON).

Each `DIR` is one of:

- a serialization directory of `allennlp train`. Per epoch, from its `metrics_epoch_N.json` (every run writes them):
  the training and validation loss and each validation metric. Per step, where the run had the `tensorboard`
  callback, from its event files (`log/train`, read with TensorBoard's own reader, which keeps one point per step
  after a `--recover`): the loss every step, each parameter group's learning rate, the model's training metrics on
  report steps;
- a directory of `allennlp seeds` (its `summary.json`; the file itself may be given): per metric, each run's value
  with the mean and the sample standard deviation; the runs it lists are drawn too (those that exist).

The HTML page's data (`<script type="application/json" id="plot-data">`): `{"runs": [{"name", "path", "steps":
{TAG: [[step, value], ...]}, "epochs": {METRIC: [[epoch, value], ...]}}], "summaries": [{"name", "path", "metrics":
{NAME: {"mean", "sd", "min", "max", "n", "values"}}, "runs": [...]}]}`.
"""

import argparse
import base64
import glob
import html
import io
import json
import logging
import math
import os
import re
from dataclasses import asdict, dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

from allennlp.commands.subcommand import Subcommand

from luke_allennlp.commands.common import exit_on_bad_input
from luke_allennlp.resources.extras import require
from luke_allennlp.resources.output import writing_output

logger = logging.getLogger(__name__)

SUMMARY = "summary.json"
Points = List[Tuple[float, float]]
EPOCH_METRIC = re.compile(r"^(training|validation)_")
NOT_DRAWN = ("_memory_MB", "duration", "per_second", "padding_fraction")  # in the data, not in the figure
COLUMNS = 3
STYLES = ("-", "--", ":", "-.")


@Subcommand.register("plot")
class Plot(Subcommand):
    def add_subparser(self, parser: argparse._SubParsersAction) -> argparse.ArgumentParser:
        description = (
            "Draw training runs (loss and metrics per step and per epoch, learning rates) and seeds summaries "
            "(each metric's spread) into a PNG or a self-contained HTML page."
        )
        subparser = parser.add_parser(self.name, description=description, help="Plot training runs.")
        subparser.add_argument(
            "directories",
            nargs="+",
            metavar="DIR",
            help="serialization directories of allennlp train, directories (or summary.json files) of allennlp seeds",
        )
        subparser.add_argument(
            "--out",
            action="append",
            required=True,
            metavar="FILE",
            help="FILE.png (an image) or FILE.html (the image and the data in one page); may be given twice",
        )
        subparser.add_argument("--title", help="the figure's title (default: the runs' names)")
        subparser.set_defaults(func=exit_on_bad_input(self.name, _run))
        return subparser


@dataclass
class Run:
    name: str
    path: str
    steps: Dict[str, Points] = field(default_factory=dict)  # TensorBoard tag -> (step, value)
    epochs: Dict[str, Points] = field(default_factory=dict)  # `training_loss`, `validation_f1`, ... -> (epoch, value)


@dataclass
class Summary:
    name: str
    path: str
    metrics: Dict[str, Dict[str, Any]]
    runs: List[str]


def _run(args: argparse.Namespace) -> None:
    for out in args.out:
        if os.path.splitext(out)[1].lower() not in (".png", ".html"):
            raise ValueError(f"--out {out}: give a .png or .html file")
    runs, summaries = read(args.directories)
    for out in args.out:
        write_plot(out, runs, summaries, args.title)
        print(f"wrote {out}: {len(runs)} runs, {len(summaries)} seeds summaries")


# --- reading -------------------------------------------------------------------------------------------------


def read(directories: Sequence[str]) -> Tuple[List[Run], List[Summary]]:
    """The runs and summaries of the directories given (a summary's runs after it, each run once)."""
    summaries: List[Summary] = []
    run_dirs: List[str] = []
    for given in directories:
        summary_file = given if os.path.isfile(given) else os.path.join(given, SUMMARY)
        if os.path.basename(given) == SUMMARY or os.path.isfile(summary_file):
            summary = read_summary(summary_file)
            summaries.append(summary)
            for run in summary.runs:
                if os.path.isdir(run):
                    run_dirs.append(run)
                else:
                    logger.warning("%s lists the run %s, which is not there: not drawn", summary_file, run)
        else:
            run_dirs.append(given)
    unique = list(dict.fromkeys(os.path.realpath(d) for d in run_dirs))
    names = _names(unique)
    return [read_run(path, name) for path, name in zip(unique, names)], summaries


def _names(paths: List[str]) -> List[str]:
    """Each directory's name, or its path from the first folder the paths do not share where names repeat."""
    names = [os.path.basename(p) for p in paths]
    if len(set(names)) == len(names):
        return names
    common = os.path.commonpath(paths) if len(paths) > 1 else os.path.dirname(paths[0])
    return [os.path.relpath(p, common) for p in paths]


def read_run(directory: str, name: Optional[str] = None) -> Run:
    if not os.path.isdir(directory):
        raise FileNotFoundError(f"{directory}: no such directory")
    run = Run(name or os.path.basename(os.path.realpath(directory)), directory)
    epoch_files = glob.glob(os.path.join(directory, "metrics_epoch_*.json"))
    for path in sorted(epoch_files, key=lambda p: int(re.findall(r"(\d+)\.json$", p)[0])):
        epoch = int(re.findall(r"(\d+)\.json$", path)[0])
        for key, value in _json(path).items():
            if EPOCH_METRIC.match(key) and _is_number(value):
                run.epochs.setdefault(key, []).append((epoch, float(value)))
    for part in ("train", "validation"):
        run.steps.update(read_events(os.path.join(directory, "log", part)))
    if not epoch_files and not run.steps:
        raise ValueError(
            f"{directory}: neither a training run (metrics_epoch_*.json, log/train) nor a seeds summary ({SUMMARY})"
        )
    return run


def read_events(directory: str) -> Dict[str, Points]:
    """The scalars of the TensorBoard event files in `directory` ({} without any), by TensorBoard's reader."""
    if not glob.glob(os.path.join(directory, "events.out.tfevents.*")):
        return {}
    reader = require(
        "tensorboard.backend.event_processing.event_accumulator", "plot", "reading TensorBoard logs (allennlp plot)"
    )
    events = reader.EventAccumulator(directory, size_guidance={reader.SCALARS: 0})  # 0: every point
    quiet = logging.getLogger("tensorboard")  # (its reader logs each file it reaches the end of)
    level = quiet.level
    quiet.setLevel(logging.WARNING)
    try:
        events.Reload()
    finally:
        quiet.setLevel(level)
    return {tag: [(e.step, e.value) for e in events.Scalars(tag)] for tag in events.Tags()["scalars"]}


def read_summary(path: str) -> Summary:
    summary = _json(path)
    metrics = summary.get("metrics") if isinstance(summary, dict) else None
    if not isinstance(metrics, dict):
        raise ValueError(f'{path}: expected {{"metrics": {{NAME: {{"mean", "sd", ...}}}}, "runs": [...]}}')
    for name, values in metrics.items():
        if not isinstance(values, dict) or not all(k in values for k in ("mean", "sd", "values")):
            raise ValueError(f'{path}: metric {name} needs "mean", "sd" and "values"')
    base = os.path.dirname(os.path.abspath(path))
    # A run (`allennlp seeds`' {"name", "dir", "seed"}, or a bare path): its directory absolute, or relative to the
    # summary's directory (else to the working directory).
    runs = [str(r.get("dir", "")) if isinstance(r, dict) else str(r) for r in summary.get("runs", [])]
    runs = [r if os.path.isabs(r) or not os.path.isdir(os.path.join(base, r)) else os.path.join(base, r) for r in runs]
    return Summary(os.path.basename(base), path, metrics, runs)


def _json(path: str) -> Any:
    with open(path, encoding="utf-8") as f:
        try:
            return json.load(f)
        except json.JSONDecodeError as e:
            raise ValueError(f"{path}:{e.lineno}: not JSON ({e.msg})") from None


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


# --- drawing -------------------------------------------------------------------------------------------------


def panels(runs: List[Run], summaries: List[Summary]) -> List[Tuple[str, str, Any]]:
    """What the figure shows, in order: (title, x label, what to draw)."""
    shown: List[Tuple[str, str, Any]] = []
    tags = sorted({tag for run in runs for tag in run.steps})
    if "train/batch_loss" in tags:
        shown.append(("loss per step", "step", ["train/batch_loss"]))
    rates = [tag for tag in tags if tag.startswith("learning_rate/")]
    if rates:
        shown.append(("learning rate per step", "step", rates))
    for tag in tags:
        if tag.startswith("train/batch_") and tag != "train/batch_loss":
            shown.append((f"{tag[len('train/batch_') :]} per step (training, epoch so far)", "step", [tag]))
    metrics = sorted({key for run in runs for key in run.epochs if not any(s in key for s in NOT_DRAWN)})
    if {"training_loss", "validation_loss"} & set(metrics):
        shown.append(("loss per epoch", "epoch", ["training_loss", "validation_loss"]))
    for key in metrics:
        if key.startswith("validation_") and key != "validation_loss":
            shown.append((f"{key[len('validation_') :]} per epoch (validation)", "epoch", [key]))
    for name in sorted({name for summary in summaries for name in summary.metrics}):
        shown.append((f"{name} over seeds", "", name))
    return shown


def draw(runs: List[Run], summaries: List[Summary], title: Optional[str] = None) -> bytes:
    """The figure as PNG bytes."""
    require("matplotlib", "plot", "allennlp plot")
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    shown = panels(runs, summaries)
    if not shown:
        raise ValueError("nothing to draw: the runs have no metrics yet")
    rows = math.ceil(len(shown) / COLUMNS)
    columns = min(COLUMNS, len(shown))
    figure = Figure(figsize=(5.2 * columns, 3.6 * rows + 0.6), layout="constrained")
    FigureCanvasAgg(figure)
    colors = {run.name: f"C{i % 10}" for i, run in enumerate(runs)}
    for index, (label, x_label, what) in enumerate(shown):
        axes = figure.add_subplot(rows, columns, index + 1)
        axes.set_title(label, fontsize=10)
        axes.set_xlabel(x_label)
        if isinstance(what, str):
            _draw_spread(axes, summaries, what)
            continue
        for run in runs:
            for key in what:
                points = run.steps.get(key) if x_label == "step" else run.epochs.get(key)
                if not points:
                    continue
                xs, ys = zip(*points)
                axes.plot(
                    xs,
                    ys,
                    STYLES[what.index(key) % len(STYLES)],  # a run's curves in its color: training, validation, groups
                    color=colors[run.name],
                    marker="o" if x_label == "epoch" else None,
                    markersize=3,
                    linewidth=1,
                    label=f"{run.name}{_series_suffix(key, what)}",
                )
        if axes.lines and len(axes.lines) <= 12:
            axes.legend(fontsize=7)
        axes.xaxis.set_major_locator(MaxNLocator(integer=True))
        axes.grid(alpha=0.3)
    figure.suptitle(title or ", ".join([run.name for run in runs] + [s.name for s in summaries])[:120])
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=100)
    return buffer.getvalue()


def _series_suffix(key: str, keys: List[str]) -> str:
    if len(keys) == 1:
        return ""
    if key.startswith("learning_rate/"):
        return f" {key.split('/', 1)[1]}"
    return f" ({key.split('_', 1)[0]})"


def _draw_spread(axes: Any, summaries: List[Summary], name: str) -> None:
    """Each summary's runs as dots, with the mean and mean ± sd."""
    for x, summary in enumerate(summaries):
        metric = summary.metrics.get(name)
        if metric is None:
            continue
        values = [v for v in metric["values"] if _is_number(v)]
        axes.scatter([x] * len(values), values, s=14, alpha=0.7, color=f"C{x % 10}")
        mean, sd = metric["mean"], metric["sd"] or 0.0
        axes.errorbar([x + 0.15], [mean], yerr=[sd], fmt="s", color="black", capsize=4, markersize=4)
        axes.annotate(f"{mean:.4g} ± {sd:.2g} (n={metric.get('n', len(values))})", (x + 0.2, mean), fontsize=7)
    axes.set_xticks(range(len(summaries)), [s.name for s in summaries], fontsize=8)
    axes.set_xlim(-0.5, len(summaries) - 0.2)


# --- writing -------------------------------------------------------------------------------------------------


def plot_data(runs: List[Run], summaries: List[Summary]) -> Dict[str, Any]:
    """What is drawn, as plain JSON values (NaN and infinities as null)."""

    def clean(value: Any) -> Any:
        if isinstance(value, float) and not math.isfinite(value):
            return None
        if isinstance(value, dict):
            return {k: clean(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [clean(v) for v in value]
        return value

    return clean({"runs": [asdict(run) for run in runs], "summaries": [asdict(s) for s in summaries]})


def write_plot(out: str, runs: List[Run], summaries: List[Summary], title: Optional[str] = None) -> None:
    image = draw(runs, summaries, title)
    with writing_output(out) as temporary:
        if out.lower().endswith(".png"):
            with open(temporary, "wb") as f:
                f.write(image)
        else:
            with open(temporary, "w", encoding="utf-8") as f:
                f.write(page(image, plot_data(runs, summaries), title))


def page(image: bytes, data: Dict[str, Any], title: Optional[str]) -> str:
    """A self-contained HTML page: the image, a table of the summaries, the data as JSON."""
    heading = html.escape(title or "Training runs")
    rows = "".join(
        f"<tr><td>{html.escape(s['name'])}</td><td>{html.escape(name)}</td><td>{m['mean']:.4g}</td>"
        f"<td>{(m['sd'] or 0):.3g}</td><td>{m.get('n', len(m['values']))}</td></tr>"
        for s in data["summaries"]
        for name, m in sorted(s["metrics"].items())
        if m["mean"] is not None
    )
    table = (
        f"<h2>Seeds</h2><table><tr><th>summary</th><th>metric</th><th>mean</th><th>sd</th><th>n</th></tr>{rows}</table>"
        if rows
        else ""
    )
    runs = ", ".join(html.escape(f"{run['name']} ({run['path']})") for run in data["runs"])
    encoded = base64.b64encode(image).decode("ascii")
    payload = json.dumps(data).replace("</", "<\\/")  # (a `</script>` in a value cannot end the script)
    return (
        f'<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>{heading}</title>'
        "<style>body{font-family:sans-serif;margin:2em}img{max-width:100%}td,th{padding:2px 10px;text-align:left}"
        "</style></head>\n"
        f"<body><h1>{heading}</h1><p>Runs: {runs or 'none'}</p>\n"
        f'<img alt="{heading}" src="data:image/png;base64,{encoded}">\n{table}\n'
        f'<script type="application/json" id="plot-data">{payload}</script>\n</body></html>\n'
    )
