from typing import Any, Dict, List, Optional, Tuple

import torch
from allennlp.training.optimizers import Optimizer, make_parameter_groups


@Optimizer.register("luke_adamw")
class LukeAdamW(Optimizer, torch.optim.AdamW):
    """
    PyTorch's AdamW (decoupled weight decay, bias correction) with its fused kernel on GPUs: one kernel launch
    updates every parameter, where allennlp's `huggingface_adamw` loops over parameters in Python. The fine-tuning
    and pretraining configs use it.

    Registered as an `Optimizer` with name "luke_adamw".

    # Parameters

    model_parameters : `List[Tuple[str, torch.nn.Parameter]]`
        Filled in by the trainer.
    parameter_groups : `List[Tuple[List[str], Dict[str, Any]]]`, optional (default = `None`)
        allennlp's regex groups, e.g. `[[["bias", "LayerNorm\\\\.weight"], {"weight_decay": 0.0}]]`.
    lr, betas, eps, weight_decay :
        As `torch.optim.AdamW`.
    fused : `bool`, optional (default = `None`)
        `None` fuses when every parameter is on a GPU, and uses the multi-tensor (`foreach`) kernels otherwise.
    """

    def __init__(
        self,
        model_parameters: List[Tuple[str, torch.nn.Parameter]],
        parameter_groups: Optional[List[Tuple[List[str], Dict[str, Any]]]] = None,
        lr: float = 1e-3,
        betas: Tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.01,
        fused: Optional[bool] = None,
    ) -> None:
        if fused is None:
            fused = bool(model_parameters) and all(p.is_cuda for _, p in model_parameters)
        super().__init__(
            params=make_parameter_groups(model_parameters, parameter_groups),
            lr=lr,
            betas=betas,
            eps=eps,
            weight_decay=weight_decay,
            fused=fused,
            foreach=None if fused else True,
        )
