import json

import pytest
from allennlp.commands.train import train_model_from_file
from allennlp.common.testing import ModelTestCase
from allennlp.models.archival import load_archive
from allennlp.predictors import Predictor

from tests.conftest import REPO_ROOT, SAME_BATCHES, UNUSED_BY_ENTITY_HEADS, set_config_env

CONFIG = REPO_ROOT / "configs" / "relation_classification" / "tacred.jsonnet"


class TestLukeRelationClassifier(ModelTestCase):
    @pytest.fixture(autouse=True)
    def _model(self, tiny_luke_dir, tacred_train, monkeypatch):
        set_config_env(monkeypatch, tiny_luke_dir, tacred_train)
        self.set_up_model(CONFIG, tacred_train)

    def test_train_save_and_load(self):
        self.ensure_model_can_train_save_and_load(
            self.param_file,
            gradients_to_ignore=UNUSED_BY_ENTITY_HEADS,
            overrides=json.dumps({"trainer.optimizer.lr": 1e-3, **SAME_BATCHES}),
        )

    def test_outputs(self):
        output = self.model.make_output_human_readable(self.model(**self.dataset.as_tensor_dict()))
        labels = set(self.vocab.get_token_to_index_vocabulary("labels"))
        assert labels == {"no_relation", "org:city_of_headquarters"}
        for label, probabilities in zip(output["label"], output["probabilities"]):
            assert label == max(probabilities, key=probabilities.get)
            assert sum(probabilities.values()) == pytest.approx(1.0)
        assert set(self.model.get_metrics(reset=True)) == {"precision", "recall", "f1", "macro_f1"}


def test_predictor(tiny_luke_dir, tacred_train, tmp_path, monkeypatch):
    set_config_env(monkeypatch, tiny_luke_dir, tacred_train)
    train_model_from_file(str(CONFIG), str(tmp_path / "run"), overrides=json.dumps({"trainer.num_epochs": 1}))
    predictor = Predictor.from_archive(load_archive(str(tmp_path / "run" / "model.tar.gz")))
    by_text = predictor.predict_json(
        {"text": "Steve Jobs founded Apple in Cupertino .", "head": [19, 24], "tail": [0, 10]}
    )
    by_tokens = predictor.predict_json(
        {"tokens": ["Steve", "Jobs", "founded", "Apple", "in", "Cupertino", "."], "head": [3, 3], "tail": [0, 1]}
    )
    assert by_text == by_tokens  # the same input, given two ways
    assert by_text["label"] in by_text["probabilities"]
    with pytest.raises(ValueError, match="out of range"):
        predictor.predict_json({"tokens": ["a"], "head": [0, 0], "tail": [1, 2]})
    with pytest.raises(ValueError, match=r'"head" must be \[start, end\], two integers, not \[0\]'):
        predictor.predict_json({"text": "a b", "head": [0], "tail": [2, 3]})
    with pytest.raises(ValueError, match='"tokens" must be a list of strings, not a string'):
        predictor.predict_json({"tokens": "a b", "head": [0, 0], "tail": [1, 1]})
    with pytest.raises(ValueError, match="the head mention is empty"):
        predictor.predict_json({"text": "a b", "head": [1, 1], "tail": [2, 3]})
