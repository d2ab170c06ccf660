from typing import List

from allennlp.common.util import JsonDict
from allennlp.data import Instance
from allennlp.predictors.predictor import Predictor

from luke_allennlp.resources.entity_disambiguation import EdMention

KEYS = ("start", "end", "text", "entity", "score")


@Predictor.register("luke_entity_disambiguation")
class LukeEntityDisambiguationPredictor(Predictor):
    """
    Entity linking of raw text, or disambiguation of mentions given in it.

    Input: `{"text": "..."}`: the mentions are the names of the reader's mention dictionary found in the text
    (longest match at token boundaries, names of link probability >= the reader's `min_link_probability`, whose
    candidates include an entity of the vocabulary); or `{"text": "...", "mentions": [[start, end], ...]}`
    (characters, end exclusive), with candidates from the dictionary for each span's text. A text longer than one
    input is split into windows; all its mentions are disambiguated.

    Output: `{"mentions": [{"start", "end", "text", "entity", "score"}, ...]}` in text order: character offsets
    (end exclusive), the mention's text, the predicted entity (a Wikipedia title of the model's entity vocabulary;
    `null` when the span has no candidate in it), and `score`, the model's probability of that entity among the
    mention's candidates (softmax over the candidates) at the step it was resolved: with global inference, given
    the words and the entities resolved before it (0 without an entity).
    """

    def predict_json(self, inputs: JsonDict) -> JsonDict:
        instances = self._json_to_instances(inputs)
        # (not `predict_batch_instance`: allennlp's `sanitize` would write a missing entity as the string "None")
        outputs = self._model.forward_on_instances(instances) if instances else []
        mentions = sorted((m for output in outputs for m in output["mentions"]), key=lambda m: (m["start"], m["end"]))
        return {"mentions": [{key: m.get(key) for key in KEYS} for m in mentions]}

    def predict_batch_json(self, inputs: List[JsonDict]) -> List[JsonDict]:
        return [self.predict_json(item) for item in inputs]  # (a text may need several instances)

    def _json_to_instances(self, json_dict: JsonDict) -> List[Instance]:
        text = json_dict.get("text")
        if not isinstance(text, str):
            raise ValueError('the input needs "text" (a string), and may have "mentions": [[start, end], ...]')
        mentions = None
        if json_dict.get("mentions") is not None:
            mentions = []
            for span in json_dict["mentions"]:
                if not (
                    isinstance(span, (list, tuple))
                    and len(span) == 2
                    and all(isinstance(x, int) for x in span)
                    and 0 <= span[0] < span[1] <= len(text)
                ):
                    raise ValueError(
                        f"mention {span!r} is not [start, end] with 0 <= start < end <= {len(text)} (the text's length)"
                    )
                mentions.append(EdMention(span[0], span[1]))
        return self._dataset_reader.text_to_instances(text, mentions, str(json_dict.get("id", "input")))

    def _json_to_instance(self, json_dict: JsonDict) -> Instance:
        instances = self._json_to_instances(json_dict)
        if len(instances) != 1:
            raise ValueError(f"the text gives {len(instances)} instances (windows or no mention): use predict_json")
        return instances[0]
