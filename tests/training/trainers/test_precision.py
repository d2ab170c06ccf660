import pytest
import torch


@pytest.mark.parametrize(
    "capability, expected", [((7, 0), "fp32"), ((7, 5), "fp32"), ((8, 0), "bf16"), ((9, 0), "bf16")]
)
def test_auto_precision_is_bf16_only_on_gpus_that_compute_in_bf16(monkeypatch, capability, expected):
    """A V100 (7.0) or T4 (7.5): torch says bf16 is supported (emulated), but "auto" must not pick it."""
    from luke_allennlp.training.trainers.precision import resolve_precision

    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda including_emulation=True: True)
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda device=None: capability)
    gpu = torch.device("cuda", 0)
    assert resolve_precision("auto", False, gpu) == expected
    assert resolve_precision("auto", True, gpu) == "fp16"  # use_amp
    assert resolve_precision("bf16", False, gpu) == "bf16"  # what the config says, as it says
    assert resolve_precision("auto", False, torch.device("cpu")) == "fp32"
