from allennlp.common.util import JsonDict
from allennlp.data import Instance
from allennlp.predictors.predictor import Predictor


@Predictor.register("luke_squad")
class LukeSquadPredictor(Predictor):
    """
    Extractive QA. Input: `{"question": "...", "context": "..."}`, optionally `"id"` and `"title"` (the
    Wikipedia page of the context, for a model trained with entity inputs). Output: `answer` (a span of the
    context), its character `start` and `end` (exclusive) in the context, and `score` (start + end logit).
    """

    def _json_to_instance(self, json_dict: JsonDict) -> Instance:
        try:
            question, context = json_dict["question"], json_dict["context"]
        except KeyError as e:
            raise ValueError(f'the input needs "question" and "context"; missing {e}') from None
        return self._dataset_reader.text_to_instance(
            question, context, title=json_dict.get("title"), question_id=str(json_dict.get("id", "input"))
        )

    def predict_json(self, inputs: JsonDict) -> JsonDict:
        output = self.predict_instance(self._json_to_instance(inputs))
        return {key: output[key] for key in ("answer", "start", "end", "score")}
