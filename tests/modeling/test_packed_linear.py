"""Inference's packed weights: the same outputs as `F.linear`, packed once, again after an update, dropped in
training."""

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from luke_allennlp.modeling.packed_linear import _CACHE, _mkl_available, drop_packed, linear, packing_applies

pytestmark = pytest.mark.skipif(not _mkl_available(), reason="MKL's packed matrices are not in this build of torch")


def test_packed_weights_give_f_linear_outputs_and_follow_updates():
    torch.manual_seed(0)
    module = nn.Linear(48, 96).eval()
    x = torch.randn(3, 7, 48)
    with torch.inference_mode():
        assert packing_applies(module, x, module.weight)
        linear(module, "dense", x, module.weight, module.bias)
        assert module.__dict__[_CACHE]["dense"][1] is None  # packed at the second use
        out = linear(module, "dense", x, module.weight, module.bias)
        packed = module.__dict__[_CACHE]["dense"][1]
        assert torch.allclose(out, F.linear(x, module.weight, module.bias), atol=1e-5, rtol=1e-6)
        linear(module, "dense", x, module.weight, module.bias)
        assert module.__dict__[_CACHE]["dense"][1] is packed  # packed once
    with torch.no_grad():
        module.weight.mul_(2)  # an in-place update (an optimizer step, load_state_dict)
    with torch.inference_mode():
        for _ in range(2):
            out = linear(module, "dense", x, module.weight, module.bias)
            assert torch.allclose(out, F.linear(x, module.weight, module.bias), atol=1e-5, rtol=1e-6)
        assert module.__dict__[_CACHE]["dense"][1] is not packed
    drop_packed(module)
    assert _CACHE not in module.__dict__


def test_no_packing_outside_inference_mode_or_in_training():
    module = nn.Linear(4, 4)
    x = torch.randn(2, 4)
    with torch.no_grad():
        assert not packing_applies(module.eval(), x, module.weight)  # (validation: no_grad, weights still changing)
    with torch.inference_mode():
        assert not packing_applies(module.train(), x, module.weight)
        assert not packing_applies(module.eval(), x.double(), module.weight)
