import pytest
import torch

from luke_allennlp.cli import user_errors
from luke_allennlp.training.checkpointers.luke_checkpointer import LukeCheckpointer, save_atomically
from tests.training.trainers.test_luke_gradient_descent import env  # noqa: F401  (a fixture)


class Unpicklable:
    def __reduce__(self):
        raise RuntimeError("the disk is full")  # as a save interrupted half-way


def test_a_failed_save_leaves_the_previous_file(tmp_path):
    path = tmp_path / "state.th"
    save_atomically({"step": 1}, str(path))
    try:
        save_atomically({"step": 2, "broken": Unpicklable()}, str(path))
    except RuntimeError:
        pass
    assert torch.load(path, weights_only=True) == {"step": 1}
    assert [p.name for p in tmp_path.iterdir()] == ["state.th"]  # no temporary file left behind


def test_a_checkpoint_counts_once_both_files_exist(tmp_path):
    checkpointer = LukeCheckpointer(tmp_path)
    for epoch in (1, 2):
        torch.save({"w": torch.tensor([float(epoch)])}, checkpointer._model_state_path(epoch, 0))
    torch.save({"epochs_completed": 1}, checkpointer._training_state_path(1, 0))  # epoch 2's was never written
    model_state, training_state = checkpointer.load_checkpoint()
    assert training_state == {"epochs_completed": 1} and model_state["w"].item() == 1.0


class NoStateToSave:
    """A trainer as the checkpointer sees one (allennlp's `Trainer` interface) on a non-primary process of distributed
    training with an unsharded model: no state to save."""

    def __init__(self) -> None:
        self.asked = 0

    def get_checkpoint_state(self):
        self.asked += 1
        return None


def test_every_process_counts_a_save_at_the_position_its_trainer_gives(tmp_path):
    """Every 2 batches: a process whose trainer gives no state still saves (asks for the state, a collective call)
    at the same steps as rank 0, counting from its last save, without reading the trainer's private position."""
    checkpointer = LukeCheckpointer(tmp_path, save_every_num_batches=2, save_completed_epochs=False)
    trainer = NoStateToSave()
    saved = [checkpointer.maybe_save_checkpoint(trainer, 0, batches) for batches in range(1, 6)]
    assert saved == [False, True, False, True, False] and trainer.asked == 2
    assert (checkpointer._last_save_num_epochs_completed, checkpointer._last_save_num_batches_in_epoch_completed) == (
        0,
        4,
    )
    assert list(tmp_path.iterdir()) == []


# --- --recover with damaged checkpoints -------------------------------------------------------------------------------


def snapshot(directory):
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir()) if p.is_file() and p.suffix != ".log"}


def killed_run(tmp_path):
    """A run killed at epoch 1, step 2 (checkpoints every step, the 3 most recent kept)."""
    from tests.training.trainers.test_luke_gradient_descent import Killed, train

    out = tmp_path / "run"
    callback = {"type": "test_kill", "epoch": 1, "step": 2, "marker": str(tmp_path / "marker")}
    with pytest.raises(Killed):
        train(out, **{"trainer.callbacks": [callback]})
    return out, callback


@pytest.mark.usefixtures("env")
def test_recover_stops_at_once_when_no_model_state_is_readable(tmp_path):
    """All model states truncated, training states intact: one clear error before anything is trained, pruned or
    linked; every file as it was (rather than a warning, epoch 0 again, intact files pruned, best.th linked to a
    truncated file, and a failure at the end)."""
    from allennlp.common.checks import ConfigurationError

    from luke_allennlp.training.checkpointers.luke_checkpointer import RecoveryError
    from tests.training.trainers.test_luke_gradient_descent import train

    out, callback = killed_run(tmp_path)
    states = sorted(out.glob("model_state_e*.th"))
    assert len(states) == 3
    for path in states:
        path.write_bytes(path.read_bytes()[:100])
    before = snapshot(out)
    with pytest.raises(ConfigurationError) as raised:
        train(out, recover=True, **{"trainer.callbacks": [callback]})
    error = raised.value.__cause__
    assert isinstance(error, RecoveryError) and user_errors.user_error(raised.value) is error
    assert str(error).startswith(
        f"{out}: no checkpoint to recover from: model_state_e1_b1.th cannot be read as PyTorch weights, it is "
        "truncated or damaged (RuntimeError: PytorchStreamReader failed reading zip archive"
    )
    assert str(error).endswith(
        "(and 2 older checkpoint(s) likewise). Nothing was changed; restore the files, or train into a new directory"
    )
    assert snapshot(out) == before and not (out / "model.tar.gz").exists()


@pytest.mark.usefixtures("env")
def test_recover_resumes_from_the_newest_readable_pair_and_sets_the_damaged_aside(tmp_path):
    from tests.training.trainers.test_luke_gradient_descent import train

    out, callback = killed_run(tmp_path)
    newest = out / "model_state_e1_b1.th"
    damaged = newest.read_bytes()[:100]
    newest.write_bytes(damaged)
    intact = snapshot(out)
    train(out, recover=True, **{"trainer.callbacks": [callback]})
    # Kept for inspection, out of the way of pruning and of best.th; the older pair it resumed from was used.
    assert (out / "model_state_e1_b1.th.damaged").read_bytes() == damaged
    assert (out / "training_state_e1_b1.th.damaged").read_bytes() == intact["training_state_e1_b1.th"]
    for path in [*out.glob("*_state_e*.th"), out / "best.th"]:
        torch.load(path, weights_only=True)  # every checkpoint left, and best.th, loads
    assert (out / "model.tar.gz").exists()


def test_recover_with_incomplete_checkpoints_only_stops(tmp_path):
    from luke_allennlp.training.checkpointers.luke_checkpointer import RecoveryError

    checkpointer = LukeCheckpointer(tmp_path)
    torch.save({"w": torch.zeros(1)}, checkpointer._model_state_path(0, 1))  # its training state never written
    with pytest.raises(RecoveryError, match=r"no complete checkpoint .*: only model_state_e0_b1.th. Nothing was"):
        checkpointer.load_checkpoint()
    assert LukeCheckpointer(tmp_path / "empty").load_checkpoint() is None  # nothing to recover: a fresh start
