import json

import pytest
from allennlp.commands.train import train_model_from_file
from allennlp.models.archival import load_archive
from allennlp.predictors import Predictor

from tests.conftest import REPO_ROOT

CONTEXT = (
    "Super Bowl 50 was an American football game. The Denver Broncos defeated the Carolina Panthers 24–10 "
    "at Levi's Stadium in Santa Clara, California."
)


@pytest.fixture(scope="module")
def predictor(tiny_luke_squad_dir, squad_slice, squad_mention_dictionary, tmp_path_factory):
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("MODEL_NAME", str(tiny_luke_squad_dir))
        mp.setenv("TRAIN_DATA_PATH", str(squad_slice))
        mp.setenv("VALIDATION_DATA_PATH", str(squad_slice))
        mp.setenv("MENTION_DICTIONARY", str(squad_mention_dictionary))
        out = tmp_path_factory.mktemp("squad")
        overrides = {
            "trainer.num_epochs": 1,
            "data_loader.batch_sampler.batch_size": 16,
            "dataset_reader.max_seq_length": 96,
        }
        train_model_from_file(
            str(REPO_ROOT / "configs/reading_comprehension/squad.jsonnet"), str(out), overrides=json.dumps(overrides)
        )
        return Predictor.from_archive(load_archive(str(out / "model.tar.gz")))


def test_predicts_an_answer_span_of_the_context(predictor):
    assert type(predictor).__name__ == "LukeSquadPredictor"  # the model's default predictor
    for inputs in (
        {"question": "Who won Super Bowl 50?", "context": CONTEXT},
        {"question": "Who won Super Bowl 50?", "context": CONTEXT, "title": "Super_Bowl_50", "id": "q"},
    ):
        result = predictor.predict_json(inputs)
        assert set(result) == {"answer", "start", "end", "score"}
        assert result["answer"] and result["answer"] == CONTEXT[result["start"] : result["end"]]
        assert isinstance(result["score"], float)
    # The title gives entity inputs from the mention dictionary; the reader sees the same text either way.
    with_title = predictor._json_to_instance({"question": "Who won?", "context": CONTEXT, "title": "Super_Bowl_50"})
    # Super Bowl, American football, Denver Broncos, Carolina Panthers, Santa Clara, California (not Levi's Stadium).
    assert with_title["entity_attention_mask"].tensor.sum() == 5
    with pytest.raises(ValueError, match='"question" and "context"'):
        predictor.predict_json({"question": "Who?"})
