import pytest
import torch
from allennlp.common import Params
from allennlp.common.testing import ModelTestCase
from allennlp.modules.token_embedders import TokenEmbedder

from luke_allennlp.modeling import LukeEncoder
from luke_allennlp.modules.token_embedders import LukeEmbedder
from tests.conftest import FIXTURES

# Parameters that a words-only classifier using the CLS state never reaches.
UNUSED_IN_WORD_CLASSIFIER = {
    f"_text_field_embedder.token_embedder_tokens.luke.{name}"
    for name in ["pooler.dense.weight", "pooler.dense.bias"]
    + [
        f"entity_embeddings.{part}"
        for part in [
            "entity_embeddings.weight",
            "entity_embedding_dense.weight",
            "position_embeddings.weight",
            "token_type_embeddings.weight",
            "LayerNorm.weight",
            "LayerNorm.bias",
        ]
    ]
    + [
        f"encoder.layer.{i}.attention.self.{q}.{p}"
        for i in range(2)
        for q in ("w2e_query", "e2w_query", "e2e_query")
        for p in ("weight", "bias")
    ]
}


class TestLukeEmbedderInBasicClassifier(ModelTestCase):
    @pytest.fixture(autouse=True)
    def _model(self, tiny_luke_dir, monkeypatch):
        monkeypatch.setenv("MODEL_DIR", str(tiny_luke_dir))
        monkeypatch.setenv("DATA", str(FIXTURES / "data" / "sentiment.jsonl"))
        self.set_up_model(FIXTURES / "configs" / "luke_classifier.jsonnet", FIXTURES / "data" / "sentiment.jsonl")

    def test_train_save_and_load(self):
        self.ensure_model_can_train_save_and_load(self.param_file, gradients_to_ignore=UNUSED_IN_WORD_CLASSIFIER)

    def test_is_a_drop_in_word_encoder(self):
        embedder = self.model._text_field_embedder.token_embedder_tokens.eval()
        assert isinstance(embedder, LukeEmbedder)
        batch = self.dataset.as_tensor_dict()["tokens"]["tokens"]
        assert set(batch) == {"token_ids", "mask", "type_ids"}
        expected = embedder.luke(batch["token_ids"], attention_mask=batch["mask"]).last_hidden_state
        assert torch.equal(embedder(**batch), expected)


def entity_batch():
    return dict(
        token_ids=torch.tensor([[0, 31414, 232, 2], [0, 31414, 2, 1]]),
        mask=torch.tensor([[True, True, True, True], [True, True, True, False]]),
        entity_ids=torch.tensor([[3, 4], [5, 0]]),
        entity_position_ids=torch.tensor([[[1, 2], [2, -1]], [[1, -1], [-1, -1]]]),
        entity_attention_mask=torch.tensor([[1, 1], [1, 0]]),
    )


@pytest.mark.parametrize("output,shape", [("words", (2, 4, 32)), ("entities", (2, 2, 32)), ("pooled", (2, 32))])
def test_outputs(tiny_luke_dir, output, shape):
    embedder = TokenEmbedder.from_params(Params({"type": "luke", "model_name": str(tiny_luke_dir), "output": output}))
    embedder.eval()
    assert embedder.get_output_dim() == 32
    out = embedder(**entity_batch())
    assert out.shape == shape
    reference = LukeEncoder.from_pretrained(str(tiny_luke_dir)).eval()
    batch = entity_batch()
    expected = reference(batch.pop("token_ids"), attention_mask=batch.pop("mask"), **batch)
    field = {"words": "last_hidden_state", "entities": "entity_last_hidden_state", "pooled": "pooler_output"}[output]
    assert torch.allclose(out, getattr(expected, field), atol=1e-6)


def test_entities_output_needs_entity_inputs(tiny_luke_dir):
    embedder = LukeEmbedder(str(tiny_luke_dir), output="entities")
    with pytest.raises(ValueError, match="entity inputs"):
        embedder(token_ids=torch.tensor([[0, 2]]))


def test_config_options(tiny_luke_dir, tiny_roberta_dir):
    frozen = LukeEmbedder(str(tiny_luke_dir), train_parameters=False, use_entity_aware_attention=False)
    assert not any(p.requires_grad for p in frozen.parameters())
    assert not frozen.luke.config.use_entity_aware_attention
    from_roberta = LukeEmbedder(str(tiny_roberta_dir), entity_vocab_size=10, entity_emb_size=8)
    assert from_roberta.luke.entity_embeddings.entity_embeddings.weight.shape == (10, 8)
    compiled = LukeEmbedder(str(tiny_luke_dir), compile=True)
    assert list(compiled.state_dict()) == list(LukeEmbedder(str(tiny_luke_dir)).state_dict())  # names unchanged
    with pytest.raises(ValueError, match="output must be one of"):
        LukeEmbedder(str(tiny_luke_dir), output="both")
    with pytest.raises(ValueError, match="max_length"):
        LukeEmbedder(str(tiny_luke_dir))(
            token_ids=torch.tensor([[0, 2]]), segment_concat_mask=torch.tensor([[True, True]])
        )
