from allennlp.common.util import JsonDict
from allennlp.data import Instance
from allennlp.predictors.predictor import Predictor

from luke_allennlp.predictors.luke_predictor import LukePredictor
from luke_allennlp.resources.files import require


@Predictor.register("luke_squad")
class LukeSquadPredictor(LukePredictor):
    """
    Extractive QA. Input: `{"question": "...", "context": "..."}`, optionally `"id"`, `"title"` (the
    Wikipedia page of the context, for a model trained with entity inputs) and `"language"` (the context's, for
    entity inputs in other languages; default: the reader's). Output: `answer` (a span of the
    context), its character `start` and `end` (exclusive) in the context, and `score` (start + end logit).
    """

    output_keys = ("answer", "start", "end", "score")

    def _json_to_instance(self, json_dict: JsonDict) -> Instance:
        where = self.input_id(json_dict)
        if "question" not in json_dict or "context" not in json_dict:
            raise ValueError(f'{where}: the input needs "question" and "context"')
        question, context = require(json_dict, "question", str, where), require(json_dict, "context", str, where)
        title, language = (
            require(json_dict, key, str, where) if json_dict.get(key) is not None else None
            for key in ("title", "language")
        )
        return self._dataset_reader.text_to_instance(
            question, context, title=title, question_id=where, language=language
        )
