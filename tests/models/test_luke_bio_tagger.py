import json

import pytest
import torch
from allennlp.common import Params

from luke_allennlp.data.tags import tags_to_spans
from tests.conftest import REPO_ROOT, set_config_env
from tests.model_cases import ConfigModelTestCase

CONFIG = REPO_ROOT / "configs" / "ner" / "conll2003_bio_crf.jsonnet"


class TestLukeBioTagger(ConfigModelTestCase):
    CONFIG, CHECKPOINT, DATA = CONFIG, "tiny_roberta_dir", "conll_slice"

    def test_train_save_and_load(self):
        self.train_save_and_load(
            {"embedder.transformer_model.pooler.dense.weight", "embedder.transformer_model.pooler.dense.bias"},
            {"dataset_reader.max_seq_length": 64},
        )

    def test_tag_set_and_outputs(self):
        assert self.model.tags == ["O", "B-LOC", "I-LOC", "B-MISC", "I-MISC", "B-ORG", "I-ORG", "B-PER", "I-PER"]
        output = self.model(**self.dataset.as_tensor_dict())
        # Word positions: each word's first subword, from the one-word spans.
        assert output["mask"].sum(1).tolist() == [len(i["metadata"]["words"]) for i in self.instances]
        readable = self.model.make_output_human_readable(output)
        for words, tags, entities in zip(readable["words"], readable["tags"], readable["entities"]):
            assert len(tags) == len(words)
            assert {(e["start"], e["end"]): e["type"] for e in entities} == tags_to_spans(tags, "iob2")
            # The CRF only allows valid BIO sequences: no I-X after O or after another type.
            for previous, tag in zip(["O"] + tags, tags):
                assert not tag.startswith("I-") or previous[2:] == tag[2:]
        assert torch.isfinite(output["loss"])

    def test_decoding_without_crf(self):
        """Without the CRF, each word's tag is its best one."""
        self.model.crf = None
        self.model.eval()
        output = self.model(**self.dataset.as_tensor_dict())
        readable = self.model.make_output_human_readable(output)
        best = output["logits"].argmax(-1)
        for b, tags in enumerate(readable["tags"]):
            assert len(tags) == int(output["mask"][b].sum()) == len(self.instances[b]["metadata"]["words"])
            assert tags == [self.model.tags[i] for i in best[b, : len(tags)].tolist()]

    def test_metadata_on_another_device(self):
        """As `luke_span_ner`'s: the model reads nothing of metadata that the trainer moves to the GPU (the meta
        device stands in for it)."""
        expected, readable = self.readable_with_metadata_moved()
        assert readable["tags"] == expected["tags"] and readable["entities"] == expected["entities"]


class TestLukeBioTaggerOnLuke(ConfigModelTestCase):
    """The tagger over a `luke` embedder (on the words alone), the config's embedder replaced; inputs of at most 64
    subwords (one word bucket); with the cross-entropy loss (`USE_CRF` False)."""

    CONFIG, DATA = CONFIG, "conll_slice"
    USE_CRF = False

    @pytest.fixture(autouse=True)
    def _model(self, request, tmp_path, monkeypatch):
        data = request.getfixturevalue(self.DATA)
        self.model_dir = request.getfixturevalue(self.CHECKPOINT)
        set_config_env(monkeypatch, self.model_dir, data)
        overrides = {
            "model.embedder": {"type": "luke", "model_name": str(self.model_dir)},
            "model.use_crf": self.USE_CRF,
            "dataset_reader.max_seq_length": 64,
        }
        Params.from_file(str(CONFIG), json.dumps(overrides)).to_file(str(tmp_path / "bio_luke.json"))
        self.set_up_model(tmp_path / "bio_luke.json", data)

    def test_compiled_embedder_runs_encoder_head_and_loss_as_one_graph(self, monkeypatch, caplog):
        """The embedder's `compile`: encoder, tagger and loss are one graph per bucket (the words padded as the
        subwords), a batch of one sentence included; loss, logits and gradients those of the eager model."""
        batches = [self.instances[:4], self.instances[2:3]]
        graphs = self.assert_compiled_steps_are_eager_steps(monkeypatch, caplog, batches, "logits")
        assert graphs == ["torch.compile: graph 1 of the encoder and LukeBioTagger.tag, for 64 words, no entities"]


@pytest.mark.slow  # ~38 s on the loaded 2-core machine (the CRF's 64 steps traced forward and backward); 8 s without it
class TestLukeBioTaggerCrfOnLuke(TestLukeBioTaggerOnLuke):
    """As above with the CRF's loss in the graph (the config's)."""

    USE_CRF = True
