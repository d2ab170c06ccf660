from allennlp.common.util import JsonDict
from allennlp.data import Instance
from allennlp.predictors.predictor import Predictor

from luke_allennlp.predictors.luke_predictor import LukePredictor
from luke_allennlp.resources.files import require, require_strings


@Predictor.register("luke_multiple_choice")
class LukeMultipleChoicePredictor(LukePredictor):
    """
    A question and its choices. Input: `{"question": "...", "choices": ["...", "..."]}`, optionally `"id"`.
    Output: `id`, `label` (the index of the chosen choice) and `probabilities` (one per choice).
    """

    output_keys = ("id", "label", "probabilities")

    def _json_to_instance(self, json_dict: JsonDict) -> Instance:
        where = self.input_id(json_dict)
        if "question" not in json_dict or "choices" not in json_dict:
            raise ValueError(f'{where}: the input needs "question" and "choices" (a list of strings)')
        question = require(json_dict, "question", str, where)
        choices = require_strings(json_dict["choices"], where, '"choices"')
        return self._dataset_reader.text_to_instance(question, choices, example_id=where)
