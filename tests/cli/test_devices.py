"""luke_allennlp/cli/devices.py: devices checked before any work; NUM_GPUS for configs."""

import json
import os
import sys

import pytest
import torch

from tests.conftest import FIXTURES

CONFIG = str(FIXTURES / "configs" / "luke_classifier.jsonnet")


@pytest.mark.parametrize(
    "override, setting",
    [
        ({"trainer.cuda_device": 0}, "trainer.cuda_device is 0"),
        ({"distributed": {"cuda_devices": [0, 1]}}, "a device in distributed.cuda_devices is 0"),
    ],
)
def test_a_gpu_the_machine_lacks_is_one_line_before_any_work(tmp_path, monkeypatch, capsys, override, setting):
    """allennlp read the data and built the model, then failed in torch with 29 lines ending "Cannot access
    accelerator device". Now one line, before the output directory exists or the (here missing) data is read."""
    from allennlp.commands import main

    assert not torch.cuda.is_available()
    monkeypatch.setenv("MODEL_DIR", str(tmp_path / "no-model"))
    monkeypatch.setenv("DATA", str(tmp_path / "no-data.jsonl"))
    out = tmp_path / "out"
    monkeypatch.setattr(sys, "argv", ["allennlp", "train", CONFIG, "-s", str(out), "-o", json.dumps(override)])
    with pytest.raises(SystemExit) as exited:
        main(prog="allennlp")
    err = capsys.readouterr().err
    assert exited.value.code == 1 and err.count("\n") == 1
    assert err.startswith(f"allennlp: error: {setting}, but this machine has no GPU: ") and "the CPU" in err
    assert not os.path.exists(out)


def test_num_gpus_and_gpu_memory_are_the_machines_unless_set(tmp_path, monkeypatch):
    from allennlp.common import Params

    config = tmp_path / "gpus.jsonnet"
    config.write_text("{gpus: std.parseInt(std.extVar('NUM_GPUS')), memory: std.extVar('GPU_MEMORY_GIB')}")
    monkeypatch.delenv("NUM_GPUS", raising=False)
    monkeypatch.delenv("GPU_MEMORY_GIB", raising=False)
    assert Params.from_file(str(config)).as_dict() == {"gpus": 0, "memory": "0"}  # this machine
    monkeypatch.setenv("NUM_GPUS", "8")
    monkeypatch.setenv("GPU_MEMORY_GIB", "79")
    assert Params.from_file(str(config)).as_dict() == {"gpus": 8, "memory": "79"}


@pytest.mark.parametrize("command", ["predict", "evaluate"])
def test_a_cuda_device_the_machine_lacks_stops_predict_and_evaluate_before_loading(
    tmp_path, monkeypatch, capsys, command
):
    """`allennlp predict --cuda-device 0` (and `evaluate`) without a GPU: torch's 20-line "Cannot access accelerator
    device" after loading the archive; now one line before the (here missing) archive is opened."""
    from allennlp.commands import main

    assert not torch.cuda.is_available()
    argv = ["allennlp", command, str(tmp_path / "missing.tar.gz"), str(tmp_path / "in.jsonl"), "--cuda-device", "0"]
    monkeypatch.setattr(sys, "argv", argv)
    with pytest.raises(SystemExit) as exited:
        main(prog="allennlp")
    assert exited.value.code == 1 and capsys.readouterr().err == (
        "allennlp: error: --cuda-device is 0, but this machine has no GPU: pass --cuda-device -1 (the CPU)\n"
    )
