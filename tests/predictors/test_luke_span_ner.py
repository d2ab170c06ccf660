import json

import pytest
from allennlp.commands.train import train_model_from_file
from allennlp.models.archival import load_archive
from allennlp.predictors import Predictor

from luke_allennlp.predictors.luke_span_ner import split_words
from tests.conftest import REPO_ROOT


@pytest.fixture(scope="module")
def predictor(tiny_luke_dir, conll_slice, tmp_path_factory):
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("MODEL_NAME", str(tiny_luke_dir))
        mp.setenv("TRAIN_DATA_PATH", str(conll_slice))
        mp.setenv("VALIDATION_DATA_PATH", str(conll_slice))
        out = tmp_path_factory.mktemp("ner")
        overrides = {"trainer.num_epochs": 1, "dataset_reader.max_seq_length": 64}
        train_model_from_file(str(REPO_ROOT / "configs/ner/conll2003.jsonnet"), str(out), overrides=json.dumps(overrides))
        return Predictor.from_archive(load_archive(str(out / "model.tar.gz")))


def test_split_words():
    assert split_words("U.S.-based Acme Corp. said: \"no\".") == ["U.S.-based", "Acme", "Corp", ".", "said", ":", '"', "no", '"', "."]


def test_predicts_raw_sentences_and_words(predictor):
    assert type(predictor).__name__ == "LukeSpanNerPredictor"  # the model's default predictor
    result = predictor.predict_json({"sentence": "Peter Blackburn visited Brussels ."})
    assert set(result) == {"words", "tags", "entities"}
    assert result["words"] == ["Peter", "Blackburn", "visited", "Brussels", "."]
    assert len(result["tags"]) == 5 and all(t == "O" or t[:2] in ("B-", "I-") for t in result["tags"])
    for entity in result["entities"]:
        assert set(entity) == {"start", "end", "type", "score"} and 0 < entity["score"] <= 1
        assert result["tags"][entity["start"]] == "B-" + entity["type"]
    with_context = predictor.predict_json(
        {"words": ["Brussels", "again"], "left_context": ["Peter went home ."], "right_context": [["Bye"]]}
    )
    assert with_context["words"] == ["Brussels", "again"] and len(with_context["tags"]) == 2
    with pytest.raises(ValueError, match="sentence"):
        predictor.predict_json({"text": "no"})
