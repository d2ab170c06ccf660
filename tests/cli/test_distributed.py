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
def test_a_node_that_cannot_join_fails_in_one_line_within_the_join_timeout(rank, capfd):
    """Node 1 without node 0 (nothing listens at the address), node 0 without node 1: each stops after about
    `join_timeout` seconds (torch's client tried twice: about twice that) with one line, and nothing of torch's C++
    output (some 30 lines of stack frames) on the terminal."""
    import torch.distributed  # noqa: F401  (imported before the clock starts)

    launch = Launch(False, 2, rank, 1, [-1], "127.0.0.1", free_port(), join_timeout=2.0)
    capfd.readouterr()
    start = time.monotonic()
    with pytest.raises(DistributedSetupError) as failed:
        join(launch, rank, -1)
    assert 1.9 < time.monotonic() - start < 3.5
    message = str(failed.value)
    assert "\n" not in message and message.startswith(
        f"process {rank} (node {rank}) could not join the process group at 127.0.0.1:{launch.port} within 2 s "
        "(distributed.join_timeout): "
    )
    assert capfd.readouterr().err == ""


def test_a_primary_port_in_use_is_said_before_any_work(tmp_path, monkeypatch):
    """A `primary_port` that something listens at: "could not join within 300 s" after some 20 s; now one line
    saying the port is in use, before node 0 reads the data (`prepare_directory`) or starts a worker."""
    import socket

    import allennlp.commands.train as train

    from luke_allennlp.cli import distributed

    def no_work(*args, **kwargs):
        raise AssertionError("work started")

    monkeypatch.setattr(distributed, "prepare_directory", no_work)
    monkeypatch.setattr(train.mp, "spawn", no_work)
    with socket.socket() as other:
        other.bind(("127.0.0.1", 0))
        other.listen()
        port = other.getsockname()[1]
        params = Params({"distributed": {"cuda_devices": [-1, -1], "num_nodes": 2, "primary_port": port}})
        with pytest.raises(DistributedSetupError) as refused:
            train.train_model(params, str(tmp_path / "out"), node_rank=0)
        assert str(refused.value) == (
            f"port {port} (distributed.primary_port) is in use on this machine (another training, or another "
            "program): choose another primary_port for every node, or stop what uses it"
        )
        launch = Launch(False, 2, 0, 1, [-1], "127.0.0.1", port, join_timeout=30.0)
        start = time.monotonic()
        with pytest.raises(DistributedSetupError, match=f"port {port} .* is in use on this machine"):
            join(launch, 0, -1)
        assert time.monotonic() - start < 1


def test_a_process_killed_or_lost_stops_the_run_in_one_line_with_what_is_left(monkeypatch, tmp_path):
    """A worker killed (SIGKILL: out of memory) was a spawn traceback; a process that lost the others (gloo's
    "Connection closed by peer") another. Now one line each: which process, how, and on node 0 the last checkpoint
    and `--recover`; the other nodes say that node 0 holds the checkpoints."""
    import allennlp.commands.train as train
    from torch.multiprocessing import ProcessExitedException, ProcessRaisedException

    from luke_allennlp.cli import distributed

    out = tmp_path / "out"
    out.mkdir()
    for name in ("model_state_e1_b0.th", "training_state_e1_b0.th"):
        (out / name).write_bytes(b"a checkpoint")
    monkeypatch.setattr(distributed, "prepare_directory", lambda *args: {"files": {}, "padding": "@", "oov": "@"})
    monkeypatch.setattr(distributed, "check_port", lambda launch: None)

    def killed(fn, args, nprocs):
        raise ProcessExitedException("process 1 terminated with signal SIGKILL", 1, 4242, -9, "SIGKILL")

    monkeypatch.setattr(train.mp, "spawn", killed)
    params = {"distributed": {"cuda_devices": [-1, -1], "num_nodes": 2, "primary_port": 1234}}
    monkeypatch.setattr(sys, "argv", ["allennlp", "train", "config.jsonnet", "-s", str(out)])
    with pytest.raises(DistributedWorkerError) as stopped:
        train.train_model(Params(params), str(out), node_rank=0)
    assert str(stopped.value) == (
        "process 1 of the training (on this node, PID 4242) killed by SIGKILL (out of memory? see the kernel log) "
        f"while training; the last checkpoint in {out} (after 1 epoch(s)) is intact: `allennlp train --recover -s "
        f"{out}` resumes from it"
    )

    lost = RuntimeError("[../third_party/gloo/gloo/transport/tcp/pair.cc:534] Connection closed by peer [127.0.0.1]:5")

    def losing(*args):
        raise lost

    monkeypatch.setattr(distributed, "_worker", losing)
    launch = Launch(False, 4, 1, 2, [-1, -1], "127.0.0.1", 1234, 30.0)
    with pytest.raises(DistributedWorkerError) as raised:
        _spawned_worker(1, launch)
    told = (
        "process 3 of the training lost the others ([../third_party/gloo/gloo/transport/tcp/pair.cc:534] Connection "
        "closed by peer [127.0.0.1]:5): another process of the run ended (killed, out of memory, or failed on its "
        "node)"
    )
    assert str(raised.value) == f"{told}: see the other nodes' output for why"

    def spawn(fn, args, nprocs):  # what torch.multiprocessing.spawn raises in the parent for that worker
        trace = f"Traceback (most recent call last):\n  ...\nluke_allennlp.cli.distributed.{raised.typename}: {raised.value}"
        raise ProcessRaisedException(f"\n\n-- Process 1 terminated with the following error:\n{trace}", 1, 4242)

    monkeypatch.setattr(train.mp, "spawn", spawn)
    with pytest.raises(DistributedWorkerError) as converted:
        train.train_model(Params(params), str(tmp_path / "node1"), node_rank=1)
    assert str(converted.value) == (
        f"{told}: the checkpoints are on node 0: run the same `allennlp train --recover` on every node to resume "
        "from node 0's last checkpoint"
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
