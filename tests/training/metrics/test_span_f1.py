import pytest

from luke_allennlp.training.metrics import SpanF1


def test_conlleval_counts():
    metric = SpanF1()
    gold = [{(0, 2): "PER", (3, 4): "LOC"}, {(1, 2): "ORG"}]
    predicted = [{(0, 2): "PER", (3, 4): "ORG"}, {(0, 2): "ORG"}]  # right; wrong type; wrong boundary
    metric(predicted, gold)
    result = metric.get_metric(reset=True)
    assert result["precision"] == pytest.approx(1 / 3) and result["recall"] == pytest.approx(1 / 3)
    assert result["f1"] == pytest.approx(1 / 3)
    assert result["f1-PER"] == 1.0 and result["precision-ORG"] == 0.0 and result["recall-LOC"] == 0.0
    assert all(isinstance(v, float) for v in result.values())
    assert metric.get_metric()["f1"] == 0.0  # reset


def test_empty_prediction_and_gold():
    metric = SpanF1()
    metric([{}], [{}])
    assert metric.get_metric() == {"precision": 0.0, "recall": 0.0, "f1": 0.0}
