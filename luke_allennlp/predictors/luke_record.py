from typing import Any, List, Tuple

from allennlp.common.util import JsonDict
from allennlp.data import Instance
from allennlp.predictors.predictor import Predictor

from luke_allennlp.predictors.luke_predictor import LukePredictor
from luke_allennlp.resources.files import require


@Predictor.register("luke_record")
class LukeRecordPredictor(LukePredictor):
    """
    Which passage entity fills a cloze query's `@placeholder` (ReCoRD).

    Input: `{"passage": "...", "query": "... @placeholder ...", "entities": [[start, end], ...]}`, the passage's
    entity mentions as character spans with INCLUSIVE ends, as in the ReCoRD files; the official form
    `[{"start": s, "end": e}, ...]` is accepted too. Optional: `"id"`.
    Output: `answer` (the best candidate's text), `score` (its probability of being correct), `answer_spans`
    (its mentions, inclusive ends) and `candidates` (`[{"text", "score"}]` by descending score).
    """

    output_keys = ("answer", "score", "answer_spans", "candidates")

    def _json_to_instance(self, json_dict: JsonDict) -> Instance:
        where = self.input_id(json_dict)
        missing = [key for key in ("passage", "query", "entities") if key not in json_dict]
        if missing:
            raise ValueError(
                f'{where}: the input needs "passage", "query" (with @placeholder) and "entities"; missing {missing}'
            )
        entities = require(json_dict, "entities", list, where)
        return self._dataset_reader.text_to_instance(
            require(json_dict, "passage", str, where),
            require(json_dict, "query", str, where),
            entity_spans(entities),
            query_id=where,
        )


def entity_spans(entities: List[Any]) -> List[Tuple[int, int]]:
    """`[[start, end], ...]` or `[{"start", "end"}, ...]` (inclusive ends) -> [(start, end), ...]."""
    spans = []
    for entity in entities:
        span = (entity.get("start"), entity.get("end")) if isinstance(entity, dict) else entity
        if not isinstance(span, (list, tuple)) or len(span) != 2 or not all(isinstance(x, int) for x in span):
            raise ValueError(
                f"an entity must be [start, end] or {{'start', 'end'}} with integer offsets, not {entity!r}"
            )
        spans.append((span[0], span[1]))
    return spans
