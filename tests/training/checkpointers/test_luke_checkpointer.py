import torch

from luke_allennlp.training.checkpointers.luke_checkpointer import LukeCheckpointer, save_atomically


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
