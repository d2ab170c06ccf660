from allennlp.common.util import JsonDict
from allennlp.data import Instance
from allennlp.predictors.predictor import Predictor


@Predictor.register("luke_relation_classifier")
class LukeRelationClassifierPredictor(Predictor):
    """
    The relation between two mentions. Input: `{"text": "...", "head": [start_char, end_char], "tail": [...]}`
    (end exclusive), or `{"tokens": [...], "head": [first, last], "tail": [first, last]}` (inclusive token
    spans, as in TACRED). Output: `label` and `probabilities` of every relation.
    """

    def _json_to_instance(self, json_dict: JsonDict) -> Instance:
        if "head" not in json_dict or "tail" not in json_dict:
            raise ValueError('the input needs "head" and "tail" spans, with "text" (characters) or "tokens"')
        head, tail = json_dict["head"], json_dict["tail"]
        if "tokens" in json_dict:
            tokens = json_dict["tokens"]
            starts = [0]
            for token in tokens:
                starts.append(starts[-1] + len(token) + 1)
            to_chars = lambda span: (starts[span[0]], starts[span[1]] + len(tokens[span[1]]))  # noqa: E731
            for span in (head, tail):
                if not 0 <= span[0] <= span[1] < len(tokens):
                    raise ValueError(f"token span {span} is out of range for {len(tokens)} tokens")
            text, head, tail = " ".join(tokens), to_chars(head), to_chars(tail)
        elif "text" in json_dict:
            text = json_dict["text"]
        else:
            raise ValueError('the input needs "text" or "tokens"')
        return self._dataset_reader.text_to_instance(text, tuple(head), tuple(tail), example_id=str(json_dict.get("id", "input")))

    def predict_json(self, inputs: JsonDict) -> JsonDict:
        output = self.predict_instance(self._json_to_instance(inputs))
        return {"label": output["label"], "probabilities": output["probabilities"]}
