"""
Training precision: fp32, bf16 autocast without a gradient scaler, or fp16 autocast with allennlp's scaler
(`use_amp`); "auto" picks bf16 on a GPU that computes in it natively. TF32 for what stays in fp32 on CUDA.
"""

import contextlib
from typing import Any, Optional, Union

import torch
from allennlp.common.checks import ConfigurationError

PRECISIONS = ("auto", "fp32", "bf16", "fp16")


def check_precision(precision: str, use_amp: bool) -> None:
    """A one-line `ConfigurationError` for an unknown precision, or one that contradicts `use_amp`."""
    if precision not in PRECISIONS:
        raise ConfigurationError(f"precision must be one of {PRECISIONS}, not {precision!r}")
    if use_amp and precision not in ("auto", "fp16"):
        raise ConfigurationError(f'use_amp is fp16 mixed precision: it contradicts precision "{precision}"')


def resolve_precision(precision: str, use_amp: bool, device: torch.device) -> str:
    """What `"auto"` means on `device`: fp16 with `use_amp`, else bf16 on a GPU that computes in bf16 natively
    (compute capability 8.0 or more: Ampere, Hopper, ...; `torch.cuda.is_bf16_supported()` also says yes on a V100
    or T4, which only emulate it, slowly), else fp32."""
    if precision != "auto":
        return precision
    if use_amp:
        return "fp16"
    return "bf16" if device.type == "cuda" and torch.cuda.get_device_capability(device) >= (8, 0) else "fp32"


def allow_tf32(device: torch.device, allowed: bool) -> bool:
    """Lets fp32 matmuls and convolutions use TF32 tensor cores on CUDA (or not); whether they do."""
    if device.type != "cuda":
        return False
    torch.backends.cuda.matmul.allow_tf32 = allowed
    torch.backends.cudnn.allow_tf32 = allowed
    return allowed


def autocast(precision: str, device: torch.device) -> contextlib.AbstractContextManager:
    """The forward pass's autocast for a resolved `precision` (none for fp32)."""
    if precision == "fp32":
        return contextlib.nullcontext()
    return torch.autocast(device.type, dtype=torch.bfloat16 if precision == "bf16" else torch.float16)


def scaled(loss: torch.Tensor, scaler: Optional[Any]) -> torch.Tensor:
    """The loss to call `backward` on: scaled by fp16's gradient scaler, where there is one."""
    return scaler.scale(loss) if scaler is not None else loss


def gradient_norm(
    model: torch.nn.Module, grad_norm: Union[float, bool], scaler: Optional[Any], optimizer: Any, ddp_model: Any
) -> Optional[torch.Tensor]:
    """allennlp's `rescale_gradients` (clip to `grad_norm`, or only measure with `True`), the true gradients under
    fp16 (unscaled first), returning the norm as a tensor on the device: read when reported, not every step."""
    if isinstance(grad_norm, bool) and not grad_norm:
        return None
    parameters = [p for p in model.parameters() if p.grad is not None]
    if isinstance(grad_norm, bool):
        return torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(p.grad.detach()) for p in parameters]))
    if scaler is not None:
        scaler.unscale_(optimizer)
    if ddp_model is not None and ddp_model.is_sharded:
        return ddp_model.clip_grad_norm_(grad_norm)
    return torch.nn.utils.clip_grad_norm_(parameters, grad_norm)
