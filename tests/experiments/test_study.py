"""luke_allennlp/experiments/study.py, storage.py and optuna_pruning.py without training: trials whose command
fails, the pruning callback against a real SQLite study, stale trials, a study of another search space."""

import sys

import optuna
import pytest

from luke_allennlp.experiments import runs
from luke_allennlp.experiments import study as studies
from luke_allennlp.experiments.optuna_pruning import LukeOptunaPruning, TrialPrunedError
from luke_allennlp.experiments.search_space import check_space
from luke_allennlp.experiments.storage import open_study

CONFIG = {"trainer": {"optimizer": {"lr": 1e-5}, "validation_metric": "+f1"}}
SPACE = {"parameters": {"trainer.optimizer.lr": {"type": "float", "low": 1e-6, "high": 1e-4, "log": True}}}


def search(tmp_path, trials=10, space=SPACE):
    checked = check_space("s.jsonnet", space, CONFIG)
    url = studies.default_storage(str(tmp_path))
    return studies.Search(str(tmp_path), "c.jsonnet", CONFIG, checked, url, "c:s", trials, out=lambda line: None)


def test_a_config_that_cannot_train_stops_the_search_after_three_failed_trials(tmp_path, monkeypatch):
    fails = [sys.executable, "-c", "import sys; print('allennlp: error: data.json not found'); sys.exit(1)"]
    monkeypatch.setattr(runs, "train_command", lambda *args, **kwargs: fails)
    job = search(tmp_path)
    with pytest.raises(studies.StudyError) as error:
        job.run([runs.Device(threads=1)])
    assert str(error.value) == (
        "3 trials in a row failed, so this process stopped starting trials (the last: allennlp: error: data.json not "
        f"found): see the trials' logs in {tmp_path}/logs"
    )
    trials = optuna.load_study(study_name="c:s", storage=studies.default_storage(str(tmp_path))).trials
    assert [(t.number, t.state, t.user_attrs["error"]) for t in trials] == [
        (n, optuna.trial.TrialState.FAIL, "allennlp: error: data.json not found") for n in range(3)
    ]
    assert not (tmp_path / "trials").exists() or not list((tmp_path / "trials").iterdir())  # nothing half-written
    assert sorted(p.name for p in (tmp_path / "logs").iterdir()) == [
        f"trial-{n}.{kind}" for n in range(3) for kind in ("config.json", "log")
    ]
    assert studies.write_best(job.study, job.space, CONFIG, str(tmp_path)) is None
    assert studies.save_plots(job.study, str(tmp_path)) == ["every plot: no trial completed"]


def test_the_pruning_callback_reports_each_epoch_and_stops_a_pruned_trial(tmp_path):
    url = studies.default_storage(str(tmp_path))
    pruner = {"type": "threshold", "lower": 0.5}
    study = open_study(url, "c:s", direction="maximize")
    trial = study.ask()
    callback = LukeOptunaPruning(str(tmp_path / "run"), url, "c:s", trial.number, "f1", pruner)
    callback.on_start(None)
    callback.on_epoch(None, {"validation_f1": 0.7, "training_loss": 1.0}, epoch=0)
    with pytest.raises(TrialPrunedError, match=r"^trial 0 pruned after epoch 1 \(validation_f1 0.3\)$"):
        callback.on_epoch(None, {"validation_f1": 0.3}, epoch=1)
    frozen = study._storage.get_trial(trial._trial_id)
    assert frozen.intermediate_values == {0: 0.7, 1: 0.3} and frozen.user_attrs["pruned_after_epoch"] == 1
    with pytest.raises(ValueError, match="luke_optuna_pruning: the epoch's metrics have no validation_f1"):
        callback.on_epoch(None, {"validation_accuracy": 0.3}, epoch=2)


def test_running_directories_of_ended_trials_are_removed(tmp_path):
    job = search(tmp_path)
    ended, running = job.study.ask(), job.study.ask()
    job.study.tell(ended, state=optuna.trial.TrialState.FAIL)
    for trial in (ended, running):
        (tmp_path / "trials" / f"trial-{trial.number}.running").mkdir(parents=True)
    studies.clean_stale(job.study, str(tmp_path))
    assert sorted(p.name for p in (tmp_path / "trials").iterdir()) == ["trial-1.running"]  # (still running)


def test_a_study_of_another_search_space_is_refused(tmp_path):
    search(tmp_path)
    other = {"parameters": {"trainer.optimizer.lr": {"type": "float", "low": 1e-6, "high": 1e-3, "log": True}}}
    with pytest.raises(studies.StudyError, match=r"^the study c:s searches another space \(s.jsonnet: its parameters "):
        search(tmp_path, space=other)
