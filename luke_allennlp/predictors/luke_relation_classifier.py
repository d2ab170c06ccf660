from allennlp.common.util import JsonDict
from allennlp.data import Instance
from allennlp.predictors.predictor import Predictor

from luke_allennlp.predictors.luke_predictor import LukePredictor
from luke_allennlp.resources.files import require, require_span, require_strings


@Predictor.register("luke_relation_classifier")
class LukeRelationClassifierPredictor(LukePredictor):
    """
    The relation between two mentions. Input: `{"text": "...", "head": [start_char, end_char], "tail": [...]}`
    (end exclusive), or `{"tokens": [...], "head": [first, last], "tail": [first, last]}` (inclusive token
    spans, as in TACRED); optionally `"id"`. Output: `label` and `probabilities` of every relation.
    """

    output_keys = ("label", "probabilities")

    def _json_to_instance(self, json_dict: JsonDict) -> Instance:
        where = self.input_id(json_dict)
        if "head" not in json_dict or "tail" not in json_dict:
            raise ValueError(f'{where}: the input needs "head" and "tail" spans, with "text" (characters) or "tokens"')
        head, tail = (require_span(json_dict[key], where, f'"{key}"') for key in ("head", "tail"))
        if "tokens" in json_dict:
            tokens = require_strings(json_dict["tokens"], where, '"tokens"')
            starts = [0]
            for token in tokens:
                starts.append(starts[-1] + len(token) + 1)
            for span in (head, tail):
                if not 0 <= span[0] <= span[1] < len(tokens):
                    raise ValueError(f"{where}: token span {list(span)} is out of range for {len(tokens)} tokens")
            text = " ".join(tokens)
            head, tail = ((starts[s], starts[e] + len(tokens[e])) for s, e in (head, tail))
        elif "text" in json_dict:
            text = require(json_dict, "text", str, where)
        else:
            raise ValueError(f'{where}: the input needs "text" or "tokens"')
        return self._dataset_reader.text_to_instance(text, head, tail, example_id=where)
