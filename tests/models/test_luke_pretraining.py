import json

import pytest
import torch
from allennlp.common.testing import ModelTestCase
from allennlp.data import Batch

from tests.conftest import REPO_ROOT

CONFIG = REPO_ROOT / "configs" / "pretraining" / "luke_base.jsonnet"
# A few CPU steps in one process, on the test corpus (the configs are for 8 GPUs and 200K steps).
TINY = {
    "distributed": None, "trainer.num_gradient_accumulation_steps": 1,
    "data_loader.batch_size": 8, "data_loader.batches_per_epoch": 3, "data_loader.num_workers": 0,
    "trainer.num_epochs": 1, "trainer.learning_rate_scheduler.warmup_steps": 1,
}  # fmt: skip


def set_env(monkeypatch, model_dir, corpus):
    monkeypatch.setenv("MODEL_NAME", str(model_dir))
    monkeypatch.setenv("CORPUS", str(corpus))


class TestLukePretraining(ModelTestCase):
    @pytest.fixture(autouse=True)
    def _model(self, tiny_roberta_mlm_dir, pretraining_corpus, monkeypatch):
        set_env(monkeypatch, tiny_roberta_mlm_dir, pretraining_corpus)
        self.corpus = pretraining_corpus
        self.set_up_model(CONFIG, pretraining_corpus)

    def test_train_save_and_load(self):
        # Saved and loaded models are compared on the same batch, so masks must not change between the reads.
        overrides = {**TINY, "validation_data_path": str(self.corpus), "dataset_reader.dynamic_masking": False}
        self.ensure_model_can_train_save_and_load(self.param_file, overrides=json.dumps(overrides))

    def test_model_batch_norm_verification(self):
        """allennlp's check flags exactly the heads' dense -> gelu -> layer norm (BERT's design), since it cannot see
        the functional gelu; nothing else."""
        from allennlp.confidence_checks.normalization_bias_verification import NormalizationBiasVerification

        verification = NormalizationBiasVerification(self.model)
        verification.check(inputs=self.dataset.as_tensor_dict())
        assert sorted(pair[:2] for pair in verification.detected_pairs) == [
            ("pretraining.entity_predictions.transform.dense", "pretraining.entity_predictions.transform.LayerNorm"),
            ("pretraining.lm_head.dense", "pretraining.lm_head.layer_norm"),
        ]

    def test_outputs_and_metrics(self):
        batch = Batch(self.instances[:8])
        batch.index_instances(self.vocab)
        output = self.model(**batch.as_tensor_dict())
        assert set(output) == {"loss", "masked_lm_loss", "masked_entity_loss"}
        assert torch.allclose(output["loss"], output["masked_lm_loss"] + output["masked_entity_loss"])
        metrics = self.model.get_metrics(reset=True)
        assert set(metrics) == {
            "masked_lm_accuracy",
            "masked_lm_perplexity",
            "masked_entity_accuracy",
            "masked_entity_perplexity",
        }
        assert all(isinstance(v, float) for v in metrics.values())
        # A random model: perplexity near the vocabulary sizes (50,265 words, 60 entities).
        assert 10_000 < metrics["masked_lm_perplexity"] < 200_000 and 20 < metrics["masked_entity_perplexity"] < 200
        assert abs(metrics["masked_entity_perplexity"] - torch.exp(output["masked_entity_loss"]).item()) < 1e-3
        assert self.model.get_metrics() == dict.fromkeys(metrics, 0.0)  # reset

    def test_batch_without_entities_keeps_the_entity_side_in_the_graph(self):
        batch = Batch(self.instances[:2])
        batch.index_instances(self.vocab)
        tensors = batch.as_tensor_dict()
        for key in ("entity_ids", "entity_attention_mask", "masked_entity_labels"):
            tensors[key] = tensors[key][:, :0]
        tensors["entity_position_ids"] = tensors["entity_position_ids"][:, :0]
        output = self.model(**tensors)
        assert output["masked_entity_loss"].item() == 0.0
        output["loss"].backward()
        entity_side = self.model.pretraining.luke.entity_embeddings.entity_embeddings.weight
        assert entity_side.grad is not None and self.model.pretraining.entity_predictions.bias.grad is not None


def test_needs_the_entity_vocabulary_of_a_new_entity_side(tiny_roberta_mlm_dir, pretraining_corpus):
    from allennlp.data import Vocabulary

    from luke_allennlp.models import LukePretraining

    with pytest.raises(ValueError, match="entity_vocab"):
        LukePretraining(Vocabulary.empty(), str(tiny_roberta_mlm_dir))
    model = LukePretraining(Vocabulary.empty(), str(tiny_roberta_mlm_dir), entity_vocab=str(pretraining_corpus))
    assert model.pretraining.config.entity_vocab_size == 60
    with pytest.raises(ValueError, match="entity_vocab_size 7 != the 60 entities"):
        LukePretraining(
            Vocabulary.empty(), str(tiny_roberta_mlm_dir), entity_vocab=str(pretraining_corpus), entity_vocab_size=7
        )
