"""What the task predictors share: JSON-lines input checked line by line, the same outputs one by one or in batches,
the model run under `torch.inference_mode`, and a length for `allennlp predict` to group inputs by."""

import json
from typing import List, Tuple

import torch
from allennlp.common.util import JsonDict
from allennlp.data import Instance
from allennlp.predictors.predictor import Predictor

from luke_allennlp.resources.files import TOO_DEEP, refuse_lone_surrogates


class LukePredictor(Predictor):
    """
    A task predictor: each input line must be a JSON object (an error says what is wrong with it; `allennlp
    predict` adds the file and line, see `luke_allennlp_compat`), and `predict_json` and `predict_batch_json`
    return the same `output_keys` of the model's human-readable output. The model runs under
    `torch.inference_mode()` (no autograd bookkeeping; on the CPU, packed weights: `modeling.packed_linear`);
    `input_length` is what `allennlp predict` sorts a window of inputs by before batching them
    (`luke_allennlp.cli.predict_batches`).
    """

    output_keys: Tuple[str, ...] = ()

    def load_line(self, line: str) -> JsonDict:
        try:
            inputs = json.loads(line)
        except json.JSONDecodeError as error:
            raise ValueError(f"not valid JSON ({error.msg}, column {error.colno}): {line.strip()[:80]!r}") from None
        except RecursionError:
            raise ValueError(f"{TOO_DEEP}: {line.strip()[:80]!r}") from None
        if not isinstance(inputs, dict):
            raise ValueError(f"expected a JSON object ({{...}}), not {type(inputs).__name__}: {line.strip()[:80]!r}")
        if "\\u" in line:
            refuse_lone_surrogates(inputs, line, "")  # (a tokenizer fails on them with a bare TypeError)
        return inputs

    @staticmethod
    def input_id(inputs: JsonDict) -> str:
        """The input's `"id"`, or "input": how errors and outputs name it."""
        return str(inputs.get("id", "input"))

    @staticmethod
    def input_length(inputs: JsonDict) -> int:
        """How long an input is, for grouping inputs of similar length into batches: its JSON text's length (the
        text fields are most of it)."""
        return len(json.dumps(inputs, ensure_ascii=False))

    def predict_instance(self, instance: Instance) -> JsonDict:
        with torch.inference_mode():
            return super().predict_instance(instance)

    def predict_batch_instance(self, instances: List[Instance]) -> List[JsonDict]:
        with torch.inference_mode():
            return super().predict_batch_instance(instances)

    def predict_json(self, inputs: JsonDict) -> JsonDict:
        return self._outputs(self.predict_instance(self._json_to_instance(inputs)))

    def predict_batch_json(self, inputs: List[JsonDict]) -> List[JsonDict]:
        return [self._outputs(output) for output in self.predict_batch_instance(self._batch_json_to_instances(inputs))]

    def _outputs(self, output: JsonDict) -> JsonDict:
        return {key: output[key] for key in self.output_keys}
