import pytest

from luke_allennlp.training.metrics import RelationF1


def test_tacred_micro_scores_ignore_the_negative_class():
    metric = RelationF1()
    gold = ["org:founded_by", "no_relation", "per:title", "no_relation"]
    predicted = ["org:founded_by", "per:title", "no_relation", "no_relation"]
    metric(predicted, gold)  # correct 1; predicted (non-negative) 2; gold (non-negative) 2
    result = metric.get_metric(reset=True)
    assert result["precision"] == 0.5 and result["recall"] == 0.5 and result["f1"] == 0.5


def test_semeval_macro_f1_takes_direction_into_account():
    metric = RelationF1()
    gold = ["Cause-Effect(e1,e2)", "Cause-Effect(e2,e1)", "Entity-Origin(e1,e2)", "Other"]
    predicted = ["Cause-Effect(e1,e2)", "Cause-Effect(e1,e2)", "Other", "Entity-Origin(e1,e2)"]
    metric(predicted, gold)
    # Cause-Effect: 1 right of 2 predicted and 2 gold -> F1 0.5; Entity-Origin: 0 right -> F1 0.
    assert metric.get_metric()["macro_f1"] == pytest.approx(0.25)


def test_semeval_macro_f1_averages_over_the_types_of_the_answer_key():
    metric = RelationF1()
    # Message-Topic is only predicted: as in the official scorer it counts as Other, not as a type with F1 0.
    metric(["Cause-Effect(e1,e2)", "Message-Topic(e1,e2)"], ["Cause-Effect(e1,e2)", "Other"])
    assert metric.get_metric()["macro_f1"] == 1.0


def test_tacred_precision_is_one_without_positive_predictions():
    metric = RelationF1()
    metric(["no_relation", "no_relation"], ["per:title", "no_relation"])
    assert metric.get_metric() == {"precision": 1.0, "recall": 0.0, "f1": 0.0, "macro_f1": 0.0}
