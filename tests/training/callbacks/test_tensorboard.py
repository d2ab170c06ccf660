"""The `tensorboard` callback, read back by TensorBoard's own event reader."""

import os
from pathlib import Path

import pytest
from allennlp.training.callbacks import TrainerCallback

from tests.training.callbacks.two_layers import (
    STEPS_PER_EPOCH,
    TwoLayers,
    build_trainer,
    expected_learning_rate,
    read_scalars,
)


class Killed(Exception):
    pass


@TrainerCallback.register("test_tracking_kill")
class KillAt(TrainerCallback):
    """Raises at one global step, once (a marker file says it happened)."""

    def __init__(self, serialization_dir: str, step: int, marker: str) -> None:
        super().__init__(serialization_dir)
        self.step, self.marker = step, marker

    def on_batch(self, trainer, batch_inputs, batch_outputs, batch_metrics, epoch, batch_number, is_training, **kwargs):
        if is_training and trainer._total_batches_completed == self.step and not os.path.exists(self.marker):
            Path(self.marker).touch()
            raise Killed(f"killed at step {self.step}")


def test_the_loss_every_step_one_learning_rate_per_group_and_the_epochs_metrics(tmp_path):
    """12 steps (2 epochs of 6), the trainer reporting every 4 steps of an epoch: every step's loss and both groups'
    learning rates at their steps; the model's metric on report steps; each epoch's metrics at the step ending it."""
    model = TwoLayers()
    build_trainer(tmp_path, model, callbacks=[{"type": "tensorboard"}], metrics_every_num_batches=4).train()
    train, validation = read_scalars(tmp_path / "log" / "train"), read_scalars(tmp_path / "log" / "validation")
    steps = list(range(1, 2 * STEPS_PER_EPOCH + 1))

    assert [step for step, _ in train["train/batch_loss"]] == steps
    assert [value for _, value in train["train/batch_loss"]] == pytest.approx(model.losses, rel=1e-6)
    assert sorted(tag for tag in train if tag.startswith("learning_rate/")) == [
        "learning_rate/group_0",
        "learning_rate/group_1",
    ]
    for group in (0, 1):
        rates = train[f"learning_rate/group_{group}"]
        assert [step for step, _ in rates] == steps
        assert [value for _, value in rates] == pytest.approx(
            [expected_learning_rate(group, s, len(steps)) for s in steps]
        )
    assert [step for step, _ in train["train/batch_mean_error"]] == [4, 10]  # report steps: 4th of each epoch
    assert [step for step, _ in train["train/loss"]] == [6, 12]
    assert [step for step, _ in validation["validation/loss"]] == [6, 12]
    assert set(validation) == {"validation/loss", "validation/mean_error"}
    # One set of event files: one for training, one for validation.
    assert [len(os.listdir(tmp_path / "log" / part)) for part in ("train", "validation")] == [1, 1]


def test_tracking_makes_no_step_wait_for_the_device(tmp_path):
    """Under the trainer's host-sync audit, with TensorBoard and MLflow: steps without a report read nothing from the
    device (the losses are read with the report's), as without them."""
    store = (tmp_path / "store").as_uri()
    trackers = [{"type": "tensorboard"}, {"type": "mlflow", "tracking_uri": store}]
    trainer = build_trainer(
        tmp_path, TwoLayers(record_losses=False), callbacks=trackers, audit_host_syncs=True, metrics_every_num_batches=3
    )
    with pytest.MonkeyPatch.context() as env:
        env.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
        trainer.train()
    counts = trainer.host_sync_counts
    assert [step for step, reported, _ in counts if reported] == [3, 6, 9, 12]
    assert all(count == 0 for _, reported, count in counts if not reported)
    assert len(read_scalars(tmp_path / "log" / "train")["train/batch_loss"]) == 12


def test_a_recovered_run_has_one_point_per_step(tmp_path):
    """Killed at step 9 (its last checkpoint after step 8) and recovered: the first files hold steps 1 to 9, the
    new ones from 9 on, and TensorBoard's reader shows each step once, step 9 from the recovered run."""
    first, second = TwoLayers(), TwoLayers()
    params = {
        "callbacks": [
            {"type": "tensorboard"},
            {"type": "test_tracking_kill", "step": 9, "marker": str(tmp_path / "k")},
        ],
        "checkpointer": {"type": "luke_checkpointer", "save_every_num_batches": 1},
    }
    with pytest.raises(Killed):
        build_trainer(tmp_path, first, **params).train()
    build_trainer(tmp_path, second, **params).train()

    assert len(first.losses) == 9 and len(second.losses) == 4  # steps 9 to 12 trained again
    assert len(os.listdir(tmp_path / "log" / "train")) == 2
    loss = read_scalars(tmp_path / "log" / "train")["train/batch_loss"]
    assert [step for step, _ in loss] == list(range(1, 13))
    assert [value for _, value in loss] == pytest.approx(first.losses[:8] + second.losses, rel=1e-6)
