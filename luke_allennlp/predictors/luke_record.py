from typing import List, Tuple

from allennlp.common.util import JsonDict
from allennlp.data import Instance
from allennlp.predictors.predictor import Predictor


@Predictor.register("luke_record")
class LukeRecordPredictor(Predictor):
    """
    Which passage entity fills a cloze query's `@placeholder` (ReCoRD).

    Input: `{"passage": "...", "query": "... @placeholder ...", "entities": [[start, end], ...]}`, the passage's
    entity mentions as character spans with INCLUSIVE ends, as in the ReCoRD files; the official form
    `[{"start": s, "end": e}, ...]` is accepted too. Optional: `"id"`.
    Output: `answer` (the best candidate's text), `score` (its probability of being correct), `answer_spans`
    (its mentions, inclusive ends) and `candidates` (`[{"text", "score"}]` by descending score).
    """

    def _json_to_instance(self, json_dict: JsonDict) -> Instance:
        missing = [key for key in ("passage", "query", "entities") if key not in json_dict]
        if missing:
            raise ValueError(f'the input needs "passage", "query" (with @placeholder) and "entities"; missing {missing}')
        return self._dataset_reader.text_to_instance(
            json_dict["passage"], json_dict["query"], entity_spans(json_dict["entities"]),
            query_id=str(json_dict.get("id", "input")),
        )  # fmt: skip

    def predict_json(self, inputs: JsonDict) -> JsonDict:
        output = self.predict_instance(self._json_to_instance(inputs))
        return {key: output[key] for key in ("answer", "score", "answer_spans", "candidates")}


def entity_spans(entities: list) -> List[Tuple[int, int]]:
    """`[[start, end], ...]` or `[{"start", "end"}, ...]` (inclusive ends) -> [(start, end), ...]."""
    spans = []
    for entity in entities:
        span = (entity.get("start"), entity.get("end")) if isinstance(entity, dict) else tuple(entity)
        if len(span) != 2 or not all(isinstance(x, int) for x in span):
            raise ValueError(f"an entity must be [start, end] or {{'start', 'end'}} with integer offsets, not {entity!r}")
        spans.append(span)
    return spans
