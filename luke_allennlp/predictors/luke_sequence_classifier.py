from allennlp.common.util import JsonDict
from allennlp.data import Instance
from allennlp.predictors.predictor import Predictor

from luke_allennlp.predictors.luke_predictor import LukePredictor
from luke_allennlp.resources.files import require


@Predictor.register("luke_sequence_classifier")
class LukeSequenceClassifierPredictor(LukePredictor):
    """
    A sentence or a sentence pair. Input: `{"sentence": "..."}` for a single-sentence model, `{"sentence1": "...",
    "sentence2": "..."}` for a pair model, optionally `"id"`. Output: `id` and `label` with `probabilities` (every
    label's), or `score` for regression.
    """

    def _json_to_instance(self, json_dict: JsonDict) -> Instance:
        where = self.input_id(json_dict)
        reader = self._dataset_reader
        if len(reader.sentence_fields) == 1:
            if "sentence" not in json_dict:
                raise ValueError(f'{where}: the model reads single sentences: the input needs "sentence"')
            return reader.text_to_instance(require(json_dict, "sentence", str, where), example_id=where)
        if "sentence1" not in json_dict or "sentence2" not in json_dict:
            raise ValueError(f'{where}: the model reads sentence pairs: the input needs "sentence1" and "sentence2"')
        first, second = (require(json_dict, key, str, where) for key in ("sentence1", "sentence2"))
        return reader.text_to_instance(first, second, example_id=where)

    def _outputs(self, output: JsonDict) -> JsonDict:
        keys = ("id", "score") if "score" in output else ("id", "label", "probabilities")
        return {key: output[key] for key in keys}
