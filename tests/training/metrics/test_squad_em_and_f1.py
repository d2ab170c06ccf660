import pytest

from luke_allennlp.training.metrics import SquadEmAndF1
from luke_allennlp.training.metrics.squad_em_and_f1 import (
    MLQA_LANGUAGES,
    exact_match_score,
    f1_score,
    max_over_golds,
    mlqa_tokens,
    normalize_answer,
)


@pytest.mark.parametrize(
    "text, normalized",
    [
        ("The  Denver Broncos!", "denver broncos"),  # lower case, article and punctuation removed, spaces collapsed
        ("An apple a day", "apple day"),
        ("Theater of the Absurd", "theater of absurd"),  # "the" inside a word stays
        ("U.S.-based", "usbased"),  # ASCII punctuation is removed, not replaced by a space
        ("24–10", "24–10"),  # the en dash is not in string.punctuation: the official script keeps it
        ("the", ""),
        ("  \t\n", ""),
    ],
)
def test_normalize_answer(text, normalized):
    assert normalize_answer(text) == normalized


def test_exact_match_and_f1_on_crafted_answers():
    assert exact_match_score("the Denver Broncos", "Denver Broncos.") == 1.0
    assert exact_match_score("Denver", "Denver Broncos") == 0.0
    assert f1_score("Denver", "Denver Broncos") == pytest.approx(2 / 3)  # precision 1, recall 1/2
    assert f1_score("Carolina Panthers 24–10", "the Panthers") == pytest.approx(2 * (1 / 3) * 1 / (1 / 3 + 1))
    assert f1_score("x y y", "y y y") == pytest.approx(2 / 3)  # tokens are counted with multiplicity
    assert f1_score("Denver Broncos", "Carolina Panthers") == 0.0


def test_empty_answers():
    assert exact_match_score("", "Denver") == 0.0 and f1_score("", "Denver") == 0.0
    assert f1_score("Denver", "") == 0.0
    # Both empty after normalisation: EM counts it, v1.1's F1 does not (no common token).
    assert exact_match_score("the", "a") == 1.0 and f1_score("the", "a") == 0.0


def test_max_over_several_golds():
    golds = ["Denver Broncos", "Broncos", "the Broncos team"]
    assert max_over_golds(exact_match_score, "Broncos", golds) == 1.0
    assert max_over_golds(f1_score, "Denver", golds) == pytest.approx(2 / 3)
    assert max_over_golds(f1_score, "Broncos team", golds) == 1.0  # the third gold, after normalisation
    with pytest.raises(ValueError, match="at least one gold"):
        max_over_golds(f1_score, "x", [])


def test_metric_averages_over_questions():
    metric = SquadEmAndF1()
    metric("Denver Broncos", ["Denver Broncos", "Broncos"])  # em 1, f1 1
    metric(["Denver", ""], [["Denver Broncos"], ["Santa Clara"]])  # em 0, f1 2/3; em 0, f1 0
    result = metric.get_metric(reset=True)
    assert result == {"em": pytest.approx(1 / 3), "f1": pytest.approx((1 + 2 / 3) / 3)}
    assert all(type(v) is float for v in result.values())
    assert metric.get_metric() == {"em": 0.0, "f1": 0.0}
    with pytest.raises(ValueError, match="2 predictions but 1"):
        metric(["a", "b"], [["a"]])
    with pytest.raises(TypeError, match="list of strings"):
        metric(["a"], ["a"])


def test_jglue_scoring_counts_characters():
    """JGLUE's JSQuAD scorer (its patch of transformers' squad_metrics.py): lower case, a final "。" stripped, white
    space collapsed, punctuation and articles kept; F1 over characters (a space counts as one)."""
    assert exact_match_score("小笠原諸島。", "小笠原諸島", "jglue") == 1.0
    assert exact_match_score("「雨季」", "雨季", "jglue") == 0.0  # brackets are not removed
    assert exact_match_score("The Alps", "alps", "jglue") == 0.0 and exact_match_score("The Alps", "alps") == 1.0
    # "東アジア" against "東アジアの広範囲": 4 characters in common, precision 1, recall 4/8.
    assert f1_score("東アジア", "東アジアの広範囲", "jglue") == pytest.approx(2 * 1 * 0.5 / 1.5)
    assert f1_score("東アジア", "東アジアの広範囲") == 0.0  # one white-space token each, different: SQuAD's F1 is 0
    assert f1_score("285 km/h", "285  km/h", "jglue") == 1.0  # spaces collapsed, then counted
    assert f1_score("ab", "ba", "jglue") == 1.0  # a bag of characters
    metric = SquadEmAndF1(scoring="jglue")
    metric(["東アジア", "5月から7月"], [["東アジアの広範囲", "東アジア"], ["5月から7月にかけて"]])
    assert metric.get_metric() == {"em": 0.5, "f1": pytest.approx((1 + 2 * 6 / 10 / (1 + 6 / 10)) / 2)}
    with pytest.raises(ValueError, match="scoring must be one of"):
        SquadEmAndF1(scoring="characters")


# MLQA's official normalisation (mlqa_evaluation_v1.py), worked out by hand per language: (language, text, tokens).
MLQA_CASES = [
    ("en", "The Denver Broncos’ «win»!", ["denver", "broncos", "win"]),  # Unicode punctuation goes too
    ("en", "Theater, a play", ["theater", "play"]),
    ("es", "Los Ángeles y las Vegas, el 24–10", ["ángeles", "y", "vegas", "2410"]),  # – (Pd) goes, no space left
    ("es", "Unas veces, la mayoría", ["veces", "mayoría"]),
    ("de", "Der Hund, das Haus und dem Mann", ["hund", "haus", "und", "mann"]),
    ("de", "Einen Tag; Derby", ["tag", "derby"]),  # "der" inside "derby" stays
    ("vi", "Những con mèo của tôi là đẹp", ["con", "mèo", "tôi", "đẹp"]),
    ("vi", "Chiếc xe cái bàn", ["xe", "bàn"]),
    ("ar", "الكتاب الكبير، في البيت", ["كتاب", "كبير", "في", "بيت"]),  # every ال, inside words too
    ("ar", "جمال", ["جم"]),  # ...even at a word's end: the official pattern's second branch matches anywhere
    ("hi", "भारत की राजधानी।", ["भारत", "की", "राजधानी"]),  # no articles; the danda (Po) is punctuation
    ("hi", "the नई दिल्ली", ["the", "नई", "दिल्ली"]),  # English articles are not Hindi's
    ("zh", "北京是中国的首都。", ["北", "京", "是", "中", "国", "的", "首", "都"]),  # one token a CJK character
    ("zh", "2008年北京奥运会 Beijing Olympics", ["2008", "年", "北", "京", "奥", "运", "会", "beijing", "olympics"]),
    ("zh", "the iPhone手机", ["the", "iphone", "手", "机"]),  # no articles in Chinese; runs split on spaces
]


@pytest.mark.parametrize("language, text, tokens", MLQA_CASES)
def test_mlqa_normalisation_in_every_language(language, text, tokens):
    assert mlqa_tokens(text, language) == tokens
    assert exact_match_score(text, " ".join(tokens), "mlqa", language) == 1.0


def test_mlqa_languages_are_mlqa_s_seven():
    assert MLQA_LANGUAGES == ("ar", "de", "en", "es", "hi", "vi", "zh")


@pytest.mark.parametrize(
    "language, prediction, gold, em, f1",
    [
        ("en", "the Broncos", "Denver Broncos", 0.0, 2 * 1 * 0.5 / 1.5),
        ("es", "el Real Madrid", "Real Madrid C.F.", 0.0, 2 * 1 * (2 / 3) / (1 + 2 / 3)),  # C.F. -> "cf"
        ("de", "die Berliner Mauer", "Berliner Mauer", 1.0, 1.0),
        ("vi", "những thành phố", "thành phố Hà Nội", 0.0, 2 * 1 * 0.5 / 1.5),
        ("ar", "المدينة", "مدينة", 1.0, 1.0),
        ("hi", "नई दिल्ली", "दिल्ली", 0.0, 2 * 0.5 * 1 / 1.5),
        ("zh", "北京市", "北京", 0.0, 2 * (2 / 3) * 1 / (2 / 3 + 1)),  # characters: 北 京 市 vs 北 京
        ("zh", "", "北京", 0.0, 0.0),
    ],
)
def test_mlqa_exact_match_and_f1(language, prediction, gold, em, f1):
    assert exact_match_score(prediction, gold, "mlqa", language) == em
    assert f1_score(prediction, gold, "mlqa", language) == pytest.approx(f1)
    metric = SquadEmAndF1("mlqa", language)
    metric(prediction, [gold, "something else entirely"])
    assert metric.get_metric() == pytest.approx({"em": em, "f1": f1})


def test_mlqa_scoring_needs_one_of_its_languages():
    for language in ("el", None, "EN"):
        with pytest.raises(ValueError, match="MLQA's ar, de, en, es, hi, vi, zh; got"):
            SquadEmAndF1("mlqa", language)
    with pytest.raises(ValueError, match="only used by MLQA scoring"):
        SquadEmAndF1("squad", "de")
    # SQuAD scoring keeps the en dash and does not split Chinese: the two scorings differ where MLQA's should.
    assert f1_score("24–10", "2410") == 0.0 and f1_score("24–10", "2410", "mlqa", "en") == 1.0
    assert f1_score("北京市", "北京") == 0.0
