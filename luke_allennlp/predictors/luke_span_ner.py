import re
from typing import Any, List

from allennlp.common.util import JsonDict
from allennlp.data import Instance
from allennlp.predictors.predictor import Predictor

from luke_allennlp.data.files import require, require_strings
from luke_allennlp.predictors.luke_predictor import LukePredictor
from luke_allennlp.wikipedia.name_matcher import CJK_TOKEN

WORD = re.compile(r"\w+(?:[-'.]+\w+)*|[^\w\s]")


def split_words(text: str, without_spaces: bool = False) -> List[str]:
    """Words and punctuation, roughly as CoNLL-2003 splits them ("U.S.-based" stays one word). `without_spaces`
    (Japanese, Chinese): each kana or CJK ideograph is a word of its own, runs of other letters or digits one word
    (`CJK_TOKEN`), since such text has no spaces to split at."""
    return CJK_TOKEN.findall(text) if without_spaces else WORD.findall(text)


@Predictor.register("luke_span_ner")
class LukeSpanNerPredictor(LukePredictor):
    """
    Named entities of one sentence.

    Input: `{"sentence": "raw text"}` or `{"words": [...]}` (a list of strings), optionally with document
    context `"left_context"` / `"right_context"` (lists of sentences, each a string or a list of words) and `"id"`.
    Output: `words`, `tags` (IOB2), `truncated` and `entities`: `[{"start", "end", "text", "type", "score"}]` with
    word indices, `end` exclusive, `text` the entity's words joined by spaces, `score` the model's probability of
    the type for the span. Words past `max_seq_length`, which the model did not see, have no tag (`tags` is
    shorter than `words`), and `truncated` counts them (0 when the sentence fits). With a reader of
    `words_without_spaces` (LUKE-Japanese), a raw `"sentence"` is split into characters (`split_words`; pass `"words"`
    for another segmentation, e.g. a morphological analyser's) and `text` joins the words without spaces.
    """

    output_keys = ("words", "tags", "truncated", "entities")

    def _json_to_instance(self, json_dict: JsonDict) -> Instance:
        where = self.input_id(json_dict)
        if "words" in json_dict:
            words = require_strings(json_dict["words"], where, '"words"')
        elif "sentence" in json_dict:
            words = split_words(require(json_dict, "sentence", str, where), self._without_spaces)
        else:
            raise ValueError(f'{where}: the input needs "sentence" (text) or "words" (a list of strings)')

        def sentences(key: str) -> List[List[str]]:
            context: Any = json_dict.get(key, [])
            if not isinstance(context, list):
                raise ValueError(f'{where}: "{key}" must be a list of sentences, not {type(context).__name__}')
            return [
                split_words(s, self._without_spaces)
                if isinstance(s, str)
                else require_strings(s, where, f'a sentence of "{key}"')
                for s in context
            ]

        return self._dataset_reader.text_to_instance(
            words, left_context=sentences("left_context"), right_context=sentences("right_context"), instance_id=where
        )

    @property
    def _without_spaces(self) -> bool:
        return bool(getattr(self._dataset_reader, "words_without_spaces", False))

    def _outputs(self, output: JsonDict) -> JsonDict:
        result = super()._outputs(output)
        if self._without_spaces:
            for entity in result["entities"]:
                entity["text"] = "".join(result["words"][entity["start"] : entity["end"]])
        return result
