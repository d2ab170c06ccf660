import json
import os
from pathlib import Path
from typing import Dict

import pytest
import torch
from allennlp.commands.train import train_model_from_file
from allennlp.common import Params
from allennlp.common.checks import ConfigurationError
from allennlp.training.callbacks import TrainerCallback
from allennlp.training.trainer import Trainer

from tests.conftest import FIXTURES

CONFIG = str(FIXTURES / "configs" / "luke_classifier.jsonnet")
# Small and fast, with dropout on and shuffled batches: both draw random numbers while training.
BASE = {
    "trainer.type": "luke_gradient_descent",
    "trainer.num_epochs": 2,
    "trainer.precision": "fp32",
    "trainer.checkpointer": {"save_every_num_batches": 1, "keep_most_recent_by_count": 3},
}


class Killed(Exception):
    pass


@TrainerCallback.register("test_kill")
class KillOnce(TrainerCallback):
    """Raises at a given (epoch, step), once: the marker file says it happened, so `--recover` runs through."""

    def __init__(self, serialization_dir: str, epoch: int, step: int, marker: str) -> None:
        super().__init__(serialization_dir)
        self.epoch, self.step, self.marker = epoch, step, marker

    def on_batch(self, trainer, batch_inputs, batch_outputs, batch_metrics, epoch, batch_number, is_training, **kwargs):
        if is_training and (epoch, batch_number) == (self.epoch, self.step) and not os.path.exists(self.marker):
            Path(self.marker).touch()
            raise Killed(f"killed at epoch {epoch}, step {batch_number}")


@pytest.fixture
def env(tiny_luke_dir, monkeypatch):
    monkeypatch.setenv("MODEL_DIR", str(tiny_luke_dir))
    monkeypatch.setenv("DATA", str(FIXTURES / "data" / "sentiment.jsonl"))


def train(out: Path, recover: bool = False, **overrides):
    return train_model_from_file(CONFIG, str(out), overrides=json.dumps({**BASE, **overrides}), recover=recover)


def stable(metrics: Dict) -> Dict:
    """What must match between runs (not times, speeds or memory)."""
    return {k: v for k, v in metrics.items() if not any(s in k for s in ("duration", "per_second", "memory"))}


@pytest.mark.parametrize("kill_at", [(0, 3), (1, 2)], ids=["mid-epoch-0", "mid-epoch-1"])
def test_recovery_after_a_kill_is_bit_identical(env, tmp_path, kill_at):
    """16 sentences in batches of 4: 4 steps an epoch. The run killed at a step boundary and recovered from the
    checkpoint of the step before ends with the same weights and metrics as the uninterrupted one."""
    reference = train(tmp_path / "reference").state_dict()
    killed = tmp_path / "killed"
    callback = {"type": "test_kill", "epoch": kill_at[0], "step": kill_at[1], "marker": str(tmp_path / "marker")}
    with pytest.raises(Killed):
        train(killed, **{"trainer.callbacks": [callback]})
    assert not (killed / "model.tar.gz").exists()
    recovered = train(killed, recover=True, **{"trainer.callbacks": [callback]}).state_dict()
    assert reference.keys() == recovered.keys()
    assert all(torch.equal(reference[k], recovered[k]) for k in reference)
    expected = json.loads((tmp_path / "reference" / "metrics.json").read_text())
    assert stable(json.loads((killed / "metrics.json").read_text())) == stable(expected)
    # Without the random states (allennlp's own trainer) the recovered run would differ: dropout draws anew.
    assert expected["training_loss"] > 0


def test_recovery_falls_back_past_a_truncated_checkpoint(env, tmp_path):
    out = tmp_path / "run"
    callback = {"type": "test_kill", "epoch": 0, "step": 3, "marker": str(tmp_path / "marker")}
    with pytest.raises(Killed):
        train(out, **{"trainer.callbacks": [callback]})
    latest = out / "training_state_e0_b2.th"
    latest.write_bytes(latest.read_bytes()[:100])  # as a kill during a non-atomic save would leave it
    recovered = train(out, recover=True, **{"trainer.callbacks": [callback]})
    log = (out / "out.log").read_text()
    assert "Skipping the unreadable checkpoint" in log and "training_state_e0_b2.th (RuntimeError" in log
    assert recovered is not None and (out / "model.tar.gz").exists()
    # `--recover` of the finished run trains no epoch: metrics.json, written again, kept only `best_*`.
    before = json.loads((out / "metrics.json").read_text())
    assert "training_loss" in before and before["epoch"] == 1
    train(out, recover=True, **{"trainer.callbacks": [callback]})
    assert stable(json.loads((out / "metrics.json").read_text())) == stable(before)


class AutocastProbe(torch.nn.Module):
    """Records whether its forward pass runs under autocast, and in which dtype."""

    def __init__(self) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(2, 1)
        self.seen = []

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> Dict[str, torch.Tensor]:
        out = self.linear(x)
        self.seen.append(out.dtype)
        return {"loss": torch.nn.functional.mse_loss(out.float(), y)}

    def get_metrics(self, reset: bool = False) -> Dict[str, float]:
        return {}

    def get_regularization_penalty(self):
        return None


@pytest.mark.parametrize(
    "precision, dtype", [("bf16", torch.bfloat16), ("fp32", torch.float32), ("auto", torch.float32)]
)
def test_precision_sets_the_autocast_dtype_of_the_forward_pass(tmp_path, precision, dtype):
    from allennlp.data import Instance
    from allennlp.data.data_loaders import SimpleDataLoader
    from allennlp.data.fields import TensorField

    model = AutocastProbe()
    instances = [Instance({"x": TensorField(torch.randn(2)), "y": TensorField(torch.randn(1))}) for _ in range(4)]
    loader = SimpleDataLoader(instances, batch_size=2)
    trainer = Trainer.from_params(
        Params(
            {
                "type": "luke_gradient_descent",
                "precision": precision,
                "num_epochs": 1,
                "cuda_device": -1,
                "optimizer": {"type": "luke_adamw"},
                "checkpointer": None,
            }
        ),
        model=model,
        serialization_dir=str(tmp_path),
        data_loader=loader,
    )
    trainer.train()
    assert model.seen == [dtype, dtype]


def test_fp16_needs_a_gpu_and_use_amp_must_agree(tmp_path):
    from allennlp.data.data_loaders import SimpleDataLoader

    def build(**params):
        return Trainer.from_params(
            Params(
                {"type": "luke_gradient_descent", "num_epochs": 1, "cuda_device": -1, "checkpointer": None, **params}
            ),
            model=AutocastProbe(),
            serialization_dir=str(tmp_path),
            data_loader=SimpleDataLoader([], batch_size=1),
        )

    with pytest.raises(ValueError, match="AMP requires a cuda device"):
        build(precision="fp16")
    with pytest.raises(ConfigurationError, match="precision must be one of"):
        build(precision="half")
    with pytest.raises(ConfigurationError, match='contradicts precision "bf16"'):
        build(precision="bf16", use_amp=True)


def test_the_gradient_scaler_state_round_trips_through_a_checkpoint(tmp_path):
    """fp16 needs a GPU; its gradient scaler does not: a CPU `GradScaler` in the trainer's fp16 path (scaled
    backward, `scaler.step`, `scaler.update`) grows its scale as on a GPU, and `--recover` restores it exactly
    instead of restarting at 65536."""
    from allennlp.data import Instance
    from allennlp.data.data_loaders import SimpleDataLoader
    from allennlp.data.fields import TensorField

    def build() -> Trainer:
        instances = [Instance({"x": TensorField(torch.randn(2)), "y": TensorField(torch.randn(1))}) for _ in range(8)]
        params = {
            "type": "luke_gradient_descent",
            "precision": "fp32",
            "num_epochs": 1,
            "cuda_device": -1,
            "optimizer": {"type": "luke_adamw"},
        }
        trainer = Trainer.from_params(
            Params(params),
            model=AutocastProbe(),
            serialization_dir=str(tmp_path),
            data_loader=SimpleDataLoader(instances, batch_size=2),
        )
        trainer._scaler = torch.amp.GradScaler("cpu", init_scale=1024.0, growth_interval=3)
        return trainer

    trained = build()
    trained.train()  # 4 steps with finite gradients: the scale doubles after 3, the growth tracker is at 1
    saved = torch.load(tmp_path / "training_state_e1_b0.th", weights_only=True)["grad_scaler"]
    assert saved["scale"] == 2048.0 and saved["_growth_tracker"] == 1 and saved["growth_interval"] == 3
    assert trained._scaler.state_dict() == saved
    recovered = build()
    recovered._scaler = torch.amp.GradScaler("cpu")  # a fresh one: 65536, growth tracker 0
    recovered._maybe_restore_checkpoint()
    assert recovered._scaler.state_dict() == saved


class ReadsItsLoss(AutocastProbe):
    """A model that reads its loss on the host in every forward pass (a device sync on a GPU)."""

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> Dict[str, torch.Tensor]:
        output = super().forward(x, y)
        self.last = output["loss"].item()
        return output


READ_LINE = ReadsItsLoss.forward.__code__.co_firstlineno + 2  # the `.item()`


def build_trainer(tmp_path, model, batches=6, **params) -> Trainer:
    from allennlp.data import Instance
    from allennlp.data.data_loaders import SimpleDataLoader
    from allennlp.data.fields import TensorField

    instances = [Instance({"x": TensorField(torch.randn(2)), "y": TensorField(torch.randn(1))}) for _ in range(batches)]
    return Trainer.from_params(
        Params(
            {
                "type": "luke_gradient_descent",
                "precision": "fp32",
                "num_epochs": 2,
                "checkpointer": None,
                "optimizer": {"type": "luke_adamw"},
                **params,
            }
        ),
        model=model,
        serialization_dir=str(tmp_path),
        data_loader=SimpleDataLoader(instances, batch_size=1),
    )


def test_the_host_sync_audit_counts_each_step(tmp_path):
    """Steps without a report never read the device; a report step reads the loss once; a model that reads its
    loss counts on every step. The loop's timing is kept for every step and each epoch's first."""
    trainer = build_trainer(tmp_path, AutocastProbe(), audit_host_syncs=True, metrics_every_num_batches=3)
    trainer.train()
    assert [(step, reported) for step, reported, _ in trainer.host_sync_counts] == [
        (1, False),
        (2, False),
        (3, True),
        (4, False),
        (5, False),
        (6, True),
        (7, False),
        (8, False),
        (9, True),
        (10, False),
        (11, False),
        (12, True),
    ]
    assert all(count == 0 for _, reported, count in trainer.host_sync_counts if not reported)
    assert all(count >= 1 for _, reported, count in trainer.host_sync_counts if reported)
    assert len(trainer.step_times) == len(trainer.data_waits) == 12 and len(trainer.pass_start_waits) == 2
    assert all(0 <= wait <= time for wait, time in zip(trainer.data_waits, trainer.step_times))

    syncing = build_trainer(tmp_path / "b", ReadsItsLoss(), audit_host_syncs=True, metrics_every_num_batches=3)
    syncing.train()
    assert all(count == 1 for _, reported, count in syncing.host_sync_counts if not reported)
    assert syncing.host_sync_events[0][1] == [f"item at test_luke_gradient_descent.py:{READ_LINE}"]


def test_audited_steps_audit_the_first_steps_of_the_run_only(tmp_path):
    """With `audited_steps`, the audit (its modes) is active in the run's first steps only, across epochs: the steps
    after run without it, as a timed run must."""
    from luke_allennlp.training.trainers import sync_audit

    active = []

    class Probe(AutocastProbe):
        def forward(self, x: torch.Tensor, y: torch.Tensor) -> Dict[str, torch.Tensor]:
            active.append(sync_audit.current() is not None)
            return super().forward(x, y)

    trainer = build_trainer(tmp_path, Probe(), audit_host_syncs=True, audited_steps=8, metrics_every_num_batches=3)
    trainer.train()
    assert active == [True] * 8 + [False] * 4  # 6 steps an epoch: all of the first, 2 of the second
    assert [step for step, _, _ in trainer.host_sync_counts] == list(range(1, 9))
    assert len(trainer.step_times) == 12
    with pytest.raises(ConfigurationError, match="audited_steps must be at least 1"):
        build_trainer(tmp_path / "b", AutocastProbe(), audit_host_syncs=True, audited_steps=0)


def test_cuda_device_auto_is_the_cpu_here_and_minus_one_the_cpu(tmp_path, caplog):
    assert not torch.cuda.is_available()
    with caplog.at_level("INFO"):
        auto = build_trainer(tmp_path, AutocastProbe())  # the default: "auto"
    assert auto.cuda_device == torch.device("cpu")
    assert "Training on the CPU (no GPU found)" in caplog.text
    assert build_trainer(tmp_path, AutocastProbe(), cuda_device=-1).cuda_device == torch.device("cpu")
    assert build_trainer(tmp_path, AutocastProbe(), cuda_device="auto").cuda_device == torch.device("cpu")


@pytest.mark.parametrize("device", [0, "0", "cuda:1"])
def test_a_gpu_this_machine_lacks_is_a_one_line_error(tmp_path, device):
    from luke_allennlp.cli.user_errors import one_line, user_error

    with pytest.raises(ConfigurationError) as error:
        build_trainer(tmp_path, AutocastProbe(), cuda_device=device)
    index = 1 if device == "cuda:1" else 0
    assert (
        one_line(error.value)
        == str(error.value)
        == (
            f'trainer.cuda_device is {index}, but this machine has no GPU: set it to "auto" (a GPU where there is one, '
            "else the CPU) or -1 (the CPU)"
        )
    )
    assert user_error(error.value) is error.value


def test_a_compiled_model_is_compiled_once_a_bucket(env, tmp_path, monkeypatch):
    """allennlp's confidence checks hook every module for the first batch: for a model that runs compiled they are
    skipped, else dynamo compiles the first batch's bucket with the hooks and again without them (minutes at LUKE
    base). Two epochs of a compiled luke embedder: one graph for training and one for validation, nothing again."""
    import logging

    from luke_allennlp.modeling import static_shapes
    from luke_allennlp.training.trainers import luke_gradient_descent

    compile_ = torch.compile
    monkeypatch.setattr(static_shapes.torch, "compile", lambda f, **_: compile_(f, dynamic=False, backend="aot_eager"))
    records = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append((record.levelno, record.getMessage()))

    handler = Keep(logging.INFO)
    loggers = [logging.getLogger(m.__name__) for m in (static_shapes, luke_gradient_descent)]
    for logger in loggers:
        logger.addHandler(handler)
        monkeypatch.setattr(logger, "level", logging.INFO)
    torch._dynamo.reset()
    try:
        train(tmp_path, **{"model.text_field_embedder.token_embedders.tokens.compile": True})
    finally:
        for logger in loggers:
            logger.removeHandler(handler)
    assert (logging.INFO, "the model runs under torch.compile: allennlp's confidence checks are skipped") in records
    assert [r for r in records if r[1].startswith("torch.compile: ")] == [
        (logging.INFO, "torch.compile: graph 1 of the encoder, for 64 words, no entities, training"),
        (logging.INFO, "torch.compile: graph 2 of the encoder, for 64 words, no entities, no grad"),
    ]
