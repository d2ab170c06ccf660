import copy

import numpy as np
import pytest
import torch
from allennlp.nn.util import move_to_device

from luke_allennlp.models.luke_span_ner import decode_spans
from tests.conftest import REPO_ROOT
from tests.model_cases import ConfigModelTestCase

NER_CONFIG = REPO_ROOT / "configs" / "ner" / "conll2003.jsonnet"
SMALL = {"data_loader.batch_sampler.batch_size": 4, "dataset_reader.max_seq_length": 64}


class TestLukeSpanNer(ConfigModelTestCase):
    CONFIG, DATA = NER_CONFIG, "conll_slice"

    def test_train_save_and_load(self):
        self.train_save_and_load({"embedder.luke.pooler.dense.weight", "embedder.luke.pooler.dense.bias"}, SMALL)

    def test_outputs_one_prediction_per_sentence(self):
        batch = self.dataset.as_tensor_dict()
        output = self.model(**batch)
        readable = self.model.make_output_human_readable(output)
        assert len(readable["words"]) == len(self.instances)
        for words, tags, gold, entities in zip(
            readable["words"], readable["tags"], readable["gold_tags"], readable["entities"]
        ):
            assert len(tags) == len(words) == len(gold)
            for e in entities:
                assert 0 <= e["start"] < e["end"] <= len(words) and e["type"] in ("PER", "ORG", "LOC", "MISC")
                assert tags[e["start"]] == "B-" + e["type"]
        metrics = self.model.get_metrics(reset=True)
        assert set(metrics) >= {"precision", "recall", "f1"}

    def test_metadata_on_another_device(self):
        """The trainer moves every tensor of a batch to the GPU, metadata included: the model reads nothing of
        metadata that moves. (The meta device stands in for a GPU: `.numpy()` or reading a value of a tensor moved
        there fails.)"""
        self.model.eval()
        batch = self.dataset.as_tensor_dict()
        expected = self.model.make_output_human_readable(self.model(**batch))
        batch["metadata"] = move_to_device(copy.deepcopy(batch["metadata"]), torch.device("meta"))
        readable = self.model.make_output_human_readable(self.model(**batch))
        assert readable["entities"] == expected["entities"] and readable["tags"] == expected["tags"]
        assert readable["gold_tags"] == expected["gold_tags"]


def test_decoding_takes_spans_by_logit_without_overlap():
    labels = ["O", "PER", "LOC"]
    spans = np.array([[0, 1], [0, 2], [1, 2], [2, 3], [3, 4]])
    logits = torch.tensor(
        [[0.0, 3.0, 0.0],  # (0,1) PER, 3.0
         [0.0, 5.0, 0.0],  # (0,2) PER, 5.0: best, taken first
         [0.0, 0.0, 4.0],  # (1,2) LOC, overlaps (0,2): skipped
         [9.0, 1.0, 0.0],  # (2,3) O: dropped
         [0.0, 0.0, 2.0]]  # (3,4) LOC
    )  # fmt: skip
    chosen = decode_spans(spans, logits, labels, outside=0)
    assert [(s, e, k) for s, e, k, _ in chosen] == [(0, 2, "PER"), (3, 4, "LOC")]
    assert chosen[0][3] == pytest.approx(torch.softmax(logits[1], -1)[1].item())
