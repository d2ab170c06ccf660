"""
The `mlflow` callback: a training run as an MLflow run, and after `archive_model` its archive and final metrics.
"""

import json
import logging
import os
import re
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional

from allennlp.common import Params
from allennlp.common.util import SigTermReceived
from allennlp.training.callbacks.callback import TrainerCallback

from luke_allennlp.resources.extras import require
from luke_allennlp.training.callbacks.log_writer import StepLogWriter

logger = logging.getLogger(__name__)

RECORD = "mlflow.json"  # in the serialization directory: which store and run this training logs to
DEFAULT_EXPERIMENT = "luke_allennlp"
MAX_PARAM_LENGTH = 6000  # MLflow refuses longer parameter values
BATCH = 100  # parameters per request (MLflow's limit); metrics go 1000 a request
FINAL_METRICS = ("best_validation_", "test_", "best_epoch")  # from metrics.json, logged with the archive


def default_tracking_uri(serialization_dir: str) -> str:
    """MLflow's default backend (a SQLite database) in `mlruns/` of the serialization directory."""
    return f"sqlite:///{Path(serialization_dir).resolve() / 'mlruns' / 'mlflow.db'}"


def _client(tracking_uri: str) -> Any:
    require("mlflow", "tracking", "the mlflow callback")
    from mlflow.tracking import MlflowClient

    return MlflowClient(tracking_uri=tracking_uri)


def _param_key(key: str) -> str:
    return re.sub(r"[^\w\-. /]", "_", key)[:250]  # the characters and length MLflow takes in a key


@TrainerCallback.register("mlflow")
class MlflowCallback(StepLogWriter):
    """
    Logs the training run to MLflow: the config's parameters (`config.json` flattened: `trainer.optimizer.lr`, ...)
    when the run starts, the scalars of `luke_allennlp.training.callbacks.log_writer` as MLflow metrics with their
    steps (the loss and each parameter group's learning rate every optimizer step, the batch metrics every
    `metrics_every_num_batches` steps, `train/...` and `validation/...` each epoch), the run's status at the end
    (`FINISHED`, `KILLED` for an interruption, `FAILED`), and, once `allennlp train` has written `model.tar.gz`, the
    archive as an artifact and the final metrics of `metrics.json` (`best_validation_*`, `test_*`, `best_epoch`).
    Metrics are sent in one request per report step. Only the primary process logs. A run resumed with `--recover`
    continues its MLflow run (the steps from the checkpoint to the interruption are logged twice: MLflow keeps
    every point it was sent).

    `DIR/mlflow.json` names the store, experiment and run (`allennlp train`'s archiving reads it, in whichever
    process archives).

    Registered as a `TrainerCallback` with name "mlflow".

    # Parameters

    tracking_uri : `str`, optional (default = `None`)
        Where to log: a server (`http://host:5000`), a database (`sqlite:///path/mlflow.db`, `postgresql://...`), a
        file store (`file:///path/mlruns`, legacy: MLflow asks for `MLFLOW_ALLOW_FILE_STORE=true`). By default
        `MLFLOW_TRACKING_URI` where it is set, else a SQLite database in `mlruns/` of the serialization directory
        (`mlruns/mlflow.db`, artifacts in `mlruns/artifacts/`).
    experiment_name : `str`, optional (default = `None`)
        The experiment (created if missing): `MLFLOW_EXPERIMENT_NAME` where set, else "luke_allennlp".
    run_name : `str`, optional (default = `None`)
        The run's name: by default the serialization directory's.
    tags : `Dict[str, str]`, optional (default = `None`)
        Tags of the run (`serialization_dir` is added).
    log_archive : `bool`, optional (default = `True`)
        Copy `model.tar.gz` into the run's artifacts once written.
    summary_interval : `int`, optional (default = `1`)
        The loss and learning rates every this many steps.
    should_log_learning_rate : `bool`, optional (default = `True`)
        One learning-rate metric per parameter group.
    """

    def __init__(
        self,
        serialization_dir: str,
        tracking_uri: Optional[str] = None,
        experiment_name: Optional[str] = None,
        run_name: Optional[str] = None,
        tags: Optional[Dict[str, str]] = None,
        log_archive: bool = True,
        summary_interval: int = 1,
        should_log_learning_rate: bool = True,
    ) -> None:
        require("mlflow", "tracking", "the mlflow callback")
        self._init_writer(serialization_dir, summary_interval, should_log_learning_rate)
        self.tracking_uri = tracking_uri or os.environ.get("MLFLOW_TRACKING_URI") or None
        self.experiment_name = experiment_name or os.environ.get("MLFLOW_EXPERIMENT_NAME") or DEFAULT_EXPERIMENT
        self.run_name = run_name or Path(serialization_dir).resolve().name
        self.tags = {**(tags or {}), "serialization_dir": str(Path(serialization_dir).resolve())}
        self.log_archive = log_archive
        self.run_id: Optional[str] = None
        self._client: Any = None
        self._metrics: List[Any] = []

    # --- the run ---------------------------------------------------------------------------------------------

    def on_start(self, trainer: Any, is_primary: bool = True, **kwargs: Any) -> None:
        super().on_start(trainer, is_primary=is_primary, **kwargs)
        if not is_primary or self._client is not None:
            return
        local = self.tracking_uri is None
        uri = default_tracking_uri(self.serialization_dir) if local else self.tracking_uri
        if local:
            os.makedirs(os.path.join(self.serialization_dir, "mlruns"), exist_ok=True)
        self._client = _client(uri)
        if self.run_id is not None:  # `--recover`: the run of the checkpoint continues
            self._client.update_run(self.run_id, status="RUNNING")
        else:
            experiment_id = self._experiment_id(local)
            run = self._client.create_run(experiment_id, run_name=self.run_name, tags=self.tags)
            self.run_id = run.info.run_id
            self._log_params()
        logger.info("Logging to MLflow run %s (%s)", self.run_id, uri)
        self._record(tracking_uri=uri, run_id=self.run_id, log_archive=self.log_archive)

    def _experiment_id(self, local: bool) -> str:
        from mlflow.exceptions import MlflowException

        experiment = self._client.get_experiment_by_name(self.experiment_name)
        if experiment is not None:
            return experiment.experiment_id
        artifacts = (Path(self.serialization_dir).resolve() / "mlruns" / "artifacts").as_uri() if local else None
        try:
            return self._client.create_experiment(self.experiment_name, artifact_location=artifacts)
        except MlflowException:  # another run created it meanwhile
            experiment = self._client.get_experiment_by_name(self.experiment_name)
            if experiment is None:
                raise
            return experiment.experiment_id

    def _log_params(self) -> None:
        from mlflow.entities import Param

        config = os.path.join(self.serialization_dir, "config.json")
        if not os.path.exists(config):  # a trainer built without `allennlp train`
            return
        params = []
        for key, value in sorted(Params.from_file(config).as_flat_dict().items()):
            text = value if isinstance(value, str) else json.dumps(value)
            if len(text) > MAX_PARAM_LENGTH:
                logger.warning("MLflow: the value of %s is cut to %d characters", key, MAX_PARAM_LENGTH)
                text = text[: MAX_PARAM_LENGTH - 3] + "..."
            params.append(Param(_param_key(key), text))
        for start in range(0, len(params), BATCH):
            self._client.log_batch(self.run_id, params=params[start : start + BATCH])

    def _record(self, **values: Any) -> None:
        path = os.path.join(self.serialization_dir, RECORD)
        record = json.loads(Path(path).read_text()) if os.path.exists(path) else {}
        Path(path).write_text(json.dumps({**record, **values}, indent=2))

    # --- the scalars -----------------------------------------------------------------------------------------

    def write(self, scalars: Dict[str, float], step: int) -> None:
        from mlflow.entities import Metric

        now = int(time.time() * 1000)
        self._metrics.extend(Metric(name, value, now, step) for name, value in scalars.items())

    def commit(self, durable: bool = False) -> None:
        metrics, self._metrics = self._metrics, []
        for start in range(0, len(metrics), 1000):
            self._client.log_batch(self.run_id, metrics=metrics[start : start + 1000])

    def on_end(
        self,
        trainer: Any,
        metrics: Optional[Dict[str, Any]] = None,
        epoch: Optional[int] = None,
        is_primary: bool = True,
        **kwargs: Any,
    ) -> None:
        super().on_end(trainer, metrics=metrics, epoch=epoch, is_primary=is_primary, **kwargs)
        if not is_primary or self._client is None:
            return
        error = sys.exc_info()[1]  # (called from the trainer's `finally`)
        if error is None:
            status = "FINISHED"
        else:
            status = "KILLED" if isinstance(error, (KeyboardInterrupt, SigTermReceived)) else "FAILED"
        self._client.set_terminated(self.run_id, status=status)
        self._record(steps=trainer._total_batches_completed)

    def state_dict(self) -> Dict[str, Any]:
        return {**super().state_dict(), "run_id": self.run_id}

    def load_state_dict(self, state_dict: Dict[str, Any]) -> None:
        super().load_state_dict(state_dict)
        self.run_id = state_dict.get("run_id")


def log_archive(serialization_dir: str, archive_file: str) -> None:
    """After `archive_model` wrote `archive_file`: to the MLflow run of the directory's `mlflow` callback (its
    `mlflow.json`; nothing without one), the archive as an artifact (unless `log_archive` is false) and the final
    metrics of `metrics.json`. A store that cannot be reached is a warning: the training's outputs are written."""
    path = os.path.join(serialization_dir, RECORD)
    if not os.path.exists(path):
        return
    record = json.loads(Path(path).read_text())
    require("mlflow", "tracking", "the mlflow callback")  # (a missing extra is an error, not a warning)
    from mlflow.entities import Metric

    try:
        client = _client(record["tracking_uri"])
        metrics_file = Path(serialization_dir) / "metrics.json"
        final = json.loads(metrics_file.read_text()) if metrics_file.exists() else {}
        now, step = int(time.time() * 1000), record.get("steps", 0)
        chosen = [
            Metric(name, float(value), now, step)
            for name, value in sorted(final.items())
            if name.startswith(FINAL_METRICS) and isinstance(value, (int, float)) and not isinstance(value, bool)
        ]
        if chosen:
            client.log_batch(record["run_id"], metrics=chosen)
        if record.get("log_archive", True):
            client.log_artifact(record["run_id"], archive_file)
    except Exception as e:  # noqa: BLE001  (the run's outputs are on disk: say what was not logged)
        logger.warning("MLflow run %s: could not log %s (%s: %s)", record["run_id"], archive_file, type(e).__name__, e)
