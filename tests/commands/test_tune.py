"""`allennlp tune`: two processes sharing one SQLite study, four trials of the tiny classifier on a grid, two pruned
after their first epoch; the study read back with `optuna.load_study`; the best config trained again."""

import json
import os
import subprocess

import optuna
import pytest
import torch

from luke_allennlp.experiments.runs import cpu_count
from tests.conftest import ALLENNLP, FIXTURES, REPO_ROOT

CONFIG = FIXTURES / "configs" / "luke_classifier.jsonnet"
# A learning rate of 10 makes the validation loss jump above 2 in the first epoch (85 and 230 measured; at 1, 0.96 to 9.2
# as the dropout masks fall): the threshold pruner stops those two trials there; the other two (3e-3: about 0.70) train
# their two epochs.
SPACE = """{
  metric: 'loss',
  direction: 'minimize',
  parameters: {
    'trainer.optimizer.lr': { type: 'categorical', choices: [0.003, 10.0] },
    'trainer.optimizer.weight_decay': { type: 'categorical', choices: [0.0, 0.01] },
  },
  sampler: { type: 'grid' },
  pruner: { type: 'threshold', upper: 2.0 },
}
"""
OVERRIDES = {"trainer.type": "luke_gradient_descent", "trainer.num_epochs": 2}


@pytest.fixture(scope="module")
def search(tiny_luke_dir, tmp_path_factory):
    root = tmp_path_factory.mktemp("tune")
    space = root / "classifier_search.jsonnet"
    space.write_text(SPACE)
    out = root / "search"
    env = {**os.environ, "MODEL_DIR": str(tiny_luke_dir), "DATA": str(FIXTURES / "data" / "sentiment.jsonl")}
    command = [str(ALLENNLP), "tune", str(CONFIG), str(space), "-s", str(out), "--trials", "4", "--jobs", "1"]
    command += ["-o", json.dumps(OVERRIDES)]
    processes = [
        subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO_ROOT, env=env)
        for _ in range(2)
    ]
    outputs = [process.communicate(timeout=600) for process in processes]
    for process, (_, stderr) in zip(processes, outputs):
        assert process.returncode == 0, stderr[-3000:]
    study = optuna.load_study(study_name="luke_classifier:classifier_search", storage=f"sqlite:///{out}/study.db")
    return {"out": out, "study": study, "outputs": outputs, "env": env}


def test_two_processes_share_the_study_and_run_each_trial_once(search):
    states = optuna.trial.TrialState
    trials = search["study"].get_trials()
    assert sorted(t.number for t in trials) == [0, 1, 2, 3]
    grid = {(t.params["trainer.optimizer.lr"], t.params["trainer.optimizer.weight_decay"]) for t in trials}
    assert grid == {(lr, wd) for lr in (0.003, 10.0) for wd in (0.0, 0.01)}  # no setting tried twice, none missed
    workers = {t.user_attrs["worker"] for t in trials}
    assert 1 <= len(workers) <= 2
    ran = [int(n) for stdout, _ in search["outputs"] for n in _ran(stdout)]
    assert sorted(ran) == [0, 1, 2, 3]  # each trial run by one process once
    for trial in trials:
        if trial.params["trainer.optimizer.lr"] == 10.0:
            assert trial.state == states.PRUNED and trial.user_attrs["pruned_after_epoch"] == 0
            assert list(trial.intermediate_values) == [0] and trial.intermediate_values[0] > 2.0
        else:
            assert trial.state == states.COMPLETE and list(trial.intermediate_values) == [0, 1]
            metrics = json.loads((search["out"] / "trials" / f"trial-{trial.number}" / "metrics.json").read_text())
            assert trial.value == metrics["best_validation_loss"]
    # A pruned trial leaves no run directory, and none is left half-written.
    completed = sorted(f"trial-{t.number}" for t in trials if t.state == states.COMPLETE)
    assert sorted(os.listdir(search["out"] / "trials")) == completed
    assert sorted(os.listdir(search["out"] / "plots")) == [
        "intermediate_values.png",
        "optimization_history.png",
        "param_importances.png",
    ]


def _ran(stdout):
    """The trials a process reports as ended."""
    return [
        line.split()[1].rstrip(":")
        for line in stdout.splitlines()
        if line.startswith("  trial ") and "(log:" not in line
    ]


def test_the_best_config_trains_again_to_the_same_validation_metric(search, tmp_path, monkeypatch):
    from allennlp.commands.train import train_model_from_file

    best = json.loads((search["out"] / "best_trial.json").read_text())
    study = search["study"]
    assert best["number"] == study.best_trial.number and best["value"] == study.best_value
    assert best["params"]["trainer.optimizer.lr"] == 0.003
    config = json.loads((search["out"] / "best_config.json").read_text())
    assert config["trainer"]["optimizer"]["lr"] == 0.003 and config["trainer"]["num_epochs"] == 2
    assert "callbacks" not in config["trainer"]  # (the trials' pruning callback left out)
    for name, value in search["env"].items():
        monkeypatch.setenv(name, value)
    threads = torch.get_num_threads()
    torch.set_num_threads(max(1, cpu_count()))  # (the trials' threads: --jobs 1)
    try:
        train_model_from_file(str(search["out"] / "best_config.json"), str(tmp_path / "again"))
    finally:
        torch.set_num_threads(threads)
    again = json.loads((tmp_path / "again" / "metrics.json").read_text())
    assert again["best_validation_loss"] == study.best_value


def test_without_optuna_tune_says_which_extra_to_install(tmp_path, monkeypatch, capsys):
    import sys

    from allennlp.commands import main

    monkeypatch.setitem(sys.modules, "optuna", None)  # (import optuna raises ImportError)
    argv = ["allennlp", "tune", str(CONFIG), "space.jsonnet", "-s", str(tmp_path / "out"), "--trials", "2"]
    monkeypatch.setattr(sys, "argv", argv)
    with pytest.raises(SystemExit) as exited:
        main(prog="allennlp")
    assert exited.value.code == 1 and not (tmp_path / "out").exists()
    assert capsys.readouterr().err.splitlines()[-1] == (
        "allennlp: error: Optuna is not installed: `pip install 'luke_allennlp[tune]'` (Optuna 4 or 5, and matplotlib "
        "for the plots)"
    )
