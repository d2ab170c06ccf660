"""luke_allennlp/cli/distributed.py: the launch's checks, the join timeout, a worker's error on one
line. The trainings themselves: tests/training/test_multi_node.py."""

import sys
import time

import pytest
from allennlp.common import Params

from luke_allennlp.cli.distributed import (
    DistributedSetupError,
    DistributedWorkerError,
    Launch,
    _spawned_worker,
    join,
    plan,
)
from tests.conftest import free_port

TORCHRUN = {
    "RANK": "3",
    "WORLD_SIZE": "4",
    "LOCAL_RANK": "1",
    "MASTER_ADDR": "10.0.0.1",
    "MASTER_PORT": "29500",
    "LOCAL_WORLD_SIZE": "2",
}


def test_torchrun_needs_no_section_and_refuses_one_that_disagrees():
    launch = plan(None, 0, TORCHRUN)
    assert (launch.torchrun, launch.world_size, launch.node_rank, launch.procs_per_node) == (True, 4, 1, 2)
    assert launch.global_rank(1) == 3 and launch.devices == [-1, -1]  # no GPU here: the CPU
    agreeing = {
        "cuda_devices": [0, 1],
        "num_nodes": 2,
        "primary_address": "10.0.0.1",
        "primary_port": 29500,
        "ddp_accelerator": {"type": "torch"},
    }
    assert plan(agreeing, 0, TORCHRUN).devices == [0, 1] and plan(agreeing, 0, TORCHRUN).rest == {
        "ddp_accelerator": {"type": "torch"}
    }
    with pytest.raises(DistributedSetupError) as refused:
        plan({"cuda_devices": [0, 1, 2], "primary_port": 29501}, 0, TORCHRUN)
    assert str(refused.value) == (
        "the config's distributed section disagrees with torchrun's environment: cuda_devices has 3 devices, "
        "torchrun runs 2 per node; primary_port 29501, MASTER_PORT 29500 (leave the section out under torchrun, or "
        "make it agree)"
    )


def test_allennlp_launch_across_nodes_needs_a_port_and_a_node_rank_of_its_nodes():
    with pytest.raises(DistributedSetupError, match="set distributed.primary_port"):
        plan({"cuda_devices": [0], "num_nodes": 2, "primary_address": "10.0.0.1"}, 1, None)
    with pytest.raises(DistributedSetupError, match="--node-rank 2 is not a node of distributed.num_nodes 2"):
        plan({"cuda_devices": [0], "num_nodes": 2, "primary_port": 1234}, 2, None)
    launch = plan({"cuda_devices": [0, 1], "num_nodes": 2, "primary_port": 1234}, 1, None)
    assert (launch.world_size, launch.global_rank(1), launch.address) == (4, 3, "127.0.0.1")


@pytest.mark.parametrize("rank", [0, 1])
def test_a_node_that_cannot_join_fails_in_one_line_within_the_join_timeout(rank):
    """Node 1 without node 0 (nothing listens at the address), node 0 without node 1: each stops after
    `join_timeout` seconds with one line, instead of waiting in `init_process_group` for ever."""
    launch = Launch(False, 2, rank, 1, [-1], "127.0.0.1", free_port(), join_timeout=1.0)
    start = time.monotonic()
    with pytest.raises(DistributedSetupError) as failed:
        join(launch, rank, -1)
    assert time.monotonic() - start < 15
    message = str(failed.value)
    assert "\n" not in message and message.startswith(
        f"process {rank} (node {rank}) could not join the process group at 127.0.0.1:{launch.port} within 1 s "
        "(distributed.join_timeout): "
    )


def test_a_user_error_in_a_spawned_worker_is_one_line(monkeypatch, tmp_path, capsys):
    """A worker's clear error reached the user as a `ProcessRaisedException` around the worker's traceback: the
    `allennlp` command prints its one line."""
    import allennlp.commands.train as train
    from torch.multiprocessing import ProcessRaisedException

    from luke_allennlp.cli import distributed

    def failing(*args):
        raise DistributedSetupError("tests.jsonl:3: no text")

    monkeypatch.setattr(distributed, "_worker", failing)
    with pytest.raises(DistributedWorkerError) as raised:
        _spawned_worker(0)
    assert str(raised.value) == "tests.jsonl:3: no text"

    def spawn(fn, args, nprocs):  # what torch.multiprocessing.spawn raises in the parent for that worker
        trace = f"Traceback (most recent call last):\n  ...\nluke_allennlp.cli.distributed.{raised.typename}: {raised.value}"
        raise ProcessRaisedException(f"\n\n-- Process 1 terminated with the following error:\n{trace}", 1, 4242)

    monkeypatch.setattr(train.mp, "spawn", spawn)
    params = Params({"distributed": {"cuda_devices": [-1, -1], "num_nodes": 2, "primary_port": 1234}})
    monkeypatch.setattr(sys, "argv", ["allennlp", "train", "config.jsonnet", "-s", str(tmp_path / "out")])
    with pytest.raises(DistributedWorkerError) as converted:
        train.train_model(params, str(tmp_path / "out"), node_rank=1)
    assert str(converted.value) == "tests.jsonl:3: no text"
