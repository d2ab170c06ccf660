"""
Distributed training across machines: torchrun, allennlp's node ranks, one writer.

allennlp's `train` ignored torchrun (`RANK`, `WORLD_SIZE`, `LOCAL_RANK`, `MASTER_ADDR`, `MASTER_PORT`): each torchrun
process trained a model of its own. Under its own multi-node launch (`distributed.num_nodes`, `primary_address`,
`--node-rank`) every node's local rank 0 counted as the primary: every node wrote the archive, `metrics.json`,
`best.th`, the epoch metrics and (unpruned) checkpoints; every node checked and filled the serialization directory
before its workers joined, so a directory shared by the nodes made the second node refuse it ("already exists and is
not empty") and left the first waiting in `init_process_group` for ever; the nodes' workers logged to the same
`out_worker{local rank}.log`; a local primary address let each node pick its own random port. A worker's error
reached the user as a `ProcessRaisedException` around the worker's traceback.

`train_model` of `allennlp.commands.train` is replaced where training is distributed (a `distributed` section, or
torchrun's environment with `WORLD_SIZE` > 1; one process keeps allennlp's own path), and its workers run `_worker`
here instead of allennlp's `_train_worker`:

- Under torchrun this process is the worker (no second spawn); the `distributed` section is optional and, present,
  must agree with the environment (`DistributedSetupError`, one line). allennlp's launch spawns one worker per
  entry of `cuda_devices` on each node, as allennlp does.
- Only the global primary (node 0, or `RANK` 0) prepares the serialization directory (the `--recover` / `--force`
  checks, `config.json`, the vocabulary): before its workers start (allennlp's launch) or before it joins the
  process group (torchrun). The other processes write nothing in it until they have joined, and then only their
  own `out_worker{global rank}.log`; they receive the vocabulary from rank 0 (its files' text, broadcast once).
- Every process passes its global rank to `TrainModel` as its rank: the trainer, its callbacks and the checkpointer
  write (archive, metrics, `best.th`, checkpoints, TensorBoard logs) on global rank 0 only.
- allennlp's launch joins through a `TCPStore` that gives up after `distributed.join_timeout` seconds (default
  `JOIN_TIMEOUT`) with one line naming the address; several nodes need `primary_port`. A node waits for node 0's
  port to answer up to that timeout itself (torch's client tried once for the timeout, then again after a random
  delay: about twice the timeout), and torch's C++ messages of a failed join (some 30 lines of stack frames) go to
  the debug log, not the terminal. Node 0 refuses a `primary_port` that is in use on its machine before any work
  (it waited, then said it "could not join").
- A user error in a spawned worker is one line (`luke_allennlp.cli.user_errors`), not a `ProcessRaisedException` around a traceback.
  So is a process of the run that ended (killed by a signal, out of memory, an exit): which one and how, with the
  last checkpoint and `--recover` (on node 0; the other nodes say that node 0 holds them), and a process that lost
  the others (gloo's "Connection closed by peer").
- A node other than node 0 ends with one line saying that the trained model, the metrics and the checkpoints are on
  node 0, in which directory (it ended silently).
- `evaluate_on_test` is refused (rank 0 would evaluate alone, waiting for the others in the metrics' all-reduce).

`--recover` reads the primary's directory: `LukeCheckpointer` broadcasts rank 0's checkpoint to the others.
"""

import contextlib
import errno
import os
import socket
import sys
import tempfile
import time
import types
from dataclasses import dataclass, field
from typing import Any, Dict, Iterator, List, Optional

from luke_allennlp.cli import logger
from luke_allennlp_compat.patch import repaired, replace

TORCHRUN = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT")
JOIN_TIMEOUT = 300.0  # seconds a process of allennlp's launch waits for the others to join
WORKER_ERROR = "DistributedWorkerError: "
PEER_LOST = ("Connection closed by peer", "Connection reset by peer", "Broken pipe", "ECONNRESET", "EPIPE")


class DistributedSetupError(ValueError):
    """A distributed launch that cannot work: a config that disagrees with torchrun, a node that cannot join."""

    user_error = True  # the `allennlp` command prints it as one line (`luke_allennlp.cli.user_errors`)


class DistributedWorkerError(RuntimeError):
    """A user error in a spawned worker, on one line (the parent finds it in the worker's traceback)."""

    user_error = True


@dataclass
class Launch:
    """Where this process stands in a distributed training."""

    torchrun: bool
    world_size: int
    node_rank: int
    procs_per_node: int
    devices: List[int]
    address: str
    port: int
    join_timeout: float
    rest: Dict[str, Any] = field(default_factory=dict)  # the other keys of `distributed` (ddp_accelerator)
    rank: int = 0  # under torchrun: this process's RANK

    def global_rank(self, process_rank: int) -> int:
        """The global rank of this node's process `process_rank` (under torchrun: LOCAL_RANK, and RANK decides)."""
        return self.rank if self.torchrun else self.node_rank * self.procs_per_node + process_rank


def torchrun_environment() -> Optional[Dict[str, str]]:
    """torchrun's variables (and LOCAL_WORLD_SIZE, where set) where all are set, else None."""
    if not all(os.environ.get(name) for name in TORCHRUN):
        return None
    return {name: os.environ[name] for name in (*TORCHRUN, "LOCAL_WORLD_SIZE") if os.environ.get(name)}


def plan(section: Optional[Dict[str, Any]], node_rank: int, environment: Optional[Dict[str, str]]) -> Launch:
    """The launch a `distributed` section (popped from the config, or None) and torchrun's environment describe;
    a `DistributedSetupError` where they disagree or cannot work."""
    section = dict(section or {})
    devices = section.pop("cuda_devices", None)
    num_nodes = section.pop("num_nodes", None)
    address = section.pop("primary_address", None)
    port = section.pop("primary_port", None)
    join_timeout = float(section.pop("join_timeout", JOIN_TIMEOUT))
    if devices is not None and not (isinstance(devices, list) and all(isinstance(d, int) for d in devices)):
        raise DistributedSetupError(f"distributed.cuda_devices must be a list of device ids (-1: CPU), not {devices!r}")
    if environment is not None:
        world_size, local_rank = int(environment["WORLD_SIZE"]), int(environment["LOCAL_RANK"])
        local_world = int(environment.get("LOCAL_WORLD_SIZE", "0")) or None
        disagreements = []
        if devices is not None and local_world is not None and len(devices) != local_world:
            disagreements.append(f"cuda_devices has {len(devices)} devices, torchrun runs {local_world} per node")
        if devices is not None and num_nodes is not None and len(devices) * num_nodes != world_size:
            disagreements.append(f"num_nodes x cuda_devices is {len(devices) * num_nodes}, WORLD_SIZE {world_size}")
        if address is not None and address != environment["MASTER_ADDR"]:
            disagreements.append(f"primary_address {address}, MASTER_ADDR {environment['MASTER_ADDR']}")
        if port is not None and str(port) != environment["MASTER_PORT"]:
            disagreements.append(f"primary_port {port}, MASTER_PORT {environment['MASTER_PORT']}")
        if disagreements:
            raise DistributedSetupError(
                "the config's distributed section disagrees with torchrun's environment: "
                + "; ".join(disagreements)
                + " (leave the section out under torchrun, or make it agree)"
            )
        if devices is None:
            import torch

            devices = [d if torch.cuda.is_available() else -1 for d in range(local_world or local_rank + 1)]
        if local_rank >= len(devices):
            raise DistributedSetupError(f"LOCAL_RANK {local_rank} has no entry in distributed.cuda_devices {devices}")
        procs = local_world or len(devices)
        return Launch(
            True,
            world_size,
            int(environment["RANK"]) // procs,
            procs,
            devices,
            environment["MASTER_ADDR"],
            int(environment["MASTER_PORT"]),
            join_timeout,
            section,
            int(environment["RANK"]),
        )
    num_nodes = num_nodes or 1
    if not (isinstance(devices, list) and (len(devices) > 1 or num_nodes > 1)):
        raise DistributedSetupError(
            "distributed training needs distributed.cuda_devices with 2 or more devices, or num_nodes > 1 "
            f"(got cuda_devices {devices!r}, num_nodes {num_nodes})"
        )
    if not 0 <= node_rank < num_nodes:
        raise DistributedSetupError(f"--node-rank {node_rank} is not a node of distributed.num_nodes {num_nodes}")
    address = address or "127.0.0.1"
    if port is None:
        if num_nodes > 1:
            raise DistributedSetupError(
                f"distributed.num_nodes is {num_nodes}: set distributed.primary_port, the port every node joins "
                f"at on {address} (each node would pick a random one)"
            )
        from allennlp.common.util import find_open_port

        port = find_open_port()
    return Launch(
        False, num_nodes * len(devices), node_rank, len(devices), devices, address, int(port), join_timeout, section
    )


def join(launch: Launch, global_rank: int, device: int) -> None:
    """`init_process_group` for this process: torchrun's store (`env://`), or a `TCPStore` at the primary's address
    that fails with one line after `join_timeout` seconds."""
    import datetime

    import torch
    import torch.distributed as dist

    backend = "nccl" if device >= 0 else "gloo"
    if device >= 0:
        torch.cuda.set_device(device)
    if launch.torchrun:
        dist.init_process_group(backend, init_method="env://")
        return
    where = f"{launch.address}:{launch.port}"
    deadline = time.monotonic() + launch.join_timeout

    def failed(reason: str) -> DistributedSetupError:
        return DistributedSetupError(
            f"process {global_rank} (node {launch.node_rank}) could not join the process group at {where} within "
            f"{launch.join_timeout:g} s (distributed.join_timeout): {reason}. Is node 0 running, and {where} "
            "reachable from this node?"
        )

    if global_rank == 0:
        check_port(launch)
    elif not _answers(launch.address, launch.port, deadline):
        raise failed("nothing answers there")
    try:
        with _native_output_to_log():  # (torch's C++ warnings and stack frames of a failed join)
            store = dist.TCPStore(
                launch.address,
                launch.port,
                launch.world_size,
                is_master=global_rank == 0,
                timeout=datetime.timedelta(seconds=max(deadline - time.monotonic(), 1.0)),
                wait_for_workers=True,
            )
            dist.init_process_group(backend, store=store, rank=global_rank, world_size=launch.world_size)
    except (RuntimeError, OSError) as e:
        if global_rank == 0 and _address_in_use(e):
            raise DistributedSetupError(_port_in_use(launch)) from e
        first = str(e).strip().splitlines()[0].rstrip(".") if str(e).strip() else type(e).__name__
        raise failed(first) from e
    store.set_timeout(datetime.timedelta(minutes=30))  # collectives' own timeout from here on


def _answers(address: str, port: int, deadline: float) -> bool:
    """Whether something accepts connections at `address:port` before `deadline` (tried every half second)."""
    while True:
        try:
            with socket.create_connection((address, port), timeout=max(min(deadline - time.monotonic(), 2.0), 0.1)):
                return True
        except OSError:
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            time.sleep(min(0.5, left))


def _address_in_use(error: BaseException) -> bool:
    return getattr(error, "errno", None) == errno.EADDRINUSE or any(
        words in str(error) for words in ("EADDRINUSE", "address already in use", "Address already in use")
    )


def _port_in_use(launch: Launch) -> str:
    return (
        f"port {launch.port} (distributed.primary_port) is in use on this machine (another training, or another "
        "program): choose another primary_port for every node, or stop what uses it"
    )


def check_port(launch: Launch) -> None:
    """On node 0 of allennlp's launch: refuses, in one line, a `primary_port` that something on this machine already
    listens at (the join waited, then said it "could not join")."""
    if launch.torchrun or launch.node_rank != 0:
        return
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # (a port in TIME_WAIT is free for the store)
        try:
            probe.bind(("", launch.port))
        except OSError as error:
            if error.errno == errno.EADDRINUSE:
                raise DistributedSetupError(_port_in_use(launch)) from None


@contextlib.contextmanager
def _native_output_to_log() -> Iterator[None]:
    """What native code writes to the standard error (file descriptor 2) inside the block goes to the debug log
    instead (torch's c10d prints its warnings, and the stack frames of its errors, there)."""
    try:
        saved = os.dup(2)
    except OSError:
        yield
        return
    with tempfile.TemporaryFile() as captured:
        sys.stderr.flush()
        os.dup2(captured.fileno(), 2)
        try:
            yield
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            captured.seek(0)
            text = captured.read().decode("utf-8", "replace").strip()
            if text:
                logger.debug("torch's output while joining:\n%s", text)


def broadcast(value: Any) -> Any:
    """Rank 0's `value` in every process (a pickled broadcast)."""
    import torch.distributed as dist

    box = [value]
    dist.broadcast_object_list(box, 0)
    return box[0]


def vocabulary_files(directory: str) -> Dict[str, str]:
    return {name: open(os.path.join(directory, name), encoding="utf-8").read() for name in os.listdir(directory)}


def prepare_directory(params: Any, serialization_dir: str, recover: bool, force: bool, dry_run: bool) -> Dict:
    """The primary's preparation of the serialization directory (allennlp's checks, `config.json`, `meta.json`, the
    vocabulary, built before any process group exists so that the readers see all the data). Returns the
    vocabulary's files and special tokens."""
    from allennlp.commands.train import CONFIG_NAME, META_NAME
    from allennlp.common.meta import Meta
    from allennlp.data import Vocabulary
    from allennlp.training import util as training_util

    training_util.create_serialization_dir(params, serialization_dir, recover, force)
    params.to_file(os.path.join(serialization_dir, CONFIG_NAME))
    Meta.new().to_file(os.path.join(serialization_dir, META_NAME))
    directory = os.path.join(serialization_dir, "vocabulary")
    without_distributed = params.duplicate()
    without_distributed.params.pop("distributed", None)
    without_distributed.pop("evaluation", None)
    without_distributed.pop("include_in_archive", None)
    if recover:
        vocabulary = Vocabulary.from_files(directory)
    else:
        vocabulary = training_util.make_vocab_from_params(without_distributed, serialization_dir, dry_run)
    return {
        "files": vocabulary_files(directory),
        "padding": vocabulary._padding_token,
        "oov": vocabulary._oov_token,
        "directory": os.path.abspath(serialization_dir),  # (where the results will be: the other nodes say so)
        "host": socket.gethostname(),
    }


def repair_train(module: types.ModuleType) -> None:
    original = module.train_model
    if repaired(original):
        return

    def train_model(
        params,
        serialization_dir,
        recover=False,
        force=False,
        node_rank=0,
        include_package=None,
        dry_run=False,
        file_friendly_logging=False,
        return_model=None,
    ):
        started = time.time() - 1  # (file times may be rounded down to the second)
        environment = torchrun_environment()
        if environment is not None and int(environment["WORLD_SIZE"]) == 1:
            plan(params.params.get("distributed"), 0, environment)  # the section must agree all the same
            params.params.pop("distributed", None)
            environment = None
        if environment is None and params.params.get("distributed") is None:
            return original(
                params,
                serialization_dir,
                recover,
                force,
                node_rank,
                include_package,
                dry_run,
                file_friendly_logging,
                return_model,
            )
        from allennlp.common import logging as common_logging

        common_logging.FILE_FRIENDLY_LOGGING = file_friendly_logging
        launch = plan(params.params.get("distributed"), node_rank, environment)
        check_port(launch)  # (before node 0 reads the data for the vocabulary)
        if params.get("evaluate_on_test", False):
            raise DistributedSetupError(
                "evaluate_on_test under distributed training would evaluate on rank 0 alone and wait for the others: "
                "leave it out and run `allennlp evaluate` on the archive"
            )
        serialization_dir = str(serialization_dir)
        arguments = (serialization_dir, recover, force, include_package, dry_run, file_friendly_logging)

        def trained(primary: bool) -> Any:
            """The trained model where asked for (`return_model=True`), from the archive, in the primary alone."""
            if not (return_model and primary and not dry_run):
                return None
            from allennlp.models.archival import load_archive

            return load_archive(os.path.join(serialization_dir, "model.tar.gz")).model

        if launch.torchrun:
            try:
                _worker(int(environment["LOCAL_RANK"]), launch, params, *arguments, None)  # no spawn
            except RuntimeError as e:
                if not _peer_lost(e):
                    raise
                raise DistributedWorkerError(
                    f"{_lost(launch.rank, e)}: {_what_is_left(launch, serialization_dir, started)}"
                ) from e
            return trained(launch.rank == 0)
        vocabulary = None
        if launch.node_rank == 0:
            vocabulary = prepare_directory(params, serialization_dir, recover, force, dry_run)
            common_logging.prepare_global_logging(serialization_dir, rank=0, world_size=1)
        logger.info(
            "Distributed training: node %d of %d, %d processes here, world size %d, primary at %s:%d",
            launch.node_rank,
            launch.world_size // launch.procs_per_node,
            launch.procs_per_node,
            launch.world_size,
            launch.address,
            launch.port,
        )
        import torch.distributed
        from torch.multiprocessing import ProcessExitedException, ProcessRaisedException

        worker_arguments = (launch, params.duplicate(), *arguments, vocabulary)
        try:
            if launch.procs_per_node == 1:  # this process is the node's one worker: no spawn
                try:
                    _spawned_worker(0, *worker_arguments)
                finally:
                    if torch.distributed.is_initialized():
                        torch.distributed.destroy_process_group()
            else:
                module.mp.spawn(_spawned_worker, args=worker_arguments, nprocs=launch.procs_per_node)
        except ProcessExitedException as e:  # a worker killed (SIGKILL: out of memory?) or gone with an exit code
            how = f"killed by {e.signal_name}" if e.signal_name else f"ended with exit code {e.exit_code}"
            raise DistributedWorkerError(
                f"process {launch.global_rank(e.error_index)} of the training (on this node, PID {e.error_pid}) {how}"
                f"{' (out of memory? see the kernel log)' if e.signal_name == 'SIGKILL' else ''} while training; "
                f"{_what_is_left(launch, serialization_dir, started)}"
            ) from e
        except (ProcessRaisedException, RuntimeError) as e:
            message = [line for line in str(e).splitlines() if WORKER_ERROR in line]
            if message:
                told = message[-1].split(WORKER_ERROR, 1)[1]
                if told.endswith(LOST_ADVICE):
                    told = told[: -len(LOST_ADVICE)] + _what_is_left(launch, serialization_dir, started)
                raise DistributedWorkerError(told) from e
            raise
        if launch.node_rank == 0 and not dry_run:
            module.archive_model(serialization_dir, include_in_archive=params.get("include_in_archive", None))
        return trained(launch.node_rank == 0)

    replace(module, "train_model", train_model)


def done_line(launch: Launch, primary: Dict[str, Any], serialization_dir: str) -> str:
    """The closing line of a node other than node 0: where the results are."""
    ranks = [launch.global_rank(i) for i in range(launch.procs_per_node)] if not launch.torchrun else [launch.rank]
    return (
        f"allennlp train: node {launch.node_rank} done (processes {', '.join(map(str, ranks))} of "
        f"{launch.world_size}). The trained model, its metrics and the checkpoints are on node 0 "
        f"({primary.get('host', 'its host')}), in {primary.get('directory', 'its serialization directory')}; "
        f"this node wrote only its logs (out_worker*.log) in {serialization_dir}"
    )


def _spawned_worker(process_rank: int, *args: Any) -> None:
    """A worker of allennlp's launch: this project's plugins imported, a user error raised as one line."""
    from allennlp.common.plugins import import_plugins

    from luke_allennlp.cli.user_errors import one_line, user_error

    import_plugins()
    try:
        _worker(process_rank, *args)
    except Exception as e:
        if os.environ.get("ALLENNLP_DEBUG"):
            raise
        if _peer_lost(e):  # (the parent replaces the advice with what its node holds)
            raise DistributedWorkerError(f"{_lost(args[0].global_rank(process_rank), e)}: {LOST_ADVICE}") from e
        shown = user_error(e)
        if shown is None:
            raise
        raise DistributedWorkerError(one_line(shown)) from e


LOST_ADVICE = "see the other nodes' output for why"


def _peer_lost(error: BaseException) -> bool:
    """Whether `error` (or one in its chain) is gloo's or the store's word that another process of the run is gone."""
    seen = set()
    while error is not None and id(error) not in seen:
        if isinstance(error, (RuntimeError, OSError)) and any(words in str(error) for words in PEER_LOST):
            return True
        seen.add(id(error))
        error = error.__cause__ or error.__context__
    return False


def _lost(global_rank: int, error: BaseException) -> str:
    first = next((line.strip() for line in str(error).splitlines() if line.strip()), type(error).__name__)
    return (
        f"process {global_rank} of the training lost the others ({first[:200]}): another process of the run ended "
        "(killed, out of memory, or failed on its node)"
    )


def _what_is_left(launch: Launch, serialization_dir: str, started: float) -> str:
    """What a training stopped by a lost process leaves, and how to resume: node 0's checkpoints."""
    if launch.node_rank == 0:
        from luke_allennlp.cli.user_errors import training_state

        return training_state(serialization_dir, started)
    return (
        "the checkpoints are on node 0: run the same `allennlp train --recover` on every node to resume from node 0's "
        "last checkpoint"
    )


def _worker(
    process_rank: int,
    launch: Launch,
    params: Any,
    serialization_dir: str,
    recover: bool,
    force: bool,
    include_package: Optional[List[str]],
    dry_run: bool,
    file_friendly_logging: bool,
    vocabulary: Optional[Dict],
) -> None:
    """One training process: joins the process group, receives the vocabulary, trains; global rank 0 writes."""
    import shutil
    import tempfile

    import torch.distributed as dist
    from allennlp.commands.train import TrainModel
    from allennlp.common import Params
    from allennlp.common import logging as common_logging
    from allennlp.common import util as common_util
    from allennlp.models.archival import archive_model
    from allennlp.nn.parallel import DdpAccelerator

    from luke_allennlp.cli.user_errors import one_line, user_error

    common_logging.FILE_FRIENDLY_LOGGING = file_friendly_logging
    for package in include_package or []:
        common_util.import_module_and_submodules(package)
    global_rank = launch.global_rank(process_rank)
    device = int(launch.devices[process_rank])
    failure = None
    if launch.torchrun and global_rank == 0:  # the primary prepares the directory before the others may write there
        try:
            vocabulary = prepare_directory(params, serialization_dir, recover, force, dry_run)
        except Exception as e:  # told to the others once they have joined
            failure = e
    join(launch, global_rank, device)
    vocabulary_dir = None
    try:
        told = broadcast(None if failure is None else one_line(user_error(failure) or failure))
        if failure is not None:
            raise failure
        if told is not None:
            raise DistributedSetupError(f"rank 0 could not prepare {serialization_dir}: {told}")
        vocabulary = broadcast(vocabulary)
        os.makedirs(serialization_dir, exist_ok=True)
        common_logging.prepare_global_logging(serialization_dir, rank=global_rank, world_size=launch.world_size)
        common_util.prepare_environment(params)
        os.environ["ALLENNLP_PROCS_PER_NODE"] = str(launch.procs_per_node)
        if global_rank == 0:
            vocabulary_dir = None
            directory = os.path.join(serialization_dir, "vocabulary")
        else:  # the primary's vocabulary, whether or not this node sees its directory
            directory = vocabulary_dir = tempfile.mkdtemp(prefix="allennlp-vocabulary-")
            for name, text in vocabulary["files"].items():
                with open(os.path.join(directory, name), "w", encoding="utf-8") as f:
                    f.write(text)
        params.params.pop("distributed", None)
        params.pop("evaluation", None)
        include_in_archive = params.pop("include_in_archive", None)
        params["vocabulary"] = {
            "type": "from_files",
            "directory": directory,
            "padding_token": vocabulary["padding"],
            "oov_token": vocabulary["oov"],
        }
        params["trainer"]["cuda_device"] = device
        params["trainer"]["world_size"] = launch.world_size
        params["trainer"]["distributed"] = True
        accelerator = None
        if "ddp_accelerator" in launch.rest:
            accelerator = DdpAccelerator.from_params(
                Params(dict(launch.rest)["ddp_accelerator"]),
                local_rank=global_rank,
                world_size=launch.world_size,
                cuda_device=device,
            )
        logger.info("Process %d of %d joined (device %d)", global_rank, launch.world_size, device)
        # The global rank is the trainer's rank: only global rank 0 writes.
        train_loop = TrainModel.from_params(
            params=params, serialization_dir=serialization_dir, local_rank=global_rank, ddp_accelerator=accelerator
        )
        if dry_run:
            return
        dist.barrier()
        try:
            metrics = train_loop.run()
        except (KeyboardInterrupt, common_util.SigTermReceived):
            best = train_loop.trainer.get_best_weights_path() if global_rank == 0 else None
            if best is not None:
                archive_model(serialization_dir, weights=best, include_in_archive=include_in_archive)
            raise
        if global_rank == 0:
            train_loop.finish(metrics)
            if launch.torchrun:
                archive_model(serialization_dir, include_in_archive=include_in_archive)
        elif process_rank == 0:
            sys.stderr.write(f"{done_line(launch, vocabulary, serialization_dir)}\n")  # (a node's first process)
    finally:
        if vocabulary_dir is not None:
            shutil.rmtree(vocabulary_dir, ignore_errors=True)
        if launch.torchrun and dist.is_initialized():
            dist.destroy_process_group()
