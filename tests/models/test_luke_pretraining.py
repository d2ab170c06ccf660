import json
import logging

import pytest
import torch
from allennlp.common import Params
from allennlp.common.testing import ModelTestCase
from allennlp.data import Batch
from allennlp.models import Model

from luke_allennlp.modeling import static_shapes
from tests.conftest import REPO_ROOT

CONFIG = REPO_ROOT / "configs" / "pretraining" / "luke_base.jsonnet"
# A few CPU steps in one process, on the test corpus (the configs are for 8 GPUs and 200K steps).
TINY = {
    "distributed": None,
    "trainer.num_gradient_accumulation_steps": 1,
    "data_loader.batch_size": 8,
    "data_loader.batches_per_epoch": 3,
    "data_loader.num_workers": 0,
    "trainer.num_epochs": 1,
    "trainer.learning_rate_scheduler.warmup_steps": 1,
}


def set_env(monkeypatch, model_dir, corpus):
    monkeypatch.setenv("MODEL_NAME", str(model_dir))
    monkeypatch.setenv("CORPUS", str(corpus))


class TestLukePretraining(ModelTestCase):
    @pytest.fixture(autouse=True)
    def _model(self, tiny_roberta_mlm_dir, pretraining_corpus, monkeypatch):
        set_env(monkeypatch, tiny_roberta_mlm_dir, pretraining_corpus)
        self.corpus = pretraining_corpus
        # The config's reader is endless (for its data loader's batches_per_epoch): ModelTestCase reads the whole
        # dataset into a list, where it reads one pass.
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

    def test_compile_runs_the_whole_model_on_the_readers_batches(self, monkeypatch, caplog):
        """`compile: true` with the config's `masked_positions`: the whole model (encoder, heads, loss) is one
        compiled graph, with the eager model's loss and metrics. (dynamo's `aot_eager` stands for inductor.)"""
        compile_ = torch.compile
        monkeypatch.setattr(
            static_shapes.torch, "compile", lambda f, **_: compile_(f, dynamic=False, backend="aot_eager")
        )
        model_params = Params.from_file(str(self.param_file)).pop("model")
        model_params["compile"] = True
        compiled = Model.from_params(vocab=self.vocab, params=model_params)
        compiled.load_state_dict(self.model.state_dict())
        batch = Batch(self.instances[:4])
        batch.index_instances(self.vocab)
        tensors = batch.as_tensor_dict()
        assert tensors["masked_lm_positions"] is not None  # the config's reader gives them
        self.model.eval(), compiled.eval()
        caplog.set_level(logging.INFO, logger="luke_allennlp.modeling.static_shapes")
        with torch.no_grad():
            expected, actual = self.model(**tensors), compiled(**tensors)
        assert abs(expected["loss"].item() - actual["loss"].item()) < 1e-5
        assert compiled.get_metrics(reset=True) == pytest.approx(self.model.get_metrics(reset=True), abs=1e-5)
        assert [r.getMessage() for r in caplog.records if "graph" in r.getMessage()] == [
            "torch.compile: graph 1 of the pretraining model, for 128 words, 32 entities, no grad"
        ]

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


def test_stage1_trains_what_the_checkpoint_has_no_weights_for(
    tiny_roberta_dir, tiny_roberta_mlm_dir, pretraining_corpus, caplog
):
    """Stage 1 freezes the word side the checkpoint gives; an MLM head it lacks (RobertaModel) is trained."""
    from allennlp.data import Vocabulary

    from luke_allennlp.models import LukePretraining

    def trainable(model_dir):
        model = LukePretraining(
            Vocabulary.empty(), str(model_dir), entity_vocab=str(pretraining_corpus), freeze_checkpoint_weights=True
        )
        return {name for name, p in model.pretraining.named_parameters() if p.requires_grad}

    entity_side = {
        "luke.entity_embeddings.entity_embeddings.weight",
        "entity_predictions.bias",
        "entity_predictions.transform.dense.weight",
    }
    head = {
        "lm_head.dense.weight",
        "lm_head.dense.bias",
        "lm_head.layer_norm.weight",
        "lm_head.layer_norm.bias",
        "lm_head.bias",
    }
    with_head = trainable(tiny_roberta_mlm_dir)
    assert entity_side <= with_head and not head & with_head  # RobertaForMaskedLM's head is frozen
    assert not any(n.startswith(("luke.embeddings.", "luke.encoder.")) for n in with_head)
    caplog.clear()
    without_head = trainable(tiny_roberta_dir)
    assert entity_side | head <= without_head  # RobertaModel has none: trained, not left random
    assert not any(n.startswith(("luke.embeddings.", "luke.encoder.")) for n in without_head)
    assert "has no weights for" in caplog.text and "lm_head.dense.weight" in caplog.text
    # Rebuilt from an archive (load_weights false), nothing comes from the checkpoint: nothing is frozen but the
    # pooler, which pretraining does not use.
    model = LukePretraining(
        Vocabulary.empty(),
        str(tiny_roberta_dir),
        entity_vocab=str(pretraining_corpus),
        freeze_checkpoint_weights=True,
        load_weights=False,
    )
    assert [n for n, p in model.pretraining.named_parameters() if not p.requires_grad] == [
        "luke.pooler.dense.weight",
        "luke.pooler.dense.bias",
    ]


def test_stage1_from_a_checkpoint_without_mlm_head_learns_masked_words(
    tiny_roberta_dir, pretraining_corpus, tmp_path, monkeypatch
):
    from allennlp.commands.train import train_model_from_file

    set_env(monkeypatch, tiny_roberta_dir, pretraining_corpus)
    overrides = {**TINY, "trainer.optimizer.lr": 1e-2, "trainer.num_epochs": 2}
    stage1 = REPO_ROOT / "configs" / "pretraining" / "luke_base_stage1.jsonnet"
    train_model_from_file(str(stage1), str(tmp_path / "run"), overrides=json.dumps(overrides))
    first = torch.load(tmp_path / "run" / "model_state_e1_b0.th", weights_only=True)
    last = torch.load(tmp_path / "run" / "model_state_e2_b0.th", weights_only=True)
    # The MLM head, random here, learns (the optimizer froze it before: masked-LM accuracy stayed 0.0); RoBERTa's
    # layers stay as they were.
    assert not torch.equal(first["pretraining.lm_head.dense.weight"], last["pretraining.lm_head.dense.weight"])
    assert torch.equal(
        first["pretraining.luke.encoder.layer.0.attention.self.query.weight"],
        last["pretraining.luke.encoder.layer.0.attention.self.query.weight"],
    )
