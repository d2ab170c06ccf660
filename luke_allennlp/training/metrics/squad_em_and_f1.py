"""
Exact match and F1 of extractive QA answers, as the official SQuAD v1.1 evaluation script computes them:
both strings normalised (lower case, punctuation removed, the articles a/an/the removed, white space
collapsed), EM = normalised strings equal, F1 = harmonic mean of precision and recall over the normalised
white-space tokens (counted with multiplicity); each prediction scored against the best of its gold answers.
The official script reports percentages; these functions and `SquadEmAndF1` give fractions in [0, 1].

`scoring="jglue"` scores as JGLUE's JSQuAD evaluation (its patch of transformers' `squad_metrics.py`) does for
Japanese, which has no spaces between words: the answer is lower-cased, a final `。` stripped, white space collapsed
(no punctuation or article removal), and F1 counts characters (spaces included) instead of white-space tokens.
"""

import re
import string
from collections import Counter
from typing import Callable, Dict, Sequence, Union

from allennlp.training.metrics.metric import Metric

from luke_allennlp.training.metrics.counting_metric import CountingMetric

_PUNCTUATION = frozenset(string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the)\b")


def normalize_answer(text: str) -> str:
    text = "".join(ch for ch in text.lower() if ch not in _PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", text).split())


def normalize_answer_jglue(text: str) -> str:
    return " ".join(text.lower().rstrip("。").split())


SCORINGS = ("squad", "jglue")


def _check_scoring(scoring: str) -> None:
    if scoring not in SCORINGS:
        raise ValueError(f"scoring must be one of {SCORINGS}, not {scoring!r}")


def exact_match_score(prediction: str, gold: str, scoring: str = "squad") -> float:
    _check_scoring(scoring)
    normalize = normalize_answer_jglue if scoring == "jglue" else normalize_answer
    return float(normalize(prediction) == normalize(gold))


def f1_score(prediction: str, gold: str, scoring: str = "squad") -> float:
    _check_scoring(scoring)
    if scoring == "jglue":  # characters of the normalised answers
        predicted_tokens, gold_tokens = list(normalize_answer_jglue(prediction)), list(normalize_answer_jglue(gold))
    else:
        predicted_tokens, gold_tokens = normalize_answer(prediction).split(), normalize_answer(gold).split()
    same = sum((Counter(predicted_tokens) & Counter(gold_tokens)).values())
    if same == 0:  # also when either side is empty after normalisation (v1.1 gives 0, unlike v2.0)
        return 0.0
    precision = same / len(predicted_tokens)
    recall = same / len(gold_tokens)
    return 2 * precision * recall / (precision + recall)


def max_over_golds(fn: Callable[..., float], prediction: str, golds: Sequence[str], scoring: str = "squad") -> float:
    if not golds:
        raise ValueError("a prediction needs at least one gold answer to be scored")
    return max(fn(prediction, gold, scoring) for gold in golds)


@Metric.register("luke_squad_em_and_f1")
class SquadEmAndF1(CountingMetric):
    """
    Average exact match (`em`) and F1 (`f1`) over the questions seen, each question scored against the best of its
    gold answers, as fractions (the official SQuAD v1.1 script prints them x 100). Exact under distributed training.

    Call it with one prediction and its gold answers (`metric("Denver Broncos", ["Denver Broncos",
    "Broncos"])`) or with a batch (`metric(["a", "b"], [["a"], ["b", "B"]])`).

    # Parameters

    scoring : `str`, optional (default = `"squad"`)
        `"squad"` (the official SQuAD v1.1 script) or `"jglue"` (JGLUE's JSQuAD scoring, character F1).
    """

    COUNTERS = ("sums",)

    def __init__(self, scoring: str = "squad") -> None:
        _check_scoring(scoring)
        self.scoring = scoring
        super().__init__()

    def __call__(  # type: ignore[override]
        self, predictions: Union[str, Sequence[str]], golds: Union[Sequence[str], Sequence[Sequence[str]]]
    ) -> None:
        if isinstance(predictions, str):
            predictions, golds = [predictions], [golds]  # type: ignore[list-item]
        if len(predictions) != len(golds):
            raise ValueError(f"{len(predictions)} predictions but {len(golds)} lists of gold answers")
        sums = self._counts["sums"]
        for prediction, answers in zip(predictions, golds):
            if isinstance(answers, str):
                raise TypeError(f"gold answers must be a list of strings per question, got the string {answers!r}")
            sums.update(
                em=max_over_golds(exact_match_score, prediction, answers, self.scoring),
                f1=max_over_golds(f1_score, prediction, answers, self.scoring),
                count=1,
            )

    def get_metric(self, reset: bool = False) -> Dict[str, float]:
        sums = self.counts()["sums"]
        if reset:
            self.reset()
        count = sums["count"]
        return {"em": sums["em"] / count if count else 0.0, "f1": sums["f1"] / count if count else 0.0}
