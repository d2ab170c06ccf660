import json

import pytest
import torch
from allennlp.common.testing import ModelTestCase

from luke_allennlp.data.tags import tags_to_spans
from tests.conftest import REPO_ROOT, SAME_BATCHES, set_config_env

CONFIG = REPO_ROOT / "configs" / "ner" / "conll2003_bio_crf.jsonnet"


class TestLukeBioTagger(ModelTestCase):
    @pytest.fixture(autouse=True)
    def _model(self, tiny_roberta_dir, conll_slice, monkeypatch):
        set_config_env(monkeypatch, tiny_roberta_dir, conll_slice)
        self.set_up_model(CONFIG, conll_slice)

    def test_train_save_and_load(self):
        self.ensure_model_can_train_save_and_load(
            self.param_file,
            gradients_to_ignore={
                "embedder.transformer_model.pooler.dense.weight",
                "embedder.transformer_model.pooler.dense.bias",
            },
            overrides=json.dumps({"trainer.optimizer.lr": 1e-3, "dataset_reader.max_seq_length": 64, **SAME_BATCHES}),
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
