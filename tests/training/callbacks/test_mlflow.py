"""The `mlflow` callback, read back by MLflow's own client."""

import json
import sys

import pytest
from allennlp.training.callbacks import TrainerCallback

from luke_allennlp.resources.extras import MissingExtraError
from luke_allennlp.training.callbacks.mlflow import MlflowCallback, log_archive
from tests.training.callbacks.two_layers import STEPS_PER_EPOCH, TwoLayers, build_trainer, expected_learning_rate


@TrainerCallback.register("test_tracking_fail")
class FailAtEnd(TrainerCallback):
    def on_epoch(self, trainer, metrics, epoch, is_primary=True, **kwargs):
        raise RuntimeError("a bug")


@pytest.fixture
def store(tmp_path, monkeypatch):
    """A file store named by MLFLOW_TRACKING_URI (quicker to open than the default SQLite database)."""
    monkeypatch.setenv("MLFLOW_TRACKING_URI", (tmp_path / "store").as_uri())
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    from mlflow.tracking import MlflowClient

    return MlflowClient((tmp_path / "store").as_uri())


def test_params_metrics_every_step_status_and_the_archive(tmp_path, store):
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    config = {"trainer": {"optimizer": {"lr": 0.01, "betas": [0.9, 0.98]}}, "model": {"type": "two_layers"}}
    (run_dir / "config.json").write_text(json.dumps(config))
    model = TwoLayers()
    build_trainer(run_dir, model, callbacks=[{"type": "mlflow"}], metrics_every_num_batches=4).train()

    (experiment,) = [e for e in store.search_experiments() if e.name == "luke_allennlp"]
    (run,) = store.search_runs([experiment.experiment_id])
    assert run.info.run_id == json.loads((run_dir / "mlflow.json").read_text())["run_id"]
    assert run.info.status == "FINISHED" and run.info.run_name == "run"
    assert run.data.params == {
        "trainer.optimizer.lr": "0.01",
        "trainer.optimizer.betas": "[0.9, 0.98]",
        "model.type": "two_layers",
    }
    steps = list(range(1, 2 * STEPS_PER_EPOCH + 1))
    loss = store.get_metric_history(run.info.run_id, "train/batch_loss")
    assert [m.step for m in loss] == steps
    assert [m.value for m in loss] == pytest.approx(model.losses, rel=1e-6)
    rates = sorted(key for key in run.data.metrics if key.startswith("learning_rate/"))
    assert rates == ["learning_rate/group_0", "learning_rate/group_1"]
    for group in (0, 1):
        history = store.get_metric_history(run.info.run_id, f"learning_rate/group_{group}")
        assert [m.value for m in history] == pytest.approx(
            [expected_learning_rate(group, s, len(steps)) for s in steps]
        )
    assert [m.step for m in store.get_metric_history(run.info.run_id, "validation/loss")] == [6, 12]

    # What `archive_model` hands on: the archive as an artifact, the final metrics of metrics.json.
    (run_dir / "metrics.json").write_text(json.dumps({"best_validation_loss": 0.5, "test_loss": 0.25, "epoch": 1}))
    (run_dir / "model.tar.gz").write_bytes(b"an archive")
    log_archive(str(run_dir), str(run_dir / "model.tar.gz"))
    run = store.get_run(run.info.run_id)
    assert [a.path for a in store.list_artifacts(run.info.run_id)] == ["model.tar.gz"]
    assert run.data.metrics["best_validation_loss"] == 0.5 and run.data.metrics["test_loss"] == 0.25
    assert "epoch" not in run.data.metrics


def test_a_failed_training_is_a_failed_run(tmp_path, store):
    with pytest.raises(RuntimeError, match="a bug"):
        build_trainer(
            tmp_path, TwoLayers(), epochs=1, callbacks=[{"type": "mlflow"}, {"type": "test_tracking_fail"}]
        ).train()
    run_id = json.loads((tmp_path / "mlflow.json").read_text())["run_id"]
    assert store.get_run(run_id).info.status == "FAILED"


def test_without_mlflow_the_error_names_the_extra(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "mlflow", None)  # (an import of it raises ImportError)
    with pytest.raises(
        MissingExtraError,
        match=r"the mlflow callback needs mlflow, which is not installed: pip install 'luke_allennlp\[tracking\]'",
    ):
        MlflowCallback(str(tmp_path))
