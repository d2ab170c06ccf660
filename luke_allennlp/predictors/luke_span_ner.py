import re
from typing import List

from allennlp.common.util import JsonDict
from allennlp.data import Instance
from allennlp.predictors.predictor import Predictor

WORD = re.compile(r"\w+(?:[-'.]+\w+)*|[^\w\s]")


def split_words(text: str) -> List[str]:
    """Words and punctuation, roughly as CoNLL-2003 splits them ("U.S.-based" stays one word)."""
    return WORD.findall(text)


@Predictor.register("luke_span_ner")
class LukeSpanNerPredictor(Predictor):
    """
    Named entities of one sentence.

    Input: `{"sentence": "raw text"}` or `{"words": [...]}`, optionally with document context
    `"left_context"` / `"right_context"` (lists of sentences, each a string or a list of words).
    Output: `words`, `tags` (IOB2) and `entities`: `[{"start", "end", "type", "score"}]` with word indices,
    `end` exclusive.
    """

    def _json_to_instance(self, json_dict: JsonDict) -> Instance:
        if "words" in json_dict:
            words = list(json_dict["words"])
        elif "sentence" in json_dict:
            words = split_words(json_dict["sentence"])
        else:
            raise ValueError('the input needs "sentence" (text) or "words" (a list)')

        def sentences(key: str) -> List[List[str]]:
            return [split_words(s) if isinstance(s, str) else list(s) for s in json_dict.get(key, [])]

        return self._dataset_reader.text_to_instance(
            words, left_context=sentences("left_context"), right_context=sentences("right_context"),
            instance_id=str(json_dict.get("id", "input")),
        )  # fmt: skip

    def predict_json(self, inputs: JsonDict) -> JsonDict:
        output = self.predict_instance(self._json_to_instance(inputs))
        return {key: output[key] for key in ("words", "tags", "entities")}
