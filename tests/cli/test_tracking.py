"""Tracking switched on from the environment (`LUKE_TRACKING`, `luke_allennlp.cli.tracking`), and `allennlp train`
with it: the trackers' files, the quiet console, progress as lines in a file, then `allennlp plot` of the run."""

import json
import re
import sys

import pytest
from allennlp.commands import main
from allennlp.common import Params

from tests.conftest import REPO_ROOT, set_config_env
from tests.training.callbacks.two_layers import read_scalars

NER = REPO_ROOT / "configs" / "ner" / "conll2003.jsonnet"


@pytest.mark.parametrize(
    "tracking, callbacks",
    [
        (None, []),
        ("", []),
        ("tensorboard", ["tensorboard"]),
        (" mlflow, wandb,tensorboard", ["mlflow", "wandb", "tensorboard"]),
    ],
)
def test_luke_tracking_names_the_trainers_callbacks(tracking, callbacks, monkeypatch, tmp_path):
    set_config_env(monkeypatch, tmp_path, tmp_path / "data.txt")
    if tracking is None:
        monkeypatch.delenv("LUKE_TRACKING", raising=False)
    else:
        monkeypatch.setenv("LUKE_TRACKING", tracking)
    trainer = Params.from_file(str(NER)).as_dict()["trainer"]
    assert trainer["callbacks"] == [{"type": name} for name in callbacks]


def test_an_unknown_tracker_is_named(monkeypatch, tmp_path):
    set_config_env(monkeypatch, tmp_path, tmp_path / "data.txt")
    monkeypatch.setenv("LUKE_TRACKING", "tensorbord")
    with pytest.raises(
        RuntimeError, match="LUKE_TRACKING names tensorbord: the trackers are tensorboard, mlflow, wandb"
    ):
        Params.from_file(str(NER))


def run_command(*args, monkeypatch):
    """The `allennlp` command line in this process (a subprocess spends most of its time importing)."""
    monkeypatch.setattr(sys, "argv", ["allennlp", *args])
    main(prog="allennlp")


def test_the_command_tracks_quietly_and_plots(tiny_luke_dir, conll_slice, tmp_path, monkeypatch, capsys):
    """`allennlp train` of the NER config on 29 sentences in batches of 8 (4 steps), TensorBoard and MLflow switched
    on by LUKE_TRACKING, MLflow's store named by MLFLOW_TRACKING_URI; standard error a file: progress lines, no
    carriage return; no raw tensors anywhere. Then `allennlp plot` of the run."""
    out = tmp_path / "run"
    set_config_env(monkeypatch, tiny_luke_dir, conll_slice)
    monkeypatch.setenv("LUKE_TRACKING", "tensorboard,mlflow")
    monkeypatch.setenv("MLFLOW_TRACKING_URI", (tmp_path / "mlruns").as_uri())
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")  # (MLflow's legacy file store: quicker to open)
    overrides = {
        "trainer.num_epochs": 1,
        "data_loader.batch_sampler.batch_size": 8,
        "dataset_reader.max_seq_length": 64,
    }
    run_command("train", str(NER), "-s", str(out), "-o", json.dumps(overrides), monkeypatch=monkeypatch)
    printed = capsys.readouterr()

    assert "\r" not in printed.err
    assert re.search(r"100%\|#+\| 4/4 \[", printed.err)  # the training bar's last line
    for text in (printed.out, printed.err, (out / "out.log").read_text()):
        assert "Batch inputs" not in text and "Shape:" not in text

    train = read_scalars(out / "log" / "train")
    assert [step for step, _ in train["train/batch_loss"]] == [1, 2, 3, 4]
    assert sorted(tag for tag in train if tag.startswith("learning_rate/")) == [
        "learning_rate/group_0",
        "learning_rate/group_1",
    ]
    assert [step for step, _ in read_scalars(out / "log" / "validation")["validation/f1"]] == [4]

    from mlflow.tracking import MlflowClient

    record = json.loads((out / "mlflow.json").read_text())
    assert record["tracking_uri"] == (tmp_path / "mlruns").as_uri()
    client = MlflowClient(record["tracking_uri"])
    run = client.get_run(record["run_id"])
    assert run.info.status == "FINISHED" and run.data.params["trainer.optimizer.lr"] == "1e-05"
    assert [m.step for m in client.get_metric_history(run.info.run_id, "train/batch_loss")] == [1, 2, 3, 4]
    metrics = json.loads((out / "metrics.json").read_text())
    assert run.data.metrics["best_validation_f1"] == pytest.approx(metrics["best_validation_f1"])
    (artifact,) = client.list_artifacts(run.info.run_id)
    assert artifact.path == "model.tar.gz" and artifact.file_size == (out / "model.tar.gz").stat().st_size

    page = tmp_path / "run.html"
    run_command("plot", str(out), "--out", str(page), monkeypatch=monkeypatch)
    (payload,) = re.findall(r'id="plot-data">(.*?)</script>', page.read_text(), re.S)
    (drawn,) = json.loads(payload)["runs"]
    assert [step for step, _ in drawn["steps"]["train/batch_loss"]] == [1, 2, 3, 4]
    assert drawn["epochs"]["validation_f1"] == [[0, pytest.approx(metrics["validation_f1"])]]
