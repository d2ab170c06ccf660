"""The GPUs this machine has, the device a `cuda_device` setting names, and what is wrong with a setting that names
one it lacks (checked before any work by the trainer and by `allennlp train`, `luke_allennlp.cli.devices`)."""

import subprocess
from typing import Optional, Union

import torch
from allennlp.common.checks import ConfigurationError


def gpu_count() -> int:
    return torch.cuda.device_count() if torch.cuda.is_available() else 0


def gpu_memory_gib() -> int:
    """The first GPU's memory in whole GiB; 0 without a GPU. Asked of `nvidia-smi` where there is one: torch would
    initialise CUDA in this process (a context on the GPU, and no CUDA in processes forked after)."""
    if not gpu_count():
        return 0
    try:
        query = ["nvidia-smi", "--query-gpu=memory.total", "--format=csv,noheader,nounits", "--id=0"]
        mib = subprocess.run(query, capture_output=True, text=True, timeout=30, check=True).stdout
        return int(mib.split()[0]) // 1024
    except (OSError, subprocess.SubprocessError, ValueError, IndexError):
        return torch.cuda.get_device_properties(0).total_memory // 2**30


def missing_gpu(setting: str, index: int) -> Optional[str]:
    """What is wrong with `setting` naming GPU `index` on this machine, if anything."""
    available = gpu_count()
    if index < available:
        return None
    has = "no GPU" if not available else f"only {available} GPU{'s' if available > 1 else ''}"
    return (
        f'{setting} is {index}, but this machine has {has}: set it to "auto" (a GPU where there is one, else the '
        "CPU) or -1 (the CPU)"
    )


def resolve_cuda_device(cuda_device: Union[None, int, str, torch.device]) -> Union[int, torch.device]:
    """The device `cuda_device` names: `"auto"` (or None) is the first GPU where there is one, else the CPU (-1).
    Raises a one-line `ConfigurationError` for a GPU that this machine does not have."""
    if cuda_device is None or cuda_device == "auto":
        return 0 if torch.cuda.is_available() else -1
    if isinstance(cuda_device, str):
        try:
            cuda_device = int(cuda_device) if cuda_device.lstrip("-").isdigit() else torch.device(cuda_device)
        except RuntimeError:
            raise ConfigurationError(
                f'trainer.cuda_device must be "auto", a GPU index, or -1 (the CPU), not {cuda_device!r}'
            ) from None
    index = cuda_device if isinstance(cuda_device, int) else None
    if isinstance(cuda_device, torch.device) and cuda_device.type == "cuda":
        index = cuda_device.index or 0
    problem = missing_gpu("trainer.cuda_device", index) if index is not None and index >= 0 else None
    if problem:
        raise ConfigurationError(problem)
    return cuda_device


def describe_device(device: torch.device) -> str:
    if device.type == "cuda":
        return f"{device} ({torch.cuda.get_device_name(device)})"
    return "the CPU" + ("" if torch.cuda.is_available() else " (no GPU found)")
