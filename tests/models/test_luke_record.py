import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F
from allennlp.data import Batch

from luke_allennlp.training.metrics import SquadEmAndF1
from luke_allennlp.training.metrics.squad_em_and_f1 import exact_match_score, f1_score, max_over_golds
from tests.conftest import REPO_ROOT, UNUSED_BY_ENTITY_HEADS, set_config_env
from tests.model_cases import ConfigModelTestCase, train_archive

CONFIG = REPO_ROOT / "configs" / "reading_comprehension" / "record.jsonnet"
# Short windows, so that each sample passage is split into several.
SMALL = {"dataset_reader.max_seq_length": 64, "dataset_reader.doc_stride": 32}


class TestLukeRecord(ConfigModelTestCase):
    CONFIG, DATA = CONFIG, "record_sample"

    def test_train_save_and_load(self):
        self.train_save_and_load(UNUSED_BY_ENTITY_HEADS, SMALL)

    def test_candidate_score_is_the_best_mention_over_windows(self, tiny_luke_dir, record_sample):
        """Stacked windows give the same scores as scoring each window alone; the loss is the mean BCE over
        the candidates, each scored by its best mention, and the answer is the best candidate."""
        from data_readers.luke_record import LukeRecordReader

        reader = LukeRecordReader(str(tiny_luke_dir), max_seq_length=64, doc_stride=32)
        instances = list(reader.read(str(record_sample)))
        assert all(i["word_ids"].tensor.size(0) > 1 for i in instances)  # several windows each
        self.model.eval()
        batch = Batch(instances)
        batch.index_instances(self.vocab)
        tensors = batch.as_tensor_dict()
        output = self.model(**tensors)
        readable = self.model.make_output_human_readable(output)

        all_logits, all_gold = [], []
        for q, instance in enumerate(instances):
            candidates = instance["metadata"]["candidates"]
            best = torch.full((len(candidates),), float("-inf"))
            for w in range(instance["word_ids"].tensor.size(0)):
                one = {
                    k: (v[q : q + 1, w : w + 1] if isinstance(v, torch.Tensor) and v.dim() == 3 else v)
                    for k, v in tensors.items()
                }
                one["labels"], one["metadata"] = tensors["labels"][q : q + 1], [instance["metadata"].metadata]
                mentions = one["entity_candidates"][0, 0, 1:]
                mentions = mentions[mentions >= 0]
                if len(mentions) == 0:
                    continue
                scores = self.model(**one)["candidate_scores"][0]
                # A window alone: its candidate scores are its mentions' logits (max over repeated mentions).
                features = self._mention_logits(one)
                assert torch.allclose(
                    scores[mentions], torch.stack([features[mentions == c].max() for c in mentions]), atol=1e-6
                )
                best = torch.maximum(best, scores[: len(candidates)])
            scored = torch.isfinite(best)
            all_logits.append(best[scored])
            all_gold.append(tensors["labels"][q, : len(candidates)][scored].float())
            assert torch.allclose(output["candidate_scores"][q, : len(candidates)], best, atol=1e-6)
            top = int(best.argmax())
            assert readable["answer"][q] == candidates[top]
            assert readable["score"][q] == pytest.approx(torch.sigmoid(best[top]).item(), abs=1e-6)
            assert readable["candidates"][q][0] == {"text": candidates[top], "score": readable["score"][q]}
            assert readable["gold_answers"][q] == instance["metadata"]["answers"]
        expected = F.binary_cross_entropy_with_logits(torch.cat(all_logits), torch.cat(all_gold))
        assert output["loss"].item() == pytest.approx(expected.item(), abs=1e-6)

    def _mention_logits(self, one):
        """Each mention's logit in a one-window batch, computed directly from the encoder's entity states."""
        from luke_allennlp.modeling.inputs import span_position_ids

        squeeze = {k: v[:, 0] for k, v in one.items() if isinstance(v, torch.Tensor) and v.dim() == 3}
        states = self.model.embedder.luke(
            squeeze["word_ids"],
            attention_mask=squeeze["word_attention_mask"],
            token_type_ids=squeeze["word_type_ids"],
            entity_ids=squeeze["entity_ids"],
            entity_position_ids=span_position_ids(squeeze["entity_start_positions"], squeeze["entity_end_positions"]),
            entity_attention_mask=squeeze["entity_attention_mask"],
            entity_token_type_ids=squeeze["entity_type_ids"],
        ).entity_last_hidden_state[0]
        count = int((squeeze["entity_candidates"][0] >= 0).sum())
        pairs = torch.cat([states[:1].expand(count, -1), states[1 : 1 + count]], dim=-1)
        return self.model.scorer(pairs).squeeze(-1)

    def test_compiled_embedder_runs_encoder_head_and_loss_as_one_graph(self, monkeypatch, caplog):
        """The embedder's `compile`: encoder, mention head and loss (each candidate by its best mention over the
        windows) are one graph per bucket, a batch of one window included; loss, candidate scores and gradients those
        of the eager model. (The loss over windows is the eager model's test above.)"""
        second = self.instances[1]  # (one window; a batch of two queries, then of one, share a bucket)
        batches = [[second, second], [second]]
        graphs = self.assert_compiled_steps_are_eager_steps(monkeypatch, caplog, batches, "candidate_scores")
        assert graphs == ["torch.compile: graph 1 of the encoder and LukeRecord.score, for 320 words, 16 entities"]

    def test_query_without_candidates_scores_zero(self, tiny_luke_dir):
        """As in the official evaluation, a query without a prediction counts, with EM = F1 = 0."""
        from data_readers.luke_record import LukeRecordReader

        reader = LukeRecordReader(str(tiny_luke_dir))
        instance = reader.text_to_instance(
            "Alice met Bob.", "@placeholder met Bob.", [], answers=["Alice"], query_id="q"
        )
        batch = Batch([instance])
        batch.index_instances(self.vocab)
        self.model.get_metrics(reset=True)
        output = self.model(**batch.as_tensor_dict())
        assert output["loss"].item() == 0.0 and output["loss"].requires_grad
        assert self.model.make_output_human_readable(output)["answer"] == [""]
        assert self.model.get_metrics(reset=True) == {"em": 0.0, "f1": 0.0}


def test_metric_is_the_official_record_definition():
    """ReCoRD's official script: SQuAD v1.1 normalisation (lower case, punctuation and a/an/the removed, white
    space collapsed), token F1, maximum over the gold answers, averaged over queries."""
    assert max_over_golds(exact_match_score, "the Tracy Morgan", ["Tracy Morgan", "Morgan"]) == 1.0
    assert max_over_golds(f1_score, "Morgan", ["Tracy Morgan"]) == pytest.approx(2 / 3)  # P 1, R 1/2
    assert max_over_golds(f1_score, "Tracy Morgan", ["Morgan", "Jimmy Mack"]) == pytest.approx(2 / 3)  # P 1/2, R 1
    assert f1_score("U.S.", "US") == 1.0 and exact_match_score("Morgan's", "Morgans") == 1.0  # punctuation dropped
    assert f1_score("", "China") == 0.0 and exact_match_score("an", "") == 1.0  # only an article: both empty
    metric = SquadEmAndF1()
    metric(
        ["China", "Morgan", "", "New Jersey Turnpike"],
        [["China"], ["Tracy Morgan", "Morgan"], ["Tian Tian"], ["New Jersey"]],
    )
    # EM: 1, 1, 0, 0; F1: 1, 1, 0, 2 * (2/3 * 1) / (2/3 + 1) = 0.8
    assert metric.get_metric(reset=True) == {"em": pytest.approx(0.5), "f1": pytest.approx(2.8 / 4)}


def test_evaluate_command_writes_one_line_per_query(tiny_luke_dir, record_sample, tmp_path):
    archive = train_archive(CONFIG, tiny_luke_dir, record_sample, tmp_path / "run", SMALL)
    predictions, metrics = tmp_path / "predictions.jsonl", tmp_path / "metrics.json"
    command = [
        str(Path(sys.executable).with_name("allennlp")),
        "evaluate",
        str(archive),
        str(record_sample),
        "--predictions-output-file",
        str(predictions),
        "--output-file",
        str(metrics),
        "--batch-size",
        "1",
    ]
    result = subprocess.run(command, capture_output=True, text=True, cwd=REPO_ROOT, env=dict(os.environ), timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    rows = [json.loads(line) for line in predictions.read_text().splitlines()]
    data = json.loads(record_sample.read_text())["data"]
    queries = [(qa, entry["passage"]) for entry in data for qa in entry["qas"]]
    assert [row["id"] for row in rows] == [qa["id"] for qa, _ in queries]
    for row, (qa, passage) in zip(rows, queries):
        assert row["gold_answers"] == [a["text"] for a in qa["answers"]]
        texts = {passage["text"][e["start"] : e["end"] + 1] for e in passage["entities"]}
        assert row["answer"] in texts and {c["text"] for c in row["candidates"]} == texts
        assert all(passage["text"][s : e + 1] == row["answer"] for s, e in row["answer_spans"])
    # The reported metrics are the official definition applied to the written predictions.
    reported = json.loads(metrics.read_text())
    em = sum(max_over_golds(exact_match_score, r["answer"], r["gold_answers"]) for r in rows) / len(rows)
    f1 = sum(max_over_golds(f1_score, r["answer"], r["gold_answers"]) for r in rows) / len(rows)
    assert reported["em"] == pytest.approx(em) and reported["f1"] == pytest.approx(f1)


def test_learns_the_sample(tiny_luke_dir, record_sample, tmp_path, monkeypatch):
    """A tiny random LUKE fits the two real queries: the loss falls and both answers come out right."""
    from allennlp.commands.train import train_model_from_file

    set_config_env(monkeypatch, tiny_luke_dir, record_sample)
    overrides = {
        "trainer.num_epochs": 10,
        "trainer.optimizer.lr": 3e-3,
        "model.dropout": 0.0,
        "dataset_reader.max_seq_length": 128,
        "trainer.learning_rate_scheduler.warmup_ratio": 0.0,
    }
    train_model_from_file(str(CONFIG), str(tmp_path / "run"), overrides=json.dumps(overrides))
    losses = [
        json.loads((tmp_path / "run" / f"metrics_epoch_{e}.json").read_text())["training_loss"] for e in range(10)
    ]
    final = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert losses[-1] < 0.5 * losses[0] and final["validation_em"] == final["validation_f1"] == 1.0
