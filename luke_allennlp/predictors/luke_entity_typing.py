from allennlp.common.util import JsonDict
from allennlp.data import Instance
from allennlp.predictors.predictor import Predictor


@Predictor.register("luke_entity_typing")
class LukeEntityTypingPredictor(Predictor):
    """
    Types of one mention. Input: `{"sentence": "...", "span": [start_char, end_char]}` (end exclusive).
    Output: `labels` (the predicted types) and `probabilities` (every type's).
    """

    def _json_to_instance(self, json_dict: JsonDict) -> Instance:
        try:
            sentence, span = json_dict["sentence"], json_dict["span"]
        except KeyError as e:
            raise ValueError(f'the input needs "sentence" and "span" ([start_char, end_char]); missing {e}') from None
        return self._dataset_reader.text_to_instance(sentence, tuple(span), example_id=str(json_dict.get("id", "input")))

    def predict_json(self, inputs: JsonDict) -> JsonDict:
        output = self.predict_instance(self._json_to_instance(inputs))
        return {"labels": output["labels"], "probabilities": output["probabilities"]}
