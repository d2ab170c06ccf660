"""luke_allennlp/training/devices.py: the GPU memory the pretraining configs size their micro-batch by."""

import subprocess
from types import SimpleNamespace

import pytest

from luke_allennlp.training import devices


def test_gpu_memory_is_zero_without_a_gpu():
    assert devices.gpu_count() == 0 and devices.gpu_memory_gib() == 0


def test_gpu_memory_is_asked_of_nvidia_smi(monkeypatch):
    """An H100 80GB reports 81,559 MiB: 79 GiB; torch (which would initialise CUDA here) is not asked."""
    monkeypatch.setattr(devices, "gpu_count", lambda: 8)
    asked = []

    def run(command, **kwargs):
        asked.append(command)
        return SimpleNamespace(stdout="81559\n")

    monkeypatch.setattr(subprocess, "run", run)
    monkeypatch.setattr(devices.torch.cuda, "get_device_properties", lambda index: pytest.fail("CUDA initialised"))
    assert devices.gpu_memory_gib() == 79
    assert asked[0][:2] == ["nvidia-smi", "--query-gpu=memory.total"] and "--id=0" in asked[0]


def test_gpu_memory_without_nvidia_smi_is_torchs(monkeypatch):
    monkeypatch.setattr(devices, "gpu_count", lambda: 1)

    def missing(command, **kwargs):
        raise FileNotFoundError("nvidia-smi")

    monkeypatch.setattr(subprocess, "run", missing)
    properties = SimpleNamespace(total_memory=40 * 2**30 + 123)
    monkeypatch.setattr(devices.torch.cuda, "get_device_properties", lambda index: properties)
    assert devices.gpu_memory_gib() == 40
