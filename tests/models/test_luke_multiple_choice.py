import pytest
import torch
from allennlp.data import Batch
from allennlp.models.archival import load_archive
from allennlp.predictors import Predictor

from tests.conftest import REPO_ROOT
from tests.jglue import JAPANESE_CHECKPOINT, write_slice
from tests.model_cases import ConfigModelTestCase, train_archive
from tests.models.test_luke_sequence_classifier import NO_ENTITIES

CONFIG = REPO_ROOT / "configs" / "jglue" / "jcommonsenseqa.jsonnet"


class TestJCommonsenseQA(ConfigModelTestCase):
    CONFIG, CHECKPOINT = CONFIG, JAPANESE_CHECKPOINT

    def data(self, request, tmp_path):
        return write_slice("jcommonsenseqa_train", tmp_path, 8)

    def test_train_save_and_load(self):
        # The classifier's bias adds the same to every choice: the softmax over choices cancels it.
        self.train_save_and_load(NO_ENTITIES | {"classifier.bias"}, {"trainer.num_epochs": 1})

    def test_each_choice_is_scored_alone_by_the_transformers_head(self):
        model = self.model.eval()
        tensors = self.dataset.as_tensor_dict()
        output = model(**tensors)
        batch, choices, words = tensors["word_ids"].shape
        assert output["logits"].shape == (batch, choices) == (8, 5)
        with torch.no_grad():
            pooled = model.embedder.luke(
                tensors["word_ids"].view(-1, words), tensors["word_attention_mask"].view(-1, words)
            ).pooler_output  # padding beyond each choice's length is masked
        expected = model.classifier(pooled).view(batch, choices)
        assert torch.allclose(output["logits"], expected, atol=1e-5)
        readable = model.make_output_human_readable(output)
        assert readable["label"] == expected.argmax(-1).tolist()
        assert all(len(p) == 5 and sum(p) == pytest.approx(1.0) for p in readable["probabilities"])

    def test_questions_with_fewer_choices_pad_and_are_never_padding(self):
        from data_readers import LukeMultipleChoiceReader

        reader = LukeMultipleChoiceReader(str(self.model_dir))
        instances = [self.dataset.instances[0], reader.text_to_instance("猫は何を飲む？", ["牛乳", "石"], label=1)]
        batch = Batch(instances)
        batch.index_instances(self.vocab)
        output = self.model.eval()(**batch.as_tensor_dict())
        assert torch.isinf(output["logits"][1, 2:]).all() and torch.isfinite(output["loss"])
        readable = self.model.make_output_human_readable(output)
        assert len(readable["probabilities"][1]) == 2 and readable["label"][1] in (0, 1)

    def test_compiled_embedder_runs_encoder_and_head_as_one_graph(self, monkeypatch, caplog):
        """The embedder's `compile`: encoder, pooler and classifier are one graph per bucket; loss, logits and
        gradients those of the eager model."""
        batches = [self.instances[:3], self.instances[3:8]]
        graphs = self.assert_compiled_steps_are_eager_steps(monkeypatch, caplog, batches, "logits")
        assert all(" of the encoder and LukeMultipleChoice.pooled_scores, for " in g for g in graphs)


def test_predictor(request, tmp_path):
    data = write_slice("jcommonsenseqa_train", tmp_path, 8)
    archive = train_archive(
        CONFIG,
        request.getfixturevalue(JAPANESE_CHECKPOINT),
        data,
        tmp_path / "run",
        {"data_loader.batch_sampler.batch_size": 4},
    )
    predictor = Predictor.from_archive(load_archive(str(archive)))
    result = predictor.predict_json(
        {"id": "q", "question": "会社の最高責任者を何というか？", "choices": ["社長", "教師", "部長", "バイト", "部下"]}
    )
    assert set(result) == {"id", "label", "probabilities"} and result["id"] == "q" and len(result["probabilities"]) == 5
    assert result["label"] == max(range(5), key=result["probabilities"].__getitem__)
    with pytest.raises(ValueError, match=r'"choices" must be a list of strings, not a string'):
        predictor.predict_json({"question": "何？", "choices": "社長"})
    with pytest.raises(ValueError, match='needs "question" and "choices"'):
        predictor.predict_json({"question": "何？"})
