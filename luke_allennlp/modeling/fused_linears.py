"""
Linear layers of one input width whose weights are used as one matrix (the attention's queries, key and value)
without concatenating them at every call, while each keeps its own parameters (their names, state-dict entries and
gradients are those of the checkpoints: `query.weight`, `key.bias`, ...).

`fuse` lays the layers' weights (and biases) back to back in one storage, each parameter a view of its rows;
`fused` then returns rows `[start, stop)` of that storage as one tensor, without a copy, through an autograd node
that hands each parameter its rows of the gradient. Optimizers update the parameters in place, so the storage
follows them. Whatever replaces a parameter's tensor (`module.to(...)` and the like, `load_state_dict(assign=True)`,
FSDP's flat parameters) ends the layout: `fused` then concatenates the weights (exact, a copy per call) until `fuse`
lays them out again, which `LukeSelfAttention` does after `Module._apply` (`.to()`, `.half()`, ...) and after
`load_state_dict`. `torch.compile` traces the concatenation (its graph owns the copy).
"""

from typing import Any, List, Optional, Sequence, Tuple

import torch
import torch.nn.functional as F
from torch import nn


def fuse(linears: Sequence[nn.Linear]) -> None:
    """Moves the layers' weights (and biases) into one storage each, back to back in the given order, every parameter
    a view of its rows (values, `requires_grad` and identity unchanged). Layers that already are so are left as they
    are (a storage moved in place, by `share_memory_`, stays shared)."""
    if is_fused(linears):
        return
    with torch.no_grad():
        for name in ("weight", "bias"):
            params = [getattr(linear, name) for linear in linears]
            storage = torch.cat([p.detach() for p in params])
            row = 0
            for p in params:
                p.data = storage[row : row + p.size(0)]
                row += p.size(0)


def is_fused(linears: Sequence[nn.Linear]) -> bool:
    """Whether the layers' weights lie back to back in one storage in this order, and so do their biases."""
    for name in ("weight", "bias"):
        params = [getattr(linear, name) for linear in linears]
        if any(p is None or not p.is_contiguous() or p.dtype != params[0].dtype for p in params):
            return False
        storage = params[0].untyped_storage().data_ptr()
        expected = params[0].data_ptr()
        for p in params:
            if p.data_ptr() != expected or p.untyped_storage().data_ptr() != storage:
                return False
            expected += p.numel() * p.element_size()
    return True


class _Rows(torch.autograd.Function):
    """The fused `weight` and `bias` (views of the parameters' storage) as outputs whose gradients go to the
    parameters, each its rows."""

    @staticmethod
    def forward(ctx: Any, weight: torch.Tensor, bias: torch.Tensor, *params: torch.Tensor) -> Any:  # type: ignore[override]
        ctx.rows = [p.size(0) for p in params[: len(params) // 2]]
        return weight.view_as(weight), bias.view_as(bias)

    @staticmethod
    def backward(ctx: Any, grad_weight: torch.Tensor, grad_bias: torch.Tensor) -> Any:  # type: ignore[override]
        weights = grad_weight.split(ctx.rows) if grad_weight is not None else [None] * len(ctx.rows)
        biases = grad_bias.split(ctx.rows) if grad_bias is not None else [None] * len(ctx.rows)
        grads: List[Optional[torch.Tensor]] = [None, None, *weights, *biases]
        return tuple(g if needed else None for g, needed in zip(grads, ctx.needs_input_grad))


def _storage(linears: Sequence[nn.Linear]) -> Tuple[torch.Tensor, torch.Tensor]:
    """The fused weight and bias of layers laid out by `fuse` (views of their storage, no autograd)."""
    rows = sum(linear.out_features for linear in linears)
    weight, bias = linears[0].weight.detach(), linears[0].bias.detach()
    return weight.as_strided((rows, weight.size(1)), weight.stride()), bias.as_strided((rows,), bias.stride())


def fused(linears: Sequence[nn.Linear]) -> Tuple[torch.Tensor, torch.Tensor]:
    """The layers' weights stacked (rows of each in order) and their biases, as one (sum of outputs, in) matrix and
    one vector: views of the storage where `fuse` laid them out (eagerly), else a concatenation."""
    weights = [linear.weight for linear in linears]
    biases = [linear.bias for linear in linears]
    if torch.compiler.is_compiling() or not is_fused(linears):
        return torch.cat(weights), torch.cat(biases)
    weight, bias = _storage(linears)
    if not torch.is_grad_enabled() or not any(p.requires_grad for p in weights + biases):
        return weight, bias
    return _Rows.apply(weight, bias, *weights, *biases)


class _ByType(torch.autograd.Function):
    """
    Two row blocks of `x` times two overlapping row ranges of a fused weight (n `fuse`d layers of width h each, n of
    5 or 6): the first block by the first n - 2 layers, the second by the last four (the two layers in the middle,
    the key and the value, by both), plus the biases. The backward pass computes each weight's gradient once (the
    shared ones from both blocks, accumulated in place: not two matrices added) and the input's gradient into one
    matrix.
    """

    @staticmethod
    def forward(
        ctx: Any, x: torch.Tensor, first_rows: int, weight: torch.Tensor, bias: torch.Tensor, *params: torch.Tensor
    ) -> Any:  # type: ignore[override]
        ctx.save_for_backward(x, weight)
        ctx.first_rows = first_rows
        return _products(x, first_rows, weight, bias, len(params) // 2)

    @staticmethod
    def backward(ctx: Any, grad_first: torch.Tensor, grad_second: torch.Tensor) -> Any:  # type: ignore[override]
        x, weight = ctx.saved_tensors
        needs = ctx.needs_input_grad
        n = (len(needs) - 4) // 2
        h, rows = weight.size(0) // n, ctx.first_rows
        split = (n - 4) * h  # (the first row of the layers both blocks use)
        first, second = x[:rows], x[rows:]
        grad_x = None
        if needs[0]:
            grad_x = x.new_empty(x.shape)
            torch.mm(grad_first, weight[: (n - 2) * h], out=grad_x[:rows])
            torch.mm(grad_second, weight[split:], out=grad_x[rows:])
        grads: List[Optional[torch.Tensor]] = [None] * (2 * n)
        if x.device.type != "cpu" and all(needs[4 : 4 + n]):
            # One (n h, in) gradient in three products (the shared rows accumulated in place), split into views.
            grad_weight = weight.new_empty(weight.shape)
            torch.mm(grad_first.t(), first, out=grad_weight[: (n - 2) * h])
            torch.mm(grad_second[:, 2 * h :].t(), second, out=grad_weight[(n - 2) * h :])
            grad_weight[split : (n - 2) * h].addmm_(grad_second[:, : 2 * h].t(), second)
            grads[:n] = grad_weight.split(h)
            needs_weight = [False] * n
        else:
            # On the CPU each parameter's gradient a matrix of its own (a fresh (n h, in) one would cost a page fault
            # every 4 KiB, where allocations of one layer's size reuse freed memory).
            needs_weight = list(needs[4 : 4 + n])
        # Each layer's (gradient, its column, the rows it multiplied); the key and value also from the second block.
        blocks = [(grad_first, i * h, first) for i in range(n - 2)] + [
            (grad_second, 2 * h, second),
            (grad_second, 3 * h, second),
        ]
        shared = {n - 4: (grad_second, 0, second), n - 3: (grad_second, h, second)}
        for i, (grad, column, block_rows) in enumerate(blocks):
            if needs_weight[i]:
                grads[i] = torch.mm(grad[:, column : column + h].t(), block_rows)
                if i in shared:
                    other, other_column, other_rows = shared[i]
                    grads[i].addmm_(other[:, other_column : other_column + h].t(), other_rows)
            if needs[4 + n + i]:
                grads[n + i] = grad[:, column : column + h].sum(0)
                if i in shared:
                    other, other_column, _ = shared[i]
                    grads[n + i] += other[:, other_column : other_column + h].sum(0)
        return (grad_x, None, None, None, *(g if need else None for g, need in zip(grads, needs[4:])))


def autocast_enabled(device_type: str) -> bool:
    """Whether autocast is on for this device type (`cpu`, `cuda`, ...)."""
    try:
        return torch.is_autocast_enabled(device_type)
    except TypeError:  # torch < 2.4
        return torch.is_autocast_cpu_enabled() if device_type == "cpu" else torch.is_autocast_enabled()


def by_type(x: torch.Tensor, first_rows: int, linears: Sequence[nn.Linear]) -> Tuple[torch.Tensor, torch.Tensor]:
    """Rows `[:first_rows]` of `x` times all but the last two of n layers of one width (n of 5 or 6; stacked, plus
    biases) and the other rows times the last four: a (rows, (n - 2) x width) and a (rows, 4 x width) matrix.
    Eagerly, without autocast, with the layers `fuse`d, the weights are used in place and the gradient of each
    parameter comes from one matrix product; otherwise `F.linear` over the fused views (or, not fused, the
    concatenated weights)."""
    n = len(linears)
    # (Under autocast `F.linear` casts: `_ByType` would hand its backward pass gradients in autocast's dtype.)
    if torch.compiler.is_compiling() or not is_fused(linears) or autocast_enabled(x.device.type):
        first, second = x.split([first_rows, x.size(0) - first_rows])
        return F.linear(first, *fused(linears[: n - 2])), F.linear(second, *fused(linears[n - 4 :]))
    weight, bias = _storage(linears)
    params = [linear.weight for linear in linears] + [linear.bias for linear in linears]
    if torch.is_grad_enabled() and (x.requires_grad or any(p.requires_grad for p in params)):
        return _ByType.apply(x, first_rows, weight, bias, *params)
    return _products(x, first_rows, weight, bias, n)


def _products(
    x: torch.Tensor, first_rows: int, weight: torch.Tensor, bias: torch.Tensor, n: int
) -> Tuple[torch.Tensor, torch.Tensor]:
    """`by_type`'s two products, from the fused weight and bias of its n layers."""
    h = weight.size(0) // n
    first, second = x[:first_rows], x[first_rows:]
    return torch.addmm(bias[: (n - 2) * h], first, weight[: (n - 2) * h].t()), torch.addmm(
        bias[(n - 4) * h :], second, weight[(n - 4) * h :].t()
    )
