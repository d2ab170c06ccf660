import allennlp
import pytest
import torch

from luke_allennlp.training.trainers.allennlp_state import ALLENNLP_VERSION, AllenNlpTrainerState
from tests.training.trainers.test_luke_gradient_descent import AutocastProbe, build_trainer


def test_every_private_attribute_named_is_one_of_allennlps_trainer(tmp_path):
    """The view names attributes of the allennlp it was read from; each exists on a constructed trainer, and reads
    and writes go to the trainer itself."""
    assert allennlp.__version__ == ALLENNLP_VERSION
    trainer = build_trainer(tmp_path, AutocastProbe())
    state = AllenNlpTrainerState(trainer)
    names = list(AllenNlpTrainerState.attributes())
    assert len(names) == len(set(names)) == 22
    assert [name for name in names if not hasattr(trainer, name)] == []
    assert state.pytorch_model is trainer.model and state.num_epochs == 2 and state.scaler is None
    state.batches_in_epoch_completed = 5
    assert trainer._batches_in_epoch_completed == 5


def test_a_missing_private_attribute_fails_on_its_name(tmp_path):
    state = AllenNlpTrainerState(torch.nn.Linear(1, 1))
    with pytest.raises(AttributeError, match="_epochs_completed"):
        _ = state.epochs_completed
