"""
Training runs as child processes: `allennlp train` (the real command, with this project's behaviours: its lock on
the serialization directory, its one-line errors, `--recover`), each with its console written to a log file, on a
device of its own, several at a time where the machine allows.

Where they run (`devices`): a config that trains on the GPU where there is one (`trainer.cuda_device` "auto", the
project's configs) gets one run per GPU, each seeing only its own (`CUDA_VISIBLE_DEVICES`); on the CPU (no GPU, or
`cuda_device` -1) `jobs` runs at once, each with its share of the cores (`OMP_NUM_THREADS`: the cores divided by
`jobs`, however many runs are left, so that a run resumed alone computes with the threads it began with); a config that names a
GPU, or trains with several processes (`distributed`), one run at a time as it says.
"""

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence

POLL_SECONDS = 0.2


@dataclass(frozen=True)
class Device:
    """Where a run trains: `gpu`, the `CUDA_VISIBLE_DEVICES` it sees (None: as this process); `threads`, its CPU
    threads (None: as many as torch takes)."""

    gpu: Optional[str] = None
    threads: Optional[int] = None

    def describe(self) -> str:
        if self.gpu is not None:
            return f"GPU {self.gpu}"
        return f"CPU, {self.threads} threads" if self.threads else "as configured"

    def environment(self) -> Dict[str, str]:
        env = {}
        if self.gpu is not None:
            env["CUDA_VISIBLE_DEVICES"] = self.gpu
        if self.threads is not None:
            env.update(OMP_NUM_THREADS=str(self.threads), MKL_NUM_THREADS=str(self.threads))
        return env


def cpu_count() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def visible_gpus() -> List[str]:
    """This process's GPUs as `CUDA_VISIBLE_DEVICES` entries (asked of torch without initialising CUDA here)."""
    from luke_allennlp.training.devices import gpu_count

    count = gpu_count()
    listed = [g.strip() for g in os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",") if g.strip()]
    return listed[:count] if len(listed) >= count else [str(i) for i in range(count)]


def devices(config: Dict[str, Any], runs: int, jobs: Optional[int] = None) -> List[Device]:
    """The devices to run `runs` trainings of `config` (a resolved config) on at once (see the module's doc);
    `jobs` bounds how many (default: one per GPU, or on the CPU one per 4 cores)."""
    if jobs is not None and jobs < 1:
        raise ValueError(f"--jobs must be at least 1, not {jobs}")
    cuda_device = (config.get("trainer") or {}).get("cuda_device", "auto")
    if config.get("distributed") or (isinstance(cuda_device, int) and cuda_device >= 0):
        return [Device()]  # one run at a time, on the devices the config names
    gpus = visible_gpus() if cuda_device in ("auto", None) else []
    if gpus:
        return [Device(gpu=gpu) for gpu in gpus[: max(1, min(runs, jobs or len(gpus)))]]
    cores = cpu_count()
    jobs = jobs or max(1, cores // 4)
    # Each run's threads from `jobs`, however many runs are left: a run resumed alone computes as it began.
    return [Device(threads=max(1, cores // jobs)) for _ in range(max(1, min(runs, jobs)))]


def train_command(
    config: str,
    serialization_dir: str,
    overrides: Optional[Dict[str, Any]] = None,
    recover: bool = False,
    force: bool = False,
    include_package: Sequence[str] = (),
    file_friendly_logging: bool = True,
) -> List[str]:
    """The `allennlp train` command line of a run (this Python's allennlp)."""
    command = [sys.executable, "-m", "allennlp", "train", config, "-s", serialization_dir]
    if overrides:
        command += ["-o", json.dumps(overrides)]
    command += ["--recover"] if recover else []
    command += ["-f"] if force else []
    command += ["--file-friendly-logging"] if file_friendly_logging else []
    for package in include_package:
        command += ["--include-package", package]
    return command


@dataclass
class Job:
    """A run to start: its name (for messages), command line and log file; what the caller keeps with it."""

    name: str
    command: List[str]
    log: str
    data: Any = None
    environment: Dict[str, str] = field(default_factory=dict)  # set in its process's environment
    process: Optional[subprocess.Popen] = field(default=None, repr=False)
    device: Optional[Device] = None
    started: float = 0.0

    def last_line(self) -> str:
        """The log's last line (a failed `allennlp` command's one-line error)."""
        try:
            with open(self.log, encoding="utf-8", errors="replace") as f:
                lines = [line.strip() for line in f.read()[-20000:].splitlines() if line.strip()]
        except OSError:
            return ""
        errors = [line for line in lines if line.startswith("allennlp: error:") or "Error" in line.split(":")[0]]
        return (errors or lines or [""])[-1]


def _start(job: Job, device: Device) -> None:
    os.makedirs(os.path.dirname(os.path.abspath(job.log)), exist_ok=True)
    env = {**os.environ, **device.environment(), **job.environment}
    with open(job.log, "a", encoding="utf-8") as log:
        log.write(f"$ {' '.join(job.command)}\n")
        log.flush()
        job.process = subprocess.Popen(job.command, stdout=log, stderr=subprocess.STDOUT, env=env)
    job.device, job.started = device, time.time()


def run_jobs(
    slots: Sequence[Device],
    next_job: Callable[[], Optional[Job]],
    finished: Callable[[Job, int], None],
    tick: Callable[[List[Job]], None] = lambda running: None,
) -> None:
    """Runs jobs on `slots` until `next_job` has none left (asked each time a slot is free) and all have ended,
    calling `finished(job, exit status)` as each ends and `tick(running jobs)` while they run. Interrupted (Ctrl-C,
    SIGTERM) or failing, it stops the running jobs (SIGTERM: `allennlp train` keeps its last checkpoint), waits for
    them and raises."""
    free = list(slots)
    running: List[Job] = []
    exhausted = False
    try:
        while True:
            while free and not exhausted:
                job = next_job()
                if job is None:
                    exhausted = True
                    break
                _start(job, free.pop(0))
                running.append(job)
            if not running:
                return
            time.sleep(POLL_SECONDS)
            tick(running)
            for job in list(running):
                code = job.process.poll()
                if code is not None:
                    running.remove(job)
                    free.append(job.device)
                    finished(job, code)
    finally:
        stop(running)


def stop(jobs: Sequence[Job], grace_seconds: float = 60.0) -> None:
    """SIGTERM to each running job, then waits (SIGKILL after `grace_seconds`)."""
    for job in jobs:
        if job.process is not None and job.process.poll() is None:
            job.process.terminate()
    deadline = time.time() + grace_seconds
    for job in jobs:
        if job.process is None:
            continue
        try:
            job.process.wait(timeout=max(0.1, deadline - time.time()))
        except subprocess.TimeoutExpired:
            job.process.kill()
            job.process.wait()
