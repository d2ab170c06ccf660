import pytest
from allennlp.models.archival import load_archive
from allennlp.predictors import Predictor

from tests.conftest import REPO_ROOT, UNUSED_BY_ENTITY_HEADS
from tests.model_cases import ConfigModelTestCase, train_archive

CONFIG = REPO_ROOT / "configs" / "entity_typing" / "open_entity.jsonnet"


class TestLukeEntityTyping(ConfigModelTestCase):
    CONFIG, DATA = CONFIG, "open_entity_slice"

    def test_train_save_and_load(self):
        self.train_save_and_load(UNUSED_BY_ENTITY_HEADS)

    def test_outputs(self):
        output = self.model.make_output_human_readable(self.model(**self.dataset.as_tensor_dict()))
        types = set(self.vocab.get_token_to_index_vocabulary("labels"))
        for labels, probabilities in zip(output["labels"], output["probabilities"]):
            assert set(probabilities) == types and set(labels) <= types
            assert all((probabilities[t] > 0.5) == (t in labels) for t in types)
        metrics = self.model.get_metrics(reset=True)
        assert set(metrics) == {"precision", "recall", "f1"}

    def test_compiled_embedder_runs_encoder_head_and_loss_as_one_graph(self, monkeypatch, caplog):
        """The embedder's `compile`: encoder, head and loss are one graph per bucket, a batch of one example
        included (run as two copies of it); loss, logits and gradients those of the eager model."""
        batches = [self.instances[:4], self.instances[4:5], self.instances[5:11]]
        graphs = self.assert_compiled_steps_are_eager_steps(monkeypatch, caplog, batches, "logits")
        assert all(" of the encoder and LukeEntityTyping.score, for " in g for g in graphs)


def test_predictor(tiny_luke_dir, open_entity_slice, tmp_path):
    predictor = Predictor.from_archive(
        load_archive(str(train_archive(CONFIG, tiny_luke_dir, open_entity_slice, tmp_path)))
    )
    result = predictor.predict_json(
        {"sentence": "Web users can locate its address using Google Maps .", "span": [0, 9]}
    )
    assert set(result) == {"labels", "probabilities"} and "person" in result["probabilities"]
    with pytest.raises(ValueError, match="span"):
        predictor.predict_json({"sentence": "no span"})
    with pytest.raises(ValueError, match=r'q1: "span" must be \[start, end\], two integers, not \[0\]'):
        predictor.predict_json({"id": "q1", "sentence": "Google Maps", "span": [0]})
    with pytest.raises(ValueError, match="field 'sentence' should be str, not list"):
        predictor.predict_json({"sentence": ["Google", "Maps"], "span": [0, 6]})
    # The same outputs one by one and in a batch (up to padding's rounding).
    inputs = [{"sentence": "Google Maps", "span": [0, 6]}, {"sentence": "Paris is big .", "span": [0, 5]}]
    for batched, alone in zip(predictor.predict_batch_json(inputs), map(predictor.predict_json, inputs)):
        assert set(batched) == {"labels", "probabilities"} and batched["probabilities"] == pytest.approx(
            alone["probabilities"]
        )
