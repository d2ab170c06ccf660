"""
Linear layers for inference on the CPU with MKL's packed weights.

`F.linear` on the CPU calls MKL's sgemm, which repacks the weight matrix into its panel layout at every call; for the
few hundred rows of a batch of sentences that is 15-25% of the multiplication (`benchmarks/RESULTS.md`).
`torch.ops.mkl._mkl_linear` multiplies by a weight packed once (`_mkl_reorder_linear_weight`, the packing that
inductor's CPU freezing uses), with the same kernels and so the same results. Weights are packed at their second use
(a single prediction does not pay for packing) and kept per module
and only under `torch.inference_mode()` in evaluation mode (predictions, `benchmarks/cpu_vs_transformers.py`): they
take about twice the memory of the weights, and they are packed again when a weight's version changes (an in-place
update: an optimizer step, `load_state_dict`) and dropped when the module returns to training mode. Anything else
(training, gradients, GPUs, `torch.compile`, other dtypes, no MKL) is `F.linear`.
"""

from typing import Dict, Hashable, Optional, Sequence, Tuple

import torch
import torch.nn.functional as F
from torch import nn

_CACHE = "_packed_weights"


def _mkl_available() -> bool:
    return torch.backends.mkl.is_available() and hasattr(torch.ops.mkl, "_mkl_linear")


def packing_applies(module: nn.Module, x: torch.Tensor, weight: torch.Tensor) -> bool:
    """Inference mode, evaluation mode, the CPU, float32, eagerly, with MKL."""
    return (
        not torch.compiler.is_compiling()  # (first: dynamo cannot trace `is_inference_mode_enabled`)
        and torch.is_inference_mode_enabled()
        and not module.training
        and x.device.type == "cpu"
        and x.dtype == weight.dtype == torch.float32
        and _mkl_available()
    )


def linear(
    module: nn.Module,
    key: Hashable,
    x: torch.Tensor,
    weight: torch.Tensor,
    bias: Optional[torch.Tensor],
    params: Optional[Sequence[torch.Tensor]] = None,
) -> torch.Tensor:
    """`F.linear(x, weight, bias)`, with `weight` packed once and kept on `module` under `key` where
    `packing_applies`. `params`: the parameters `weight` is made of (default: `weight` itself), whose versions say
    when to pack again."""
    if not packing_applies(module, x, weight):
        return F.linear(x, weight, bias)
    cache: Dict[Hashable, Tuple[tuple, Optional[torch.Tensor], int]] = module.__dict__.setdefault(_CACHE, {})
    stamp = tuple((p.data_ptr(), p._version) for p in (params or [weight])) + (tuple(weight.shape),)
    entry = cache.get(key)
    if entry is None or entry[0] != stamp:  # first use of these weights: packed at the next (one prediction alone
        cache[key] = (stamp, None, 0)  # would pay for packing and gain nothing)
        return F.linear(x, weight, bias)
    if entry[1] is None:
        rows = max(1, x.numel() // x.size(-1))
        entry = (stamp, torch.ops.mkl._mkl_reorder_linear_weight(weight.contiguous(), rows), rows)
        cache[key] = entry
    return torch.ops.mkl._mkl_linear(x, entry[1], weight, bias, entry[2])


def drop_packed(module: nn.Module) -> None:
    """Forgets the packed weights of `module` and its submodules."""
    for sub in module.modules():
        sub.__dict__.pop(_CACHE, None)
