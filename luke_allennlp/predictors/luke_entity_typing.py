from allennlp.common.util import JsonDict
from allennlp.data import Instance
from allennlp.predictors.predictor import Predictor

from luke_allennlp.predictors.luke_predictor import LukePredictor
from luke_allennlp.resources.files import require, require_span


@Predictor.register("luke_entity_typing")
class LukeEntityTypingPredictor(LukePredictor):
    """
    Types of one mention. Input: `{"sentence": "...", "span": [start_char, end_char]}` (end exclusive), optionally
    `"id"`. Output: `labels` (the predicted types) and `probabilities` (every type's).
    """

    output_keys = ("labels", "probabilities")

    def _json_to_instance(self, json_dict: JsonDict) -> Instance:
        where = self.input_id(json_dict)
        if "sentence" not in json_dict or "span" not in json_dict:
            raise ValueError(f'{where}: the input needs "sentence" and "span" ([start_char, end_char])')
        sentence = require(json_dict, "sentence", str, where)
        span = require_span(json_dict["span"], where, '"span"')
        return self._dataset_reader.text_to_instance(sentence, span, example_id=where)
