"""
Dropout for the CPU's eager training steps, where drawing the mask is much of the cost of dropout itself.

`F.dropout` on the CPU draws a Bernoulli sample per element (`bernoulli_`, about 8 ns an element on one core), then
divides and multiplies in two more passes. Here each element is kept where a 31-bit random integer from the same
generator (`random_`, about 3 ns an element) is at least `p * 2**31`: dropped with probability `p` to 2**-31, as
MKL's Bernoulli sampler has it. The mask is drawn in cache-sized chunks straight into its float form (0 or
`1 / (1 - p)`, the values `F.dropout` multiplies by), which one multiplication applies (with the residual, one
`addcmul`). Elsewhere (GPUs, under `torch.compile`, which generates its own random numbers, or outside training) it
is `F.dropout`.
"""

from typing import Optional

import torch
import torch.nn.functional as F
from torch import nn

_CHUNK = 1 << 16  # elements drawn at a time: buffers that stay in cache


def fast_dropout_applies(x: torch.Tensor, p: float, training: bool) -> bool:
    """Whether `dropout` draws its own mask for `x`: training with `p` in (0, 1) on the CPU, eagerly."""
    return training and 0.0 < p < 1.0 and x.device.type == "cpu" and not torch.compiler.is_compiling()


def keep(out: torch.Tensor, p: float, scale: float = 1.0, times: Optional[torch.Tensor] = None) -> torch.Tensor:
    """Fills `out` (contiguous) with `scale` (kept: probability 1 - p) or 0 (dropped), from the default generator;
    with `times` (shaped as `out`, contiguous), with those values times `times`' elements."""
    flat = out.view(-1)
    factors = None if times is None else times.view(-1)
    threshold = round(p * 2**31)
    draws = torch.empty(min(_CHUNK, flat.numel()), dtype=torch.int32, device=out.device)
    for start in range(0, flat.numel(), _CHUNK):
        chunk = flat[start : start + _CHUNK]
        torch.ge(draws[: chunk.numel()].random_(), threshold, out=chunk)  # uniform on [0, 2**31): 1 kept, 0 dropped
        if scale != 1.0:
            chunk.mul_(scale)
        if factors is not None:
            chunk.mul_(factors[start : start + _CHUNK])
    return out


def _mask(like: torch.Tensor, p: float) -> torch.Tensor:
    """0 (dropped, probability p) or 1 / (1 - p), shaped as `like`."""
    return keep(torch.empty(like.shape, dtype=like.dtype, device=like.device), p, 1.0 / (1.0 - p))


def dropout(x: torch.Tensor, p: float, training: bool) -> torch.Tensor:
    """`F.dropout(x, p, training)`; its mask drawn as the module says where `fast_dropout_applies` (autograd keeps
    the mask)."""
    if not fast_dropout_applies(x, p, training):
        return F.dropout(x, p, training)
    return x * _mask(x, p)


def dropout_add(x: torch.Tensor, residual: torch.Tensor, p: float, training: bool) -> torch.Tensor:
    """`dropout(x, p, training) + residual`, in one pass where `fast_dropout_applies`."""
    if not fast_dropout_applies(x, p, training):
        return F.dropout(x, p, training) + residual
    return torch.addcmul(residual, x, _mask(x, p))


class Dropout(nn.Dropout):
    """`nn.Dropout` through `dropout` (the same `p` and law of outputs; its mask drawn faster on the CPU)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return dropout(x, self.p, self.training)
