import pytest

from data_readers.luke_entity_disambiguation import LukeEntityDisambiguationReader
from luke_allennlp.predictors.luke_entity_disambiguation import LukeEntityDisambiguationPredictor
from luke_allennlp.resources.mentions.json_dictionary import MentionDictionary
from tests.models.test_luke_entity_disambiguation import build_model

TEXT = "Proudhon wrote on the Free Territory and on syndicalism, far from Oranienburg."


@pytest.fixture(scope="module")
def predictor(ed_wikipedia):
    reader = LukeEntityDisambiguationReader(
        str(ed_wikipedia["model"]), mention_dictionary=str(ed_wikipedia["dictionary"]), max_seq_length=32
    )
    return LukeEntityDisambiguationPredictor(build_model(ed_wikipedia["model"]).eval(), reader)


def test_links_raw_text(predictor, ed_wikipedia):
    dictionary = MentionDictionary.from_file(ed_wikipedia["dictionary"])
    mentions = predictor.predict_json({"text": TEXT})["mentions"]
    assert [m["text"] for m in mentions] == ["Proudhon", "Free Territory", "syndicalism", "Oranienburg"]
    for m in mentions:
        assert set(m) == {"start", "end", "text", "entity", "score"} and TEXT[m["start"] : m["end"]] == m["text"]
        assert m["entity"] in [title for title, _ in dictionary.candidates(m["text"])] and 0 < m["score"] <= 1
    assert mentions[0]["entity"] == "Pierre-Joseph Proudhon" and mentions[0]["score"] == pytest.approx(
        1.0
    )  # one candidate


def test_given_mentions_and_long_texts(predictor):
    result = predictor.predict_json({"text": TEXT, "mentions": [[66, 77], [0, 5]]})
    # in text order; "Proud" is no name: no candidate, no entity
    assert [(m["text"], m["entity"] is None, m["score"]) for m in result["mentions"]][0] == ("Proud", True, 0.0)
    assert result["mentions"][1]["text"] == "Oranienburg" and result["mentions"][1]["entity"] is not None
    # Ten sentences need several 32-subword windows: every mention comes back, once, in order.
    long = " ".join([TEXT] * 10)
    mentions = predictor.predict_json({"text": long})["mentions"]
    assert len(mentions) == 40 and [m["start"] for m in mentions] == sorted(m["start"] for m in mentions)
    assert all(long[m["start"] : m["end"]] == m["text"] for m in mentions)
    assert predictor.predict_json({"text": "Nothing to link."}) == {"mentions": []}
    assert predictor.predict_batch_json([{"text": TEXT}, {"text": "x"}])[1] == {"mentions": []}


@pytest.mark.parametrize(
    "inputs, message",
    [
        ({"sentence": "x"}, 'needs "text"'),
        ({"text": "abc", "mentions": [[2, 9]]}, r"not \[start, end\] with 0 <= start < end <= 3"),
    ],
)
def test_bad_input(predictor, inputs, message):
    with pytest.raises(ValueError, match=message):
        predictor.predict_json(inputs)
