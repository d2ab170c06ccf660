import pytest
import torch

from luke_allennlp.training.metrics import MultiLabelF1


def test_loose_micro_scores():
    metric = MultiLabelF1()
    predicted = torch.tensor([[1, 1, 0], [0, 0, 0], [1, 0, 1]])
    gold = torch.tensor([[1, 0, 0], [0, 1, 0], [1, 0, 1]])
    metric(predicted, gold)  # correct 3, predicted 4, gold 4
    result = metric.get_metric(reset=True)
    assert result == {"precision": pytest.approx(0.75), "recall": pytest.approx(0.75), "f1": pytest.approx(0.75)}
    assert metric.get_metric() == {"precision": 0.0, "recall": 0.0, "f1": 0.0}
