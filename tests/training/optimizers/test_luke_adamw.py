import pytest
import torch
from allennlp.common import Params
from allennlp.training.optimizers import Optimizer


def model_and_steps():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.LayerNorm(4), torch.nn.Linear(4, 1))
    inputs = torch.randn(5, 3)
    return model, inputs


def train(model, optimizer, inputs, steps=3):
    for _ in range(steps):
        optimizer.zero_grad()
        model(inputs).pow(2).mean().backward()
        optimizer.step()
    return [p.detach().clone() for p in model.parameters()]


@pytest.mark.parametrize("fused", [None, True])
def test_is_torch_adamw_with_allennlp_parameter_groups(fused):
    model, inputs = model_and_steps()
    optimizer = Optimizer.from_params(
        model_parameters=list(model.named_parameters()),
        params=Params(
            {
                "type": "luke_adamw",
                "lr": 0.1,
                "betas": [0.9, 0.98],
                "eps": 1e-6,
                "weight_decay": 0.01,
                "fused": fused,
                "parameter_groups": [[["bias", "1\\.weight"], {"weight_decay": 0.0}]],
            }
        ),
    )
    assert optimizer.defaults["fused"] is bool(fused) and optimizer.defaults["foreach"] is (None if fused else True)
    reference_model, _ = model_and_steps()
    no_decay = [p for n, p in reference_model.named_parameters() if "bias" in n or n == "1.weight"]
    decay = [p for n, p in reference_model.named_parameters() if not ("bias" in n or n == "1.weight")]
    reference = torch.optim.AdamW(
        [{"params": no_decay, "weight_decay": 0.0}, {"params": decay}],
        lr=0.1,
        betas=(0.9, 0.98),
        eps=1e-6,
        weight_decay=0.01,
    )
    ours, theirs = train(model, optimizer, inputs), train(reference_model, reference, inputs)
    assert all(torch.allclose(a, b, atol=1e-6) for a, b in zip(ours, theirs))
