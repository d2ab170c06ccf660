import numpy as np
import pytest
import torch
from scipy.stats import pearsonr, rankdata, spearmanr

from luke_allennlp.training.metrics import Correlation
from luke_allennlp.training.metrics.correlation import ranks


def test_equals_scipy_over_batches_with_ties():
    rng = np.random.RandomState(0)
    gold = rng.randint(0, 26, 300) / 5.0  # JSTS-like scores with many ties
    predicted = np.round(gold + rng.randn(300), 1)
    metric = Correlation()
    for start in range(0, 300, 32):  # tensors, lists, a mask
        metric(torch.tensor(predicted[start : start + 32]), gold[start : start + 32].tolist())
    assert ranks(gold).tolist() == rankdata(gold).tolist()
    result = metric.get_metric(reset=True)
    assert result["pearson"] == pytest.approx(pearsonr(predicted, gold)[0], abs=1e-12)
    assert result["spearman"] == pytest.approx(spearmanr(predicted, gold)[0], abs=1e-12)
    assert metric.get_metric() == {"pearson": 0.0, "spearman": 0.0}  # reset; nothing to correlate


def test_mask_state_and_constant_predictions():
    metric = Correlation()
    metric(torch.tensor([1.0, 2.0, 9.0]), torch.tensor([1.0, 2.0, -9.0]), mask=torch.tensor([True, True, False]))
    assert metric.get_metric() == {"pearson": pytest.approx(1.0), "spearman": pytest.approx(1.0)}
    state = metric.state_dict()
    restored = Correlation()
    restored.load_state_dict(state)
    assert state == {"predictions": [1.0, 2.0], "golds": [1.0, 2.0]} and restored.get_metric() == metric.get_metric()
    constant = Correlation()
    constant([3.0, 3.0, 3.0], [1.0, 2.0, 3.0])
    assert constant.get_metric() == {"pearson": 0.0, "spearman": 0.0}  # undefined: reported as 0
    with pytest.raises(ValueError, match="2 predictions but 3 gold scores"):
        constant([1.0, 2.0], [1.0, 2.0, 3.0])
