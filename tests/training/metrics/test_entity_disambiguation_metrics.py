import pytest
import torch
from allennlp.common.testing.distributed_test import run_distributed_test

from luke_allennlp.training.metrics import EntityDisambiguationAccuracy, EntityLinkingF1


def ed_batch(rank: int = 0):
    # Five mentions: right; wrong (the prior is right); no candidates; gold outside the vocabulary; gold outside
    # its candidates. The second process sees only the first two.
    batch = dict(
        predictions=torch.tensor([7, 5, -1, 4, 6]),
        gold=torch.tensor([7, 8, 9, -1, 3]),
        prior_predictions=torch.tensor([5, 8, -1, 4, 6]),
        candidate_counts=torch.tensor([2, 3, 0, 1, 2]),
        gold_in_candidates=torch.tensor([True, True, False, False, False]),
    )
    return {k: v[:2] for k, v in batch.items()} if rank == 1 else batch


def test_accuracy_counts_every_gold_mention():
    metric = EntityDisambiguationAccuracy()
    metric(**ed_batch())
    assert metric.get_metric(reset=True) == {
        "accuracy": 0.2,
        "prior_accuracy": 0.2,
        "candidate_recall": 0.4,
        "mentions": 5.0,
        "mentions_without_candidates": 1.0,
        "gold_outside_vocabulary": 1.0,
    }
    assert metric.get_metric()["mentions"] == 0.0 and metric.get_metric()["accuracy"] == 0.0


def test_linking_f1_needs_span_and_entity():
    metric = EntityLinkingF1()
    predicted = [[(0, 5, "Paris"), (10, 14, "Rome"), (10, 14, "Rome")], [(3, 7, "Texas")]]
    gold = [[(0, 5, "Paris"), (10, 14, "Rome (band)"), (20, 25, "Lyon")], []]
    metric(predicted, gold)  # right 1 of 3 predicted (a repeated link counts once), of 3 gold
    result = metric.get_metric(reset=True)
    assert result == {"precision": pytest.approx(1 / 3), "recall": pytest.approx(1 / 3), "f1": pytest.approx(1 / 3)}
    assert metric.get_metric() == {"precision": 0.0, "recall": 0.0, "f1": 0.0}


def _distributed(global_rank: int, world_size: int, gpu_id) -> None:
    accuracy = EntityDisambiguationAccuracy()
    accuracy(**ed_batch(global_rank))
    result = accuracy.get_metric()
    assert (result["mentions"], result["accuracy"], result["prior_accuracy"]) == (7.0, 2 / 7, 2 / 7)
    linking = EntityLinkingF1()
    linking([[(0, 1, "A"), (2, 3, "B")]] if global_rank == 0 else [[(0, 1, "C")]], [[(0, 1, "A")]])
    assert linking.get_metric() == {"precision": 1 / 3, "recall": 1 / 2, "f1": 0.4}


def test_counts_are_summed_across_processes():
    run_distributed_test([-1, -1], _distributed)
