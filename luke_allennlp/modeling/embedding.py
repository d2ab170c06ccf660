"""
An embedding table whose weight gradient, on the CPU, is written into memory kept from the step before.

The gradient of a lookup in a large table (RoBERTa's 50,265 x 768 words: 154 MB; LUKE's 500k x 256 entities: 512
MB) is dense: `F.embedding`'s backward pass allocates it, zero-fills it and adds the looked-up rows' gradients. On the
CPU the allocation is fresh memory every step (torch's allocator keeps nothing; blocks this large go back to the
kernel when freed), so the zero-fill faults in every page. On this project's machine (one thread) the word table's
backward pass took 108 ms with a fresh block and 27 ms with a kept one, a 500k x 256 entity table's 300 and 79 ms;
in a base-size training step of 4 x 128 words, 30-45 ms of 2.6 s.

`Embedding` keeps the block of its last weight gradient and writes the next one into it once nothing else holds it
(`optimizer.zero_grad()` set the gradient to None, and no tensor shares the block); otherwise, as when gradients
accumulate over several backward passes, it allocates as torch does. The gradient's values are torch's (the same
additions in the same order), and autograd gets a new tensor, which it stores as `weight.grad` as it would any
gradient. Elsewhere (other devices, no gradient, `sparse`, `max_norm`, `scale_grad_by_freq`, under `torch.compile`
or functorch's transforms) it is `nn.Embedding`. Evaluation mode (`eval()`) lets the block go, so that inference
holds no more memory than before.
"""

import threading
from typing import Any, Optional, Tuple

import torch
import torch.nn.functional as F
from torch import nn

# (private functions of torch: without the first nothing is kept; without the second, no transforms are checked)
_use_count = getattr(torch._C, "_storage_Use_Count", None)
_functorch_active = getattr(torch._C, "_are_functorch_transforms_active", lambda: False)


class _KeptBlock:
    """The memory of the last weight gradient an `Embedding` wrote, and a lock for taking it. Copies of the module
    (`copy.deepcopy`, pickling) start without one."""

    def __init__(self) -> None:
        self.storage: Optional[torch.UntypedStorage] = None
        self.lock = threading.Lock()

    def __deepcopy__(self, memo: dict) -> "_KeptBlock":
        return _KeptBlock()

    def __reduce__(self) -> Tuple[type, tuple]:
        return _KeptBlock, ()

    def zeros(self, like: torch.Tensor, shape: torch.Size) -> torch.Tensor:
        """A zero tensor of `shape` (`like`'s dtype and device), in the kept block where nothing else holds it."""
        with self.lock:
            block, size = self.storage, shape.numel() * like.element_size()
            # (one reference: this object's; a tensor over the block, `weight.grad` among them, holds another)
            if (
                block is not None
                and block.nbytes() == size
                and block.device == like.device
                and _use_count(block._cdata) == 1
            ):
                return like.new_empty(0).set_(block, 0, shape).zero_()
            gradient = like.new_zeros(shape)
            self.storage = gradient.untyped_storage() if _use_count is not None else None
            return gradient


class _Lookup(torch.autograd.Function):
    """`F.embedding(ids, weight, padding_idx)`, its weight gradient written where `block` says."""

    @staticmethod
    def forward(  # type: ignore[override]
        ctx: Any, weight: torch.Tensor, ids: torch.Tensor, padding_idx: Optional[int], block: _KeptBlock
    ) -> torch.Tensor:
        ctx.save_for_backward(ids)
        ctx.shape, ctx.padding_idx, ctx.block = weight.shape, padding_idx, block
        return F.embedding(ids, weight, padding_idx)  # (*ids, dim)

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> Tuple[Optional[torch.Tensor], None, None, None]:
        (ids,) = ctx.saved_tensors
        if torch.compiler.is_compiling():  # (compiled autograd traces this: no storage bookkeeping there)
            weight_grad = grad.new_zeros(ctx.shape)
        else:
            weight_grad = ctx.block.zeros(grad, ctx.shape)
        # The rows' gradients added in order, as `embedding_dense_backward` does; the padding row gets none.
        weight_grad.index_add_(0, ids.reshape(-1), grad.reshape(-1, ctx.shape[1]))
        if ctx.padding_idx is not None:
            weight_grad[ctx.padding_idx].zero_()
        return weight_grad, None, None, None


class Embedding(nn.Embedding):
    """`nn.Embedding` (the same parameters, outputs and gradients), its weight gradient's memory kept from step to
    step on the CPU (see the module's docstring)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._kept_gradient = _KeptBlock()

    def _keeps_gradient(self) -> bool:
        return (
            torch.is_grad_enabled()
            and self.weight.requires_grad
            and self.weight.device.type == "cpu"
            and not (self.sparse or self.scale_grad_by_freq or self.max_norm is not None)
            and not torch.compiler.is_compiling()
            and not _functorch_active()
        )

    def forward(self, input: torch.Tensor) -> torch.Tensor:  # (`nn.Embedding`'s argument name)
        if not self._keeps_gradient():
            return super().forward(input)
        return _Lookup.apply(self.weight, input, self.padding_idx, self._kept_gradient)

    def train(self, mode: bool = True) -> "Embedding":
        if not mode:
            self._kept_gradient = _KeptBlock()  # (inference: the block goes once no gradient holds it)
        return super().train(mode)

    def _apply(self, fn: Any, recurse: bool = True) -> "Embedding":  # type: ignore[override]
        self._kept_gradient = _KeptBlock()  # (moved or cast: the next gradient is another block)
        return super()._apply(fn, recurse)
