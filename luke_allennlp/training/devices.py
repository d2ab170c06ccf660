"""The GPUs this machine has, and what is wrong with a setting that names one it lacks (checked before any work by
the trainer and by `allennlp train`, `luke_allennlp.cli.devices`)."""

from typing import Optional


def gpu_count() -> int:
    import torch

    return torch.cuda.device_count() if torch.cuda.is_available() else 0


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
