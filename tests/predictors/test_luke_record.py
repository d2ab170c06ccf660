import pytest
from allennlp.models.archival import load_archive
from allennlp.predictors import Predictor

from tests.conftest import REPO_ROOT
from tests.model_cases import train_archive

CONFIG = REPO_ROOT / "configs" / "reading_comprehension" / "record.jsonnet"


def test_predictor(tiny_luke_dir, record_sample, tmp_path):
    predictor = Predictor.from_archive(load_archive(str(train_archive(CONFIG, tiny_luke_dir, record_sample, tmp_path))))
    assert type(predictor).__name__ == "LukeRecordPredictor"  # the model's default predictor
    passage = "Tian Tian arrived from China with Yang Guang. Tian Tian lives in Edinburgh."
    query = "Any cub will return to @placeholder at the age of two."
    result = predictor.predict_json(
        {"passage": passage, "query": query, "entities": [[0, 8], [23, 27], [34, 43], [46, 54], [65, 73]]}
    )
    assert set(result) == {"answer", "score", "answer_spans", "candidates"}
    assert [c["text"] for c in result["candidates"]][0] == result["answer"]
    assert {c["text"] for c in result["candidates"]} == {"Tian Tian", "China", "Yang Guang", "Edinburgh"}
    assert sorted(c["score"] for c in result["candidates"])[::-1] == [c["score"] for c in result["candidates"]]
    assert result["score"] == result["candidates"][0]["score"] and 0 < result["score"] < 1
    assert all(passage[s : e + 1] == result["answer"] for s, e in result["answer_spans"])
    # The official form of the entities gives the same prediction.
    official = [{"start": s, "end": e} for s, e in [[0, 8], [23, 27], [34, 43], [46, 54], [65, 73]]]
    assert predictor.predict_json({"passage": passage, "query": query, "entities": official}) == result
    with pytest.raises(ValueError, match="missing \\['entities'\\]"):
        predictor.predict_json({"passage": passage, "query": query})
    with pytest.raises(ValueError, match="an entity must be"):
        predictor.predict_json({"passage": passage, "query": query, "entities": [[0]]})
