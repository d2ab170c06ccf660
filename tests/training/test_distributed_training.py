"""
Training with two processes (gloo, CPU) through `allennlp train` (in-process; it spawns the two workers), on the tiny
LUKE text classifier: batches uneven between the processes, gradient accumulation, a checkpoint every 2 batches.
Until fine-tuning trains without it, the test asks DDP to find unused parameters (the embedder's pooler).
"""

import json
import os
import queue
import signal
import time
import traceback
from pathlib import Path
from typing import Any, Dict, List
from unittest import mock

import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from allennlp.commands.train import train_model_from_file
from allennlp.models.archival import load_archive
from allennlp.training.callbacks import TrainerCallback
from allennlp.training.util import evaluate

from tests.conftest import FIXTURES

CONFIG = str(FIXTURES / "configs" / "luke_classifier.jsonnet")


@TrainerCallback.register("test_kill_hard")
class KillHard(TrainerCallback):
    """SIGKILLs this process at a training step, once (a marker file per process says it happened)."""

    def __init__(self, serialization_dir: str, epoch: int, step: int, marker: str) -> None:
        super().__init__(serialization_dir)
        self.epoch, self.step, self.marker = epoch, step, marker

    def on_batch(self, trainer, batch_inputs, batch_outputs, batch_metrics, epoch, batch_number, is_training, **kwargs):
        marker = f"{self.marker}.{trainer._rank}"
        if is_training and (epoch, batch_number) == (self.epoch, self.step) and not os.path.exists(marker):
            Path(marker).touch()
            os.kill(os.getpid(), signal.SIGKILL)


@TrainerCallback.register("test_validation_counts")
class ValidationCounts(TrainerCallback):
    """Writes, per process and epoch, the instances the classifier's accuracy counted in validation (allennlp's
    `CategoricalAccuracy` sums them over the processes batch by batch)."""

    def on_batch(self, trainer, batch_inputs, batch_outputs, batch_metrics, epoch, batch_number, is_training, **kwargs):
        if not is_training:
            self.counted = trainer.model._accuracy.total_count

    def on_epoch(self, trainer, metrics, epoch, is_primary=True, **kwargs):
        path = Path(self.serialization_dir) / f"validation_counts_{trainer._rank}.json"
        counts = json.loads(path.read_text()) if path.exists() else []
        path.write_text(json.dumps(counts + [self.counted]))


def lines(n: int) -> List[str]:
    sentences = (FIXTURES / "data" / "sentiment.jsonl").read_text().splitlines()
    return [sentences[i % len(sentences)] for i in range(n)]


@pytest.fixture(scope="module")
def setup(tiny_luke_dir, tmp_path_factory) -> Dict[str, Any]:
    root = tmp_path_factory.mktemp("ddp")
    train, validation = root / "train.jsonl", root / "validation.jsonl"
    # Batches of 2 read by 2 processes: 17 training sentences are 5 + 4 batches, 3 + 2 optimizer steps with 2
    # accumulated (the second process splits a batch to take 3); 9 validation sentences are 3 + 2 batches.
    train.write_text("\n".join(lines(17)) + "\n")
    validation.write_text("\n".join(lines(9)) + "\n")
    os.environ["MODEL_DIR"], os.environ["DATA"] = str(tiny_luke_dir), str(train)
    overrides = {
        "train_data_path": str(train),
        "validation_data_path": str(validation),
        "data_loader.batch_size": 2,
        "distributed": {"cuda_devices": [-1, -1], "ddp_accelerator": {"type": "torch", "find_unused_parameters": True}},
        "trainer.type": "luke_gradient_descent",
        "trainer.num_epochs": 2,
        "trainer.precision": "fp32",
        "trainer.num_gradient_accumulation_steps": 2,
        "trainer.checkpointer": {"save_every_num_batches": 2, "keep_most_recent_by_count": None},
        "trainer.callbacks": [{"type": "test_validation_counts"}],
    }
    return {"root": root, "validation": validation, "overrides": overrides}


def serve(rank: int, jobs, results) -> None:
    """A worker: runs the functions allennlp's `train_model` spawns (`_train_worker`), one after another."""
    while (job := jobs.get()) is not None:
        fn, args = job
        try:
            fn(rank, *args)
            results.put((rank, None))
        except BaseException:  # noqa: BLE001  (reported to the test)
            results.put((rank, traceback.format_exc()))
        finally:
            if dist.is_initialized():
                dist.destroy_process_group()


class Workers:
    """Two spawned processes that `allennlp train` runs its workers in (`mp.spawn` patched), kept from one training
    to the next: a spawned process spends most of the test's time importing torch, allennlp and the project.
    A training that does not end within `timeout` seconds fails (a hang); workers that die are replaced."""

    def __init__(self, timeout: float = 300) -> None:
        self.context, self.timeout, self.processes = mp.get_context("spawn"), timeout, []

    def start(self) -> None:
        self.jobs, self.results = [self.context.Queue() for _ in range(2)], self.context.Queue()
        self.processes = [
            self.context.Process(target=serve, args=(rank, self.jobs[rank], self.results), daemon=True)
            for rank in range(2)
        ]
        for process in self.processes:
            process.start()

    def stop(self) -> None:
        for process in self.processes:
            process.kill()
            process.join()
        self.processes = []

    def spawn(self, fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn") -> None:
        assert nprocs == 2
        if not self.processes:
            self.start()
        for jobs in self.jobs:
            jobs.put((fn, args))
        done: Dict[int, Any] = {}
        deadline = time.monotonic() + self.timeout
        while len(done) < 2:
            try:
                rank, error = self.results.get(timeout=0.5)
                done[rank] = error
                continue
            except queue.Empty:
                pass
            dead = [p.exitcode for p in self.processes if p.exitcode is not None]
            if dead or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"worker killed by signal {-dead[0]}" if dead else f"hung for {self.timeout} s")
        errors = [error for error in done.values() if error]
        if errors:
            raise RuntimeError(errors[0])


@pytest.fixture(scope="module")
def workers():
    pool = Workers()
    yield pool
    pool.stop()


def train(setup, workers, out: Path, recover: bool = False, callbacks: List[Dict] = ()) -> None:
    overrides = dict(setup["overrides"])
    overrides["trainer.callbacks"] = overrides["trainer.callbacks"] + list(callbacks)
    with mock.patch("allennlp.commands.train.mp.spawn", workers.spawn):
        train_model_from_file(CONFIG, str(out), overrides=json.dumps(overrides), recover=recover)


@pytest.fixture(scope="module")
def reference(setup, workers) -> Path:
    """The uninterrupted run, tracked by TensorBoard and MLflow (its default store)."""
    out = setup["root"] / "reference"
    train(setup, workers, out, callbacks=[{"type": "tensorboard"}, {"type": "mlflow"}])
    return out


def test_checkpoints_every_2_batches(reference):
    """3 steps an epoch: a checkpoint after step 2 and at each epoch's end, in both processes at the same time
    (allennlp's let the second process save at every batch after the first save, and the collective hung)."""
    saved = sorted(p.name for p in reference.glob("*_state_e*.th"))
    assert saved == [
        f"{kind}_state_e{e}_b{b}.th" for kind in ("model", "training") for e, b in [(0, 2), (1, 0), (1, 2), (2, 0)]
    ]
    assert (reference / "model.tar.gz").exists()


def test_validation_is_over_the_whole_file(reference, setup):
    """Every process validated every batch (9 instances each epoch, not the 8 of the first 2 batches each), and the
    metrics are one process's over the same file with the same weights."""
    for rank in (0, 1):
        assert json.loads((reference / f"validation_counts_{rank}.json").read_text()) == [9.0, 9.0]
    archive = load_archive(str(reference / "model.tar.gz"), weights_file=str(reference / "model_state_e2_b0.th"))
    from allennlp.data.data_loaders import SimpleDataLoader

    instances = list(archive.dataset_reader.read(str(setup["validation"])))
    loader = SimpleDataLoader(instances, batch_size=2, vocab=archive.model.vocab)
    single = evaluate(archive.model, loader, cuda_device=-1)
    distributed = json.loads((reference / "metrics_epoch_1.json").read_text())
    assert distributed["validation_accuracy"] == single["accuracy"] and len(instances) == 9


def test_only_global_rank_0_tracks_and_once(reference):
    """3 steps an epoch, 2 epochs: one TensorBoard file set and one MLflow run, each step's loss once (rank 1 opens
    nothing: allennlp's callback opened event files in every process)."""
    from mlflow.tracking import MlflowClient

    from tests.training.callbacks.two_layers import read_scalars

    assert [len(os.listdir(reference / "log" / part)) for part in ("train", "validation")] == [1, 1]
    train = read_scalars(reference / "log" / "train")
    assert [step for step, _ in train["train/batch_loss"]] == [1, 2, 3, 4, 5, 6]
    assert [tag for tag in train if tag.startswith("learning_rate/")] == ["learning_rate/group_0"]
    assert [step for step, _ in read_scalars(reference / "log" / "validation")["validation/accuracy"]] == [3, 6]

    record = json.loads((reference / "mlflow.json").read_text())
    client = MlflowClient(record["tracking_uri"])
    (run,) = client.search_runs([e.experiment_id for e in client.search_experiments()])
    assert run.info.run_id == record["run_id"] and run.info.status == "FINISHED"
    assert [m.step for m in client.get_metric_history(run.info.run_id, "train/batch_loss")] == [1, 2, 3, 4, 5, 6]
    assert [a.path for a in client.list_artifacts(run.info.run_id)] == ["model.tar.gz"]  # (archived by the launcher)
    assert "Logging to MLflow run" in (reference / "out_worker0.log").read_text()
    assert "MLflow" not in (reference / "out_worker1.log").read_text()


def test_kill_9_and_recover_give_the_uninterrupted_weights(reference, setup, workers):
    """Both processes SIGKILLed at epoch 1, step 3 (after the checkpoint of step 2), then `--recover`: the final
    weights equal the uninterrupted run's exactly."""
    out = setup["root"] / "killed"
    kill = {"type": "test_kill_hard", "epoch": 1, "step": 3, "marker": str(setup["root"] / "marker")}
    with pytest.raises(RuntimeError, match=f"killed by signal {signal.SIGKILL.value}"):
        train(setup, workers, out, callbacks=[kill])
    assert not (out / "model.tar.gz").exists() and (out / "training_state_e1_b2.th").exists()
    train(setup, workers, out, recover=True, callbacks=[kill])
    expected = torch.load(reference / "model_state_e2_b0.th", weights_only=True)
    recovered = torch.load(out / "model_state_e2_b0.th", weights_only=True)
    assert expected.keys() == recovered.keys()
    assert [k for k in expected if not torch.equal(expected[k], recovered[k])] == []
    assert json.loads((out / "metrics_epoch_1.json").read_text())["training_loss"] == pytest.approx(
        json.loads((reference / "metrics_epoch_1.json").read_text())["training_loss"], rel=1e-12
    )
