from typing import List, Tuple

import numpy as np
import pytest
import torch

from data_readers.luke_conll2003 import SpanLayout
from luke_allennlp.models.luke_span_ner import decode_batch, decode_spans
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

    def test_the_metric_scores_the_decoded_spans(self):
        """forward's metric is that of the spans `make_output_human_readable` gives."""
        self.model.eval()
        batch = self.dataset.as_tensor_dict()
        self.model.get_metrics(reset=True)
        with torch.no_grad():
            readable = self.model.make_output_human_readable(self.model(**batch))
        metrics = self.model.get_metrics(reset=True)
        predicted = {(k, e["start"], e["end"], e["type"]) for k, es in enumerate(readable["entities"]) for e in es}
        gold = {(k, s, e, t) for k, i in enumerate(self.instances) for (s, e), t in i["metadata"]["gold_spans"].items()}
        assert predicted, "the tiny model predicts no entity: nothing compared"
        right = len(predicted & gold)
        assert metrics["precision"] == pytest.approx(right / len(predicted))
        assert metrics["recall"] == pytest.approx(right / len(gold))

    def test_metadata_on_another_device(self):
        """The trainer moves every tensor of a batch to the GPU, metadata included: the model reads nothing of
        metadata that moves. (The meta device stands in for a GPU: `.numpy()` or reading a value of a tensor moved
        there fails.)"""
        expected, readable = self.readable_with_metadata_moved()
        assert readable["entities"] == expected["entities"] and readable["tags"] == expected["tags"]
        assert readable["gold_tags"] == expected["gold_tags"]

    def test_compiled_embedder_runs_encoder_head_and_loss_as_one_graph(self, monkeypatch, caplog):
        """The embedder's `compile`: encoder, span head and loss are one graph per bucket (no graph break, no
        recompile), a batch of one sentence included; loss, span logits and gradients those of the eager model."""
        batches = [self.instances[:4], self.instances[4:12], self.instances[2:3], self.instances[12:14]]
        graphs = self.assert_compiled_steps_are_eager_steps(monkeypatch, caplog, batches, "span_logits")
        assert all(" of the encoder and LukeSpanNer.score, for 512 words, " in g for g in graphs)  # (document context)


def test_decoding_takes_spans_by_logit_without_overlap():
    labels = ["O", "PER", "LOC"]
    spans = np.array([[0, 1], [0, 2], [1, 2], [2, 3], [3, 4]])
    logits = torch.tensor(
        [
            [0.0, 3.0, 0.0],  # (0,1) PER, 3.0
            [0.0, 5.0, 0.0],  # (0,2) PER, 5.0: best, taken first
            [0.0, 0.0, 4.0],  # (1,2) LOC, overlaps (0,2): skipped
            [9.0, 1.0, 0.0],  # (2,3) O: dropped
            [0.0, 0.0, 2.0],
        ]  # (3,4) LOC
    )
    chosen = decode_spans(spans, logits, labels, outside=0)
    assert [(s, e, k) for s, e, k, _ in chosen] == [(0, 2, "PER"), (3, 4, "LOC")]
    assert chosen[0][3] == pytest.approx(torch.softmax(logits[1], -1)[1].item())


def reference_decode_spans(
    spans: np.ndarray, logits: torch.Tensor, labels: List[str], outside: int
) -> List[Tuple[int, int, str, float]]:
    """`decode_spans` as it was: every span, in descending logit order, one tensor element at a time. (Its sort was
    torch's unstable one, which orders tied logits as it likes; `stable=True` makes the first span win a tie.)"""
    best_logit, best = logits.max(-1)  # (spans,)
    probability = logits.softmax(-1).gather(-1, best[:, None])[:, 0]
    chosen: List[Tuple[int, int, str, float]] = []
    taken = np.zeros(int(spans[:, 1].max()) if len(spans) else 0, dtype=bool)
    for i in torch.argsort(best_logit, descending=True, stable=True).tolist():
        if best[i] == outside:
            continue
        start, end = int(spans[i, 0]), int(spans[i, 1])
        if not taken[start:end].any():
            taken[start:end] = True
            chosen.append((start, end, labels[best[i]], float(probability[i])))
    return sorted(chosen)


@pytest.mark.parametrize("outside", [0, 4])
def test_decoding_is_the_reference_decoding(outside):
    """On the span layouts of sentences of 0 to 60 words (spans of up to 16 words) and many random logits: normal
    ones with `O` raised by 0 to 6 (from most spans to almost none predicted as entities), small integers and
    bfloat16-rounded ones (tied logits, tied maxima within a span's row), and rows all `O`."""
    labels = ["O", "PER", "ORG", "LOC", "MISC"]
    labels[0], labels[outside] = labels[outside], labels[0]
    generator = torch.Generator().manual_seed(0)
    cases = 0
    for words in list(range(0, 41, 2)) + [60]:
        spans = SpanLayout(words, 16, 128).spans
        n = len(spans)
        for trial in range(12):
            kind = trial % 6
            if kind in (0, 1, 2):
                logits = torch.randn(n, len(labels), generator=generator)
                logits[:, outside] += 3.0 * kind
            elif kind == 3:
                logits = torch.randint(0, 3, (n, len(labels)), generator=generator).float()
            elif kind == 4:
                logits = torch.randn(n, len(labels), generator=generator).bfloat16().float() * 0.25
            else:
                logits = torch.randn(n, len(labels), generator=generator)
                logits[:, outside] = 10.0  # all O
            expected = reference_decode_spans(spans, logits, labels, outside)
            decoded = decode_spans(spans, logits, labels, outside)
            assert [d[:3] for d in decoded] == [e[:3] for e in expected], (words, trial)
            assert [d[3] for d in decoded] == pytest.approx([e[3] for e in expected], rel=1e-6), (words, trial)
            if kind == 5:
                assert expected == []
            cases += bool(expected)
    assert cases > 150  # most cases decode something


def test_decoding_of_ties_takes_the_first_span():
    labels = ["O", "PER"]
    spans = np.array([[0, 1], [0, 2], [1, 2], [2, 3]])
    logits = torch.tensor([[0.0, 1.0]] * 4)  # all tied: (0,1) first, then (1,2) and (2,3)
    assert [(s, e) for s, e, *_ in decode_spans(spans, logits, labels, 0)] == [(0, 1), (1, 2), (2, 3)]
    assert decode_spans(np.zeros((0, 2), dtype=np.int64), torch.zeros(0, 2), labels, 0) == []


def test_batch_decoding_is_each_sentence_decoded():
    """`decode_batch` over a padded batch (the model's span logits: zeros past a sentence's spans, bfloat16 on a
    GPU) gives each sentence's `decode_spans`."""
    labels = ["O", "PER", "ORG", "LOC", "MISC"]
    generator = torch.Generator().manual_seed(1)
    spans = [SpanLayout(words, 16, 128).spans for words in (3, 0, 25, 17, 1, 40)]
    width = -(-max(map(len, spans)) // 128) * 128
    logits = torch.zeros(len(spans), width, len(labels))
    for b, s in enumerate(spans):
        logits[b, : len(s)] = torch.randn(len(s), len(labels), generator=generator)
        logits[b, : len(s), 0] += b % 3
    logits = logits.bfloat16()
    decoded = decode_batch(spans, logits, labels, 0)
    expected = [decode_spans(s, logits[b, : len(s)].float(), labels, 0) for b, s in enumerate(spans)]
    assert [[d[:3] for d in row] for row in decoded] == [[e[:3] for e in row] for row in expected]
    flat = [d[3] for row in decoded for d in row]
    assert flat == pytest.approx([e[3] for row in expected for e in row], rel=1e-6)
    assert sum(map(len, decoded)) > 10
