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


def test_per_type_scores_only_at_the_end_of_an_epoch():
    metric = SpanF1()
    metric([{(0, 1): "PER"}], [{(0, 1): "PER"}])
    assert set(metric.get_metric()) == {"precision", "recall", "f1"}  # the progress bar, batch after batch
    assert set(metric.get_metric(reset=True)) == {"precision", "recall", "f1", "precision-PER", "recall-PER", "f1-PER"}


def test_state_dict_round_trip():
    metric = SpanF1()
    metric([{(0, 1): "PER", (2, 3): "LOC"}], [{(0, 1): "PER"}])
    copy = SpanF1()
    copy.load_state_dict(metric.state_dict())
    assert copy.get_metric(reset=True) == metric.get_metric(reset=True)
