import json
from typing import Any, Callable, Dict, Optional

import torch
from allennlp.common.util import sanitize
from allennlp.data import DataLoader
from allennlp.evaluation.serializers.serializers import Serializer


@Serializer.register("luke_per_instance")
class PerInstanceSerializer(Serializer):
    """
    Writes one JSON line per instance for `allennlp evaluate --predictions-output-file`: the entries of the
    model's `make_output_human_readable` output that hold one value per instance, `id` first where there is one
    (allennlp's default serializer writes one line per batch, inputs included), text as UTF-8 (not `\\u` escapes).

    Use it with `evaluation: {type: "simple", batch_serializer: {type: "luke_per_instance"}}` in a config.
    """

    def __call__(
        self,
        batch: Dict[str, Any],
        output_dict: Dict[str, Any],
        data_loader: DataLoader,
        output_postprocess_function: Optional[Callable] = None,
    ) -> str:
        outputs = output_postprocess_function(output_dict) if output_postprocess_function else output_dict
        size = len(batch["metadata"]) if "metadata" in batch else len(next(iter(batch.values())))
        per_instance = {
            key: value
            for key, value in sorted(outputs.items(), key=lambda item: item[0] != "id")  # `id` first, the rest kept
            if isinstance(value, (list, torch.Tensor)) and len(value) == size
        }
        return "\n".join(
            json.dumps(sanitize({k: v[i] for k, v in per_instance.items()}), ensure_ascii=False) for i in range(size)
        )

    def _to_params(self) -> Dict[str, Any]:
        return {"type": "luke_per_instance"}
