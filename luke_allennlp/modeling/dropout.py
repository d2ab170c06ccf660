"""
Dropout for the CPU's eager training steps, where drawing the mask is much of the cost of dropout itself.

`F.dropout` on the CPU draws a Bernoulli sample per element (`bernoulli_`, about 8 ns an element on one core), then
divides and multiplies in two more passes; torch's own integers (`random_`, one mt19937 call an element) still cost
about 3 ns. Here the random bits come from numpy's SFC64 (a small chaotic generator that passes PractRand and
BigCrush; 1.3 ns for two elements' 32 bits on this project's machine), seeded at each call by a draw from torch's
default generator, so that `torch.manual_seed` and `fork_rng` reproduce the masks (not the masks torch's own draws
would give from the same seed). Each element is kept where its 32 random bits, read as an int32, are at least
`-2**31 + p * 2**32`: dropped with probability `p` to 2**-32. The mask is drawn in cache-sized chunks straight into
its float form (0 or `1 / (1 - p)`, the values `F.dropout` multiplies by), which one multiplication applies (with the
residual, `dropout_add`'s one pass, whose backward pass is the one multiplication by the mask). Elsewhere (GPUs,
under `torch.compile`, which generates its own random numbers, or outside training) it is `F.dropout`.
"""

from typing import Any, Optional, Tuple

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

_CHUNK = 1 << 16  # elements drawn at a time: buffers that stay in cache


def fast_dropout_applies(x: torch.Tensor, p: float, training: bool) -> bool:
    """Whether `dropout` draws its own mask for `x`: training with `p` in (0, 1) on the CPU, eagerly."""
    return training and 0.0 < p < 1.0 and x.device.type == "cpu" and not torch.compiler.is_compiling()


def keep(out: torch.Tensor, p: float, scale: float = 1.0, times: Optional[torch.Tensor] = None) -> torch.Tensor:
    """Fills `out` (contiguous, on the CPU) with `scale` (kept: probability 1 - p) or 0 (dropped), from bits seeded
    by the default generator; with `times` (shaped as `out`, contiguous), with those values times `times`' elements."""
    flat = out.view(-1)
    factors = None if times is None else times.view(-1)
    threshold = min(-(2**31) + round(p * 2**32), 2**31 - 1)  # (an int32 below it: probability p)
    seed = int(torch.empty((), dtype=torch.int64).random_())
    bits = np.random.SFC64(seed)
    for start in range(0, flat.numel(), _CHUNK):
        chunk = flat[start : start + _CHUNK]
        words = torch.from_numpy(bits.random_raw((chunk.numel() + 1) // 2).view(np.int32))  # uniform 32-bit words
        torch.ge(words[: chunk.numel()], threshold, out=chunk)  # 1 kept, 0 dropped
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
    return _DropoutAdd.apply(x, residual, _mask(x, p))


class _DropoutAdd(torch.autograd.Function):
    """`residual + x * mask` (`addcmul`), whose backward pass multiplies by the mask alone (`addcmul`'s would also
    multiply it by its `value`, 1, in a pass of its own) and hands the gradient to the residual unchanged. Forward
    mode (`jvp`) and `torch.func.vmap` (a rule generated from `forward`) take it too."""

    generate_vmap_rule = True

    @staticmethod
    def forward(x: torch.Tensor, residual: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:  # type: ignore[override]
        return torch.addcmul(residual, x, mask)

    @staticmethod
    def setup_context(ctx: Any, inputs: Tuple[torch.Tensor, ...], output: torch.Tensor) -> None:
        ctx.save_for_backward(inputs[2])
        ctx.save_for_forward(inputs[2])

    @staticmethod
    def jvp(ctx: Any, x_t: Optional[torch.Tensor], residual_t: Optional[torch.Tensor], mask_t: Any) -> torch.Tensor:
        (mask,) = ctx.saved_tensors
        if x_t is None:
            return residual_t
        return x_t * mask if residual_t is None else torch.addcmul(residual_t, x_t, mask)

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> Any:  # type: ignore[override]
        (mask,) = ctx.saved_tensors
        needs = ctx.needs_input_grad
        return grad * mask if needs[0] else None, grad if needs[1] else None, None


class Dropout(nn.Dropout):
    """`nn.Dropout` through `dropout` (the same `p` and law of outputs; its mask drawn faster on the CPU)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return dropout(x, self.p, self.training)
