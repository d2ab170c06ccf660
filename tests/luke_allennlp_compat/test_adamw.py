"""Repair 2 (luke_allennlp_compat/adamw.py): `transformers.AdamW` and allennlp's `huggingface_adamw`."""

import math

import pytest
import torch

import luke_allennlp_compat


def test_huggingface_adamw_follows_the_transformers_algorithm():
    adamw = luke_allennlp_compat.huggingface_adamw()  # what transformers.AdamW becomes for allennlp
    lr, beta1, beta2, eps, decay = 0.1, 0.9, 0.99, 1e-6, 0.5
    param = torch.nn.Parameter(torch.tensor([1.0, -2.0]))
    optimizer = adamw([param], lr=lr, betas=(beta1, beta2), eps=eps, weight_decay=decay)
    expected = param.detach().clone()
    m = torch.zeros(2)
    v = torch.zeros(2)
    for step, grad in enumerate([torch.tensor([0.5, -1.0]), torch.tensor([2.0, 0.25])], start=1):
        param.grad = grad
        optimizer.step()
        m = beta1 * m + (1 - beta1) * grad
        v = beta2 * v + (1 - beta2) * grad * grad
        step_size = lr * math.sqrt(1 - beta2**step) / (1 - beta1**step)
        expected = expected - step_size * m / (v.sqrt() + eps)
        expected = expected - lr * decay * expected  # decoupled decay, after the Adam step
        assert torch.allclose(param.detach(), expected, atol=1e-6)
    # Without bias correction the first step is lr * m / (sqrt(v) + eps).
    plain = torch.nn.Parameter(torch.tensor([1.0]))
    plain.grad = torch.tensor([1.0])
    adamw([plain], lr=0.1, correct_bias=False).step()
    assert plain.item() == pytest.approx(1.0 - 0.1 * 0.1 / (math.sqrt(0.001) + 1e-6))
    assert isinstance(optimizer.state_dict()["state"][0]["step"], int)  # weights_only-loadable


def test_allennlp_huggingface_adamw_optimizer_builds():
    from allennlp.common import Params
    from allennlp.training.optimizers import Optimizer

    model = torch.nn.Linear(2, 2)
    optimizer = Optimizer.from_params(
        model_parameters=list(model.named_parameters()),
        params=Params({"type": "huggingface_adamw", "lr": 0.01, "correct_bias": False}),
    )
    model(torch.ones(1, 2)).sum().backward()
    optimizer.step()
    assert optimizer.param_groups[0]["correct_bias"] is False
    assert isinstance(optimizer, luke_allennlp_compat.huggingface_adamw())
