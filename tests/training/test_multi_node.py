"""
Training across processes launched from outside (gloo, CPU, the tiny LUKE text classifier, 1 epoch): torchrun's two
processes, and allennlp's launch as two "nodes" on this host (`--node-rank 0/1`, one process each) with one shared
serialization directory and with one directory per node. Each trains the model that allennlp's launch of two
processes on one node (`cuda_devices [-1, -1]`) trains, and only the primary's directory holds the archive, the
metrics and the checkpoints.
"""

import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List

import pytest
import torch
from allennlp.commands.train import train_model_from_file

from tests.conftest import FIXTURES, free_port
from tests.training.test_distributed_training import lines

CONFIG = str(FIXTURES / "configs" / "luke_classifier.jsonnet")
REPOSITORY = Path(__file__).resolve().parents[2]
TIMEOUT = 240  # seconds for any launch
WRITTEN_BY_THE_PRIMARY = [
    "model.tar.gz",
    "metrics.json",
    "metrics_epoch_0.json",
    "best.th",
    "model_state_e1_b0.th",
    "training_state_e1_b0.th",
]


@pytest.fixture(scope="module")
def setup(tiny_luke_dir, tmp_path_factory) -> Dict[str, Any]:
    root = tmp_path_factory.mktemp("multi-node")
    for name, count in (("train", 12), ("validation", 5)):  # 3 batches of 2 a process; 2 and 1 in validation
        (root / f"{name}.jsonl").write_text("\n".join(lines(count)) + "\n")
    train, validation = root / "train.jsonl", root / "validation.jsonl"
    environment = {
        **os.environ,
        "MODEL_DIR": str(tiny_luke_dir),
        "DATA": str(train),
        "PYTHONPATH": str(REPOSITORY),
        "OMP_NUM_THREADS": "1",
    }
    overrides = {
        "train_data_path": str(train),
        "validation_data_path": str(validation),
        "data_loader.batch_size": 2,
        "trainer.type": "luke_gradient_descent",
        "trainer.num_epochs": 1,
        "trainer.precision": "fp32",
        "distributed": {"cuda_devices": [-1, -1], "ddp_accelerator": {"type": "torch", "find_unused_parameters": True}},
    }
    return {"root": root, "environment": environment, "overrides": overrides}


@pytest.fixture(scope="module")
def reference(setup) -> Path:
    """allennlp's launch of two processes on one node."""
    out = setup["root"] / "reference"
    saved = {name: os.environ.get(name) for name in ("MODEL_DIR", "DATA", "OMP_NUM_THREADS")}
    # One thread a process, as torchrun sets it: the sums' order, and so the weights' last bits, depend on it.
    os.environ.update({name: setup["environment"][name] for name in saved})
    try:
        model = train_model_from_file(CONFIG, str(out), overrides=json.dumps(setup["overrides"]), return_model=True)
    finally:
        for name, value in saved.items():
            os.environ.pop(name) if value is None else os.environ.update({name: value})
    # The model asked for (allennlp returned None under distributed training): the archive's, the final weights.
    final = torch.load(out / "model_state_e1_b0.th", weights_only=True)
    assert all(torch.equal(value, final[name]) for name, value in model.state_dict().items())
    return out


def allennlp_train(setup, out: Path, overrides: Dict, *extra: str, torchrun: bool = False) -> subprocess.Popen:
    command = [sys.executable, "-m", "allennlp", "train", CONFIG, "-s", str(out), "-o", json.dumps(overrides), *extra]
    if torchrun:
        command[1:2] = ["-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2", "-m"]
    return subprocess.Popen(
        command, env=setup["environment"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )


def finish(processes: List[subprocess.Popen]) -> List[str]:
    outputs = []
    for process in processes:
        try:
            outputs.append(process.communicate(timeout=TIMEOUT)[0])
        except subprocess.TimeoutExpired:
            for p in processes:
                p.kill()
            raise
    for process, output in zip(processes, outputs):
        assert process.returncode == 0, output[-3000:]
    return outputs


def assert_same_weights(reference: Path, out: Path) -> None:
    expected = torch.load(reference / "model_state_e1_b0.th", weights_only=True)
    trained = torch.load(out / "model_state_e1_b0.th", weights_only=True)
    assert expected.keys() == trained.keys()
    assert max((expected[k].double() - trained[k].double()).abs().max().item() for k in expected) <= 1e-6


def test_torchrun_trains_the_model_of_two_spawned_workers(setup, reference):
    """`python -m torch.distributed.run --standalone --nproc_per_node 2 -m allennlp train`, the `distributed` section
    naming no devices: one model, one archive, rank 1 writes only its log."""
    out = setup["root"] / "torchrun"
    overrides = {
        **setup["overrides"],
        "distributed": {"ddp_accelerator": setup["overrides"]["distributed"]["ddp_accelerator"]},
    }
    finish([allennlp_train(setup, out, overrides, torchrun=True)])
    assert_same_weights(reference, out)
    for name in WRITTEN_BY_THE_PRIMARY:
        assert (out / name).exists(), name
    assert sorted(p.name for p in out.glob("out_worker*.log")) == ["out_worker0.log", "out_worker1.log"]


def nodes(setup, reference, directories: List[Path], *extra: str, port: int = 0) -> int:
    port = port or free_port()
    overrides = {
        **setup["overrides"],
        "distributed": {
            "cuda_devices": [-1],
            "num_nodes": 2,
            "primary_address": "127.0.0.1",
            "primary_port": port,
            "ddp_accelerator": {"type": "torch", "find_unused_parameters": True},
        },
    }
    outputs = finish(
        [
            allennlp_train(setup, directory, overrides, "--node-rank", str(rank), *extra)
            for rank, directory in enumerate(directories)
        ]
    )
    # Node 1 ended silently: it says where the results are.
    assert outputs[1].rstrip().splitlines()[-1] == (
        f"allennlp train: node 1 done (processes 1 of 2). The trained model, its metrics and the checkpoints are on "
        f"node 0 ({socket.gethostname()}), in {directories[0]}; this node wrote only its logs (out_worker*.log) in "
        f"{directories[1]}"
    )
    assert "node 1 done" not in outputs[0]
    assert_same_weights(reference, directories[0])
    for name in WRITTEN_BY_THE_PRIMARY:
        assert (directories[0] / name).exists(), name
    logs = sorted(p.name for d in set(directories) for p in d.glob("out_worker*.log"))
    assert logs == ["out_worker0.log", "out_worker1.log"]
    return port


def test_two_nodes_with_a_shared_directory_train_the_model_of_two_spawned_workers(setup, reference):
    shared = setup["root"] / "shared"
    nodes(setup, reference, [shared, shared])
    assert not list(shared.glob("*_w1.th"))


def test_two_nodes_with_a_directory_each_train_the_model_of_two_spawned_workers(setup, reference):
    """And `--recover` from the primary's directory: node 1's holds no checkpoint, rank 0 sends it its own (else
    node 1 would train the epoch that node 0 replays, its all-reduces unanswered until the timeout)."""
    directories = [setup["root"] / "node0", setup["root"] / "node1"]
    port = nodes(setup, reference, directories)
    assert sorted(p.name for p in directories[1].iterdir()) == ["out_worker1.log"]
    (directories[0] / "model.tar.gz").unlink()
    nodes(setup, reference, directories, "--recover", port=port)
    assert (directories[0] / "model.tar.gz").exists() and not (directories[1] / "model.tar.gz").exists()
