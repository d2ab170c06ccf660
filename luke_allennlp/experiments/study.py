"""
A hyperparameter search as an ordinary Optuna study (`optuna.load_study` reads it): trials that each train the config
with the search space's settings (`allennlp train` in a process of its own, with the `luke_optuna_pruning` callback),
several processes, on one machine or several, working on one study through its storage (a SQLite file by default,
any database URL Optuna takes).

In the search directory DIR:

- `study.db`: the study (the default storage, `sqlite:///DIR/study.db`);
- `trials/trial-N/`: the serialization directory of each completed trial; `trials/trial-N.running/` while it trains
  (a pruned or failed trial's is removed: no half-written run is left where a finished one is looked for, and trial
  numbers, given out by the storage, are never reused);
- `logs/trial-N.log`, `logs/trial-N.config.json`: each trial's console and config;
- `best_config.json`: the best trial's config, runnable as it is (`allennlp train DIR/best_config.json -s ...`),
  `best_trial.json`: its number, value and settings;
- `plots/`: Optuna's optimization history, parameter importances and the trials' validation metric per epoch (PNG,
  Optuna's matplotlib plots).

`--trials N` is the number of trials of the study, all processes together: a process starts trials while the study
has fewer (every state counted: a failed trial is one of them). Processes that share a SQLite file take turns to
count and create a trial (a lock beside the file), so together they run exactly N; with a database server two
processes may each start one at the same moment past N. A process's running trials send a heartbeat: those of a
process that was killed are failed by the next process to start a trial (after five minutes), and their
`.running` directories removed.
"""

import contextlib
import json
import os
import time
import warnings
from typing import Any, Dict, Iterator, List, Optional

from luke_allennlp.experiments import runs as child_runs
from luke_allennlp.experiments.optuna_pruning import PRUNED_AFTER_EPOCH
from luke_allennlp.experiments.search_space import SearchSpace, trial_config
from luke_allennlp.experiments.storage import HEARTBEAT_SECONDS, open_study, quiet_optuna, sqlite_turn
from luke_allennlp.resources.output import OutputInUseError, OutputLock, remove, replaced_output

MAX_FAILED_IN_A_ROW = 3
SEARCH_ATTR = "luke_search"  # the study's user attribute: the search space every process must share


class StudyError(ValueError):
    """A study that does not fit the command (another search space), or one with nothing to show."""

    user_error = True


def default_storage(directory: str) -> str:
    return f"sqlite:///{os.path.abspath(os.path.join(directory, 'study.db'))}"


def default_study_name(config_file: str, space_file: str) -> str:
    stem = lambda path: os.path.splitext(os.path.basename(path))[0]  # noqa: E731
    return f"{stem(config_file)}:{stem(space_file)}"


def record_search(study: Any, space: SearchSpace, config_file: str) -> None:
    """Records the search space in the study, or refuses one that differs from the space the study was made with."""
    mine = {"space_file": space.file, "config_file": config_file, **space.as_dict()}
    theirs = study.user_attrs.get(SEARCH_ATTR)
    if theirs is None:
        study.set_user_attr(SEARCH_ATTR, mine)
        return
    keys = ("parameters", "metric", "direction", "sampler", "pruner")
    differing = [key for key in keys if theirs.get(key) != mine[key]]
    if differing:
        raise StudyError(
            f"the study {study.study_name} searches another space ({theirs.get('space_file')}: its "
            f"{', '.join(differing)} differ from {space.file}'s): use the same search space, or another study "
            "(--study-name, or another -s)"
        )


def trial_dir(directory: str, number: int, running: bool = False) -> str:
    return os.path.join(directory, "trials", f"trial-{number}" + (".running" if running else ""))


def clean_stale(study: Any, directory: str) -> None:
    """Fails the trials of processes that stopped sending heartbeats, and removes the `.running` directories of
    trials that no longer run."""
    optuna = quiet_optuna()
    optuna.storages.fail_stale_trials(study)
    trials_dir = os.path.join(directory, "trials")
    if not os.path.isdir(trials_dir):
        return
    states = {trial.number: trial.state for trial in study.get_trials(deepcopy=False)}
    for name in os.listdir(trials_dir):
        if name.startswith("trial-") and name.endswith(".running"):
            number = name[len("trial-") : -len(".running")]
            if number.isdigit() and states.get(int(number)) != optuna.trial.TrialState.RUNNING:
                remove(os.path.join(trials_dir, name))


class Search:
    """
    The trials of one `allennlp tune` process: each claims a trial of the study while it has fewer than `trials`,
    trains it as `allennlp train` on a free device, and tells the study how it ended.
    """

    def __init__(
        self,
        directory: str,
        config_file: str,
        config: Dict[str, Any],
        space: SearchSpace,
        url: str,
        study_name: str,
        trials: int,
        include_package: List[str] = (),
        out: Any = print,
    ) -> None:
        self.optuna = quiet_optuna()
        self.directory, self.config_file, self.config, self.space = directory, config_file, config, space
        self.url, self.trials, self.include_package, self.out = url, trials, list(include_package), out
        grid = space.grid_size()
        if grid is not None and trials > grid:
            out(f"The grid has {grid} points: {grid} trials, not {trials}")
            self.trials = grid
        self.study = open_study(url, study_name, space.make_pruner(), space.sampler_for(None), space.direction)
        record_search(self.study, space, config_file)
        self.ran: List[int] = []  # the trials this process ran
        self.failed_in_a_row: List[str] = []  # the errors of this process's last trials, while each failed
        self._beats: Dict[int, float] = {}

    def run(self, slots: List[child_runs.Device]) -> None:
        active: Dict[int, child_runs.Job] = {}
        try:
            child_runs.run_jobs(
                slots, lambda: self._next(active), lambda job, code: self._finished(job, code, active), self._tick
            )
        except BaseException:
            for job in list(active.values()):
                self._end(job, active, self.optuna.trial.TrialState.FAIL, error="interrupted")
            raise
        if len(self.failed_in_a_row) >= MAX_FAILED_IN_A_ROW:
            raise StudyError(
                f"{len(self.failed_in_a_row)} trials in a row failed, so this process stopped starting trials (the "
                f"last: {self.failed_in_a_row[-1]}): see the trials' logs in {self.directory}/logs"
            )

    def _next(self, active: Dict[int, child_runs.Job]) -> Optional[child_runs.Job]:
        if len(self.failed_in_a_row) >= MAX_FAILED_IN_A_ROW:  # (a config that cannot train: stop, rather than fail N)
            return None
        with sqlite_turn(self.url, "trials"):
            clean_stale(self.study, self.directory)
            if len(self.study.get_trials(deepcopy=False)) >= self.trials:
                return None
            trial = self.study.ask()
        self.study._storage.record_heartbeat(trial._trial_id)  # (from now on a killed process's trial goes stale)
        try:
            return self._start(trial, active)
        except BaseException as error:  # (the trial never ran: failed, so that it neither counts as running nor waits)
            trial.set_user_attr("error", f"not started: {error}")
            self.study.tell(trial, state=self.optuna.trial.TrialState.FAIL)
            raise

    def _start(self, trial: Any, active: Dict[int, child_runs.Job]) -> child_runs.Job:
        """The trial's settings drawn, its config written, its `allennlp train` job."""
        self.study.sampler = self.space.sampler_for(trial.number)  # (its own seed: see search_space)
        values = self.space.suggest(trial)
        trial.set_user_attr("worker", f"{os.uname().nodename}:{os.getpid()}")
        callback = {
            "type": "luke_optuna_pruning",
            "storage": self.url,
            "study_name": self.study.study_name,
            "trial_number": trial.number,
            "metric": self.space.metric,
            "pruner": self.space.pruner,
        }
        name = f"trial-{trial.number}"
        config_file = os.path.join(self.directory, "logs", f"{name}.config.json")
        os.makedirs(os.path.dirname(config_file), exist_ok=True)
        with replaced_output(config_file) as temporary:
            with open(temporary, "w", encoding="utf-8") as f:
                json.dump(trial_config(self.config, values, [callback]), f, indent=2)
        running = trial_dir(self.directory, trial.number, running=True)
        command = child_runs.train_command(config_file, running, include_package=self.include_package)
        job = child_runs.Job(name, command, os.path.join(self.directory, "logs", f"{name}.log"), data=trial)
        active[trial.number] = job
        self._beats[trial.number] = time.time()
        settings = ", ".join(f"{path}={_short(value)}" for path, value in values.items())
        self.out(f"  trial {trial.number}: {settings} (log: {job.log})")
        return job

    def _tick(self, running: List[child_runs.Job]) -> None:
        now = time.time()
        for job in running:
            trial = job.data
            if now - self._beats.get(trial.number, 0.0) >= HEARTBEAT_SECONDS / 2:
                self.study._storage.record_heartbeat(trial._trial_id)
                self._beats[trial.number] = now

    def _finished(self, job: child_runs.Job, code: int, active: Dict[int, child_runs.Job]) -> None:
        states = self.optuna.trial.TrialState
        trial = job.data
        took = f"{time.time() - job.started:.0f} s"
        running = trial_dir(self.directory, trial.number, running=True)
        key = f"best_validation_{self.space.metric}"
        if code == 0:
            metrics_file = os.path.join(running, "metrics.json")
            with open(metrics_file, encoding="utf-8") as f:
                value = json.load(f).get(key)
            if not isinstance(value, (int, float)):
                self._end(job, active, states.FAIL, error=f"{metrics_file} has no {key}")
                self.out(f"  trial {trial.number}: failed: {metrics_file} has no {key} ({took})")
                return
            os.replace(running, trial_dir(self.directory, trial.number))
            self._end(job, active, states.COMPLETE, value=float(value))
            self.out(f"  trial {trial.number}: complete, {key} {value:.4f} ({took})")
            return
        attrs = self.study._storage.get_trial(trial._trial_id).user_attrs
        if PRUNED_AFTER_EPOCH in attrs:
            self._end(job, active, states.PRUNED)
            self.out(f"  trial {trial.number}: pruned after epoch {attrs[PRUNED_AFTER_EPOCH]} ({took})")
            return
        error = job.last_line() or f"exit status {code}"
        self._end(job, active, states.FAIL, error=error)
        self.out(f"  trial {trial.number}: failed ({took}): {error} (see {job.log})")

    def _end(
        self,
        job: child_runs.Job,
        active: Dict[int, child_runs.Job],
        state: Any,
        value: Optional[float] = None,
        error: Optional[str] = None,
    ) -> None:
        trial = job.data
        active.pop(trial.number, None)
        remove(trial_dir(self.directory, trial.number, running=True))  # (a completed one was renamed already)
        if error:
            trial.set_user_attr("error", error)
        if state == self.optuna.trial.TrialState.FAIL:
            self.failed_in_a_row.append(error or "")
        else:
            self.failed_in_a_row = []
        try:
            self.study.tell(trial, value if state == self.optuna.trial.TrialState.COMPLETE else None, state=state)
        except RuntimeError as stopped:  # the grid sampler asks to stop a finished grid, which only optimize() can
            if "Study.stop" not in str(stopped):
                raise
        self.ran.append(trial.number)


@contextlib.contextmanager
def _waiting(lock: OutputLock, seconds: float = 600.0) -> Iterator[None]:
    """`lock`, waiting while another process of the search holds it (each writes the study's outputs at its end)."""
    deadline = time.time() + seconds
    while True:
        try:
            lock.acquire()
            break
        except OutputInUseError:
            if time.time() > deadline:
                raise
            time.sleep(0.5)
    try:
        yield
    finally:
        lock.release()


def _short(value: Any) -> str:
    return f"{value:.4g}" if isinstance(value, float) else json.dumps(value)


def counts(study: Any) -> Dict[str, int]:
    found: Dict[str, int] = {}
    for trial in study.get_trials(deepcopy=False):
        found[trial.state.name.lower()] = found.get(trial.state.name.lower(), 0) + 1
    return found


def write_best(study: Any, space: SearchSpace, config: Dict[str, Any], directory: str) -> Optional[Dict[str, Any]]:
    """`best_config.json` (the config with the best trial's settings, without the pruning callback) and
    `best_trial.json` into `directory`; None where no trial completed."""
    states = quiet_optuna().trial.TrialState
    if not study.get_trials(deepcopy=False, states=(states.COMPLETE,)):
        return None
    best = study.best_trial
    values = {path: best.params[path] for path in space.parameters}
    record = {
        "number": best.number,
        "value": best.value,
        "metric": f"best_validation_{space.metric}",
        "direction": space.direction,
        "params": values,
        "trial_dir": os.path.relpath(trial_dir(directory, best.number), directory),
        "study": study.study_name,
    }
    outputs = {"best_config.json": trial_config(config, values), "best_trial.json": record}
    with _waiting(OutputLock(os.path.join(directory, "best.lock"), os.path.join(directory, "best_config.json"))):
        for name, content in outputs.items():
            with replaced_output(os.path.join(directory, name)) as temporary:
                with open(temporary, "w", encoding="utf-8") as f:
                    json.dump(content, f, indent=2)
                    f.write("\n")
    return record


def save_plots(study: Any, directory: str) -> List[str]:
    """Optuna's matplotlib plots of the study into `directory/plots/` (PNG); returns what could not be drawn."""
    optuna = quiet_optuna()
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return ["every plot: matplotlib is not installed (`pip install 'luke_allennlp[tune]'`)"]
    plots = {
        "optimization_history.png": optuna.visualization.matplotlib.plot_optimization_history,
        "param_importances.png": optuna.visualization.matplotlib.plot_param_importances,
        "intermediate_values.png": optuna.visualization.matplotlib.plot_intermediate_values,
    }
    if not study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.COMPLETE,)):
        return ["every plot: no trial completed"]
    skipped = []
    os.makedirs(os.path.join(directory, "plots"), exist_ok=True)
    with _waiting(OutputLock(os.path.join(directory, "plots.lock"), os.path.join(directory, "plots"))):
        for name, plot in plots.items():
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    axes = plot(study)
            except (RuntimeError, ValueError, ZeroDivisionError) as error:
                skipped.append(f"{name}: {error}")
                continue
            figure = getattr(axes, "figure", None) or axes.flat[0].figure
            figure.set_size_inches(8, 5)
            figure.tight_layout()
            with replaced_output(os.path.join(directory, "plots", name)) as temporary:
                figure.savefig(temporary, dpi=100)
            plt.close(figure)
    return skipped
