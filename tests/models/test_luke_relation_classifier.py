import pytest
from allennlp.models.archival import load_archive
from allennlp.predictors import Predictor

from tests.conftest import REPO_ROOT, UNUSED_BY_ENTITY_HEADS
from tests.model_cases import ConfigModelTestCase, train_archive

CONFIG = REPO_ROOT / "configs" / "relation_classification" / "tacred.jsonnet"


class TestLukeRelationClassifier(ConfigModelTestCase):
    CONFIG, DATA = CONFIG, "tacred_train"

    def test_train_save_and_load(self):
        self.train_save_and_load(UNUSED_BY_ENTITY_HEADS)

    def test_outputs(self):
        output = self.model.make_output_human_readable(self.model(**self.dataset.as_tensor_dict()))
        labels = set(self.vocab.get_token_to_index_vocabulary("labels"))
        assert labels == {"no_relation", "org:city_of_headquarters"}
        for label, probabilities in zip(output["label"], output["probabilities"]):
            assert label == max(probabilities, key=probabilities.get)
            assert sum(probabilities.values()) == pytest.approx(1.0)
        assert set(self.model.get_metrics(reset=True)) == {"precision", "recall", "f1", "macro_f1"}

    def test_compiled_embedder_runs_encoder_head_and_loss_as_one_graph(self, monkeypatch, caplog):
        """The embedder's `compile`: encoder, head and loss are one graph per bucket, a batch of one example
        included (run as two copies of it); loss, logits and gradients those of the eager model."""
        batches = [self.instances[:4], self.instances[4:5], self.instances[5:11]]
        graphs = self.assert_compiled_steps_are_eager_steps(monkeypatch, caplog, batches, "logits")
        assert all(" of the encoder and LukeRelationClassifier.score, for " in g for g in graphs)


def test_predictor(tiny_luke_dir, tacred_train, tmp_path):
    predictor = Predictor.from_archive(load_archive(str(train_archive(CONFIG, tiny_luke_dir, tacred_train, tmp_path))))
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
