"""
Repair 2: `transformers.AdamW`.

`allennlp.training.optimizers` subclasses `transformers.AdamW` (its `huggingface_adamw` optimizer), which transformers
deprecated and then removed in 4.50 (huggingface/transformers#36177, "Remove our AdamW implementation"; the reports:
huggingface/transformers#36954). Where it is missing, `transformers.AdamW` is set to `HuggingfaceAdamW` below, the same
algorithm (decoupled weight decay, optional bias correction), before `allennlp.training.optimizers` executes.
"""

import functools
import math
from typing import Any, Callable, Optional


@functools.lru_cache(maxsize=None)
def huggingface_adamw() -> type:
    """The class (built once, on first use, so that importing this module does not import torch)."""
    import torch

    class HuggingfaceAdamW(torch.optim.Optimizer):
        """
        The AdamW that transformers shipped until 4.49 (`transformers.AdamW`): Adam with weight decay
        decoupled from the gradient and applied after the Adam step, and optional bias correction
        (`correct_bias=False` reproduces the original BERT optimiser).
        """

        def __init__(
            self,
            params: Any,
            lr: float = 1e-3,
            betas: tuple = (0.9, 0.999),
            eps: float = 1e-6,
            weight_decay: float = 0.0,
            correct_bias: bool = True,
            no_deprecation_warning: bool = False,
        ):
            if lr < 0.0:
                raise ValueError(f"Invalid learning rate: {lr} - should be >= 0.0")
            if not 0.0 <= betas[0] < 1.0 or not 0.0 <= betas[1] < 1.0:
                raise ValueError(f"Invalid beta parameters: {betas} - should be in [0.0, 1.0)")
            if eps < 0.0:
                raise ValueError(f"Invalid epsilon value: {eps} - should be >= 0.0")
            defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, correct_bias=correct_bias)
            super().__init__(params, defaults)

        @torch.no_grad()
        def step(self, closure: Optional[Callable] = None) -> Optional[float]:
            loss = None
            if closure is not None:
                with torch.enable_grad():
                    loss = closure()
            for group in self.param_groups:
                beta1, beta2 = group["betas"]
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    if p.grad.is_sparse:
                        raise RuntimeError("AdamW does not support sparse gradients, use SparseAdam instead")
                    state = self.state[p]
                    if not state:
                        state["step"] = 0  # a plain int keeps checkpoints loadable with weights_only=True
                        state["exp_avg"] = torch.zeros_like(p)
                        state["exp_avg_sq"] = torch.zeros_like(p)
                    state["step"] += 1
                    exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
                    exp_avg.mul_(beta1).add_(p.grad, alpha=1.0 - beta1)
                    exp_avg_sq.mul_(beta2).addcmul_(p.grad, p.grad, value=1.0 - beta2)
                    step_size = group["lr"]
                    if group["correct_bias"]:
                        step_size *= math.sqrt(1.0 - beta2 ** state["step"]) / (1.0 - beta1 ** state["step"])
                    p.addcdiv_(exp_avg, exp_avg_sq.sqrt().add_(group["eps"]), value=-step_size)
                    if group["weight_decay"] > 0.0:
                        p.add_(p, alpha=-group["lr"] * group["weight_decay"])
            return loss

    return HuggingfaceAdamW


def repair_transformers(module: Any = None) -> None:
    """Before `allennlp.training.optimizers` executes: `transformers.AdamW` where it is missing."""
    import transformers

    try:
        transformers.AdamW  # noqa: B018  (a lazy module: the name may be listed yet fail to import)
    except (AttributeError, ImportError):
        transformers.AdamW = huggingface_adamw()
