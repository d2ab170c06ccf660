"""
Exact match and F1 of extractive QA answers, as the official SQuAD v1.1 evaluation script computes them:
both strings normalised (lower case, punctuation removed, the articles a/an/the removed, white space
collapsed), EM = normalised strings equal, F1 = harmonic mean of precision and recall over the normalised
white-space tokens (counted with multiplicity); each prediction scored against the best of its gold answers.
The official script reports percentages; these functions and `SquadEmAndF1` give fractions in [0, 1].

`scoring="jglue"` scores as JGLUE's JSQuAD evaluation (its patch of transformers' `squad_metrics.py`) does for
Japanese, which has no spaces between words: the answer is lower-cased, a final `。` stripped, white space collapsed
(no punctuation or article removal), and F1 counts characters (spaces included) instead of white-space tokens.

`scoring="mlqa"` scores as MLQA's official evaluation (`mlqa_evaluation_v1.py`), for the language of the answer (the
context's): lower case; every Unicode punctuation character (category P*) and ASCII punctuation removed; the articles
of the language removed (en `a an the`; es `un una unos unas el la los las`; de `ein eine einen einem eines einer der
die das den dem des`; vi `của là cái chiếc những`, each as a whole word; ar every `ال`, inside words too, as the
official pattern matches; none for hi and zh); then tokens: zh splits every CJK character (U+4E00-U+9FA5) into a
token of its own and the rest on white space, the other languages split on white space. MLQA defines these seven
languages only; another is an error.
"""

import re
import string
import unicodedata
from collections import Counter
from typing import Callable, Dict, List, Optional, Sequence, Union

from allennlp.training.metrics.metric import Metric

from luke_allennlp.training.metrics.counting_metric import CountingMetric

_PUNCTUATION = frozenset(string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the)\b")


def normalize_answer(text: str) -> str:
    text = "".join(ch for ch in text.lower() if ch not in _PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", text).split())


def normalize_answer_jglue(text: str) -> str:
    return " ".join(text.lower().rstrip("。").split())


def _articles(words: str) -> "re.Pattern[str]":
    return re.compile(rf"\b({words})\b")


# MLQA's answer languages and their articles (None: the language has none).
_MLQA_ARTICLES: Dict[str, Optional["re.Pattern[str]"]] = {
    "ar": re.compile("ال"),  # the official `\sال^|ال`: its first branch cannot match, so every ال goes
    "de": _articles("ein|eine|einen|einem|eines|einer|der|die|das|den|dem|des"),
    "en": _articles("a|an|the"),
    "es": _articles("un|una|unos|unas|el|la|los|las"),
    "hi": None,
    "vi": _articles("của|là|cái|chiếc|những"),
    "zh": None,
}
MLQA_LANGUAGES = tuple(sorted(_MLQA_ARTICLES))
_CJK = re.compile("([\u4e00-\u9fa5])")


def _is_mlqa_punctuation(ch: str) -> bool:
    return ch in _PUNCTUATION or unicodedata.category(ch).startswith("P")


def check_mlqa_language(language: Optional[str]) -> str:
    if language not in _MLQA_ARTICLES:
        raise ValueError(
            f"MLQA scoring needs the answer language, one of MLQA's {', '.join(MLQA_LANGUAGES)}; got {language!r}"
        )
    return language  # type: ignore[return-value]


def mlqa_tokens(text: str, language: str) -> List[str]:
    """The tokens of an answer normalised as MLQA's official script does for `language` (see the module's doc)."""
    articles = _MLQA_ARTICLES[check_mlqa_language(language)]
    text = "".join(ch for ch in text.lower() if not _is_mlqa_punctuation(ch))
    if articles is not None:
        text = articles.sub(" ", text)
    if language == "zh":
        text = _CJK.sub(r" \1 ", text)  # each CJK character a token; other runs split on white space
    return text.split()


SCORINGS = ("squad", "jglue", "mlqa")


def _check_scoring(scoring: str, language: Optional[str] = None) -> None:
    if scoring not in SCORINGS:
        raise ValueError(f"scoring must be one of {SCORINGS}, not {scoring!r}")
    if scoring == "mlqa":
        check_mlqa_language(language)
    elif language is not None:
        raise ValueError(f"an answer language ({language!r}) is only used by MLQA scoring, not {scoring!r}")


def exact_match_score(prediction: str, gold: str, scoring: str = "squad", language: Optional[str] = None) -> float:
    _check_scoring(scoring, language)
    if scoring == "mlqa":
        return float(mlqa_tokens(prediction, language) == mlqa_tokens(gold, language))  # type: ignore[arg-type]
    normalize = normalize_answer_jglue if scoring == "jglue" else normalize_answer
    return float(normalize(prediction) == normalize(gold))


def f1_score(prediction: str, gold: str, scoring: str = "squad", language: Optional[str] = None) -> float:
    _check_scoring(scoring, language)
    if scoring == "jglue":  # characters of the normalised answers
        predicted_tokens, gold_tokens = list(normalize_answer_jglue(prediction)), list(normalize_answer_jglue(gold))
    elif scoring == "mlqa":
        predicted_tokens, gold_tokens = mlqa_tokens(prediction, language), mlqa_tokens(gold, language)  # type: ignore[arg-type]
    else:
        predicted_tokens, gold_tokens = normalize_answer(prediction).split(), normalize_answer(gold).split()
    same = sum((Counter(predicted_tokens) & Counter(gold_tokens)).values())
    if same == 0:  # also when either side is empty after normalisation (v1.1 gives 0, unlike v2.0)
        return 0.0
    precision = same / len(predicted_tokens)
    recall = same / len(gold_tokens)
    return 2 * precision * recall / (precision + recall)


def max_over_golds(
    fn: Callable[..., float],
    prediction: str,
    golds: Sequence[str],
    scoring: str = "squad",
    language: Optional[str] = None,
) -> float:
    if not golds:
        raise ValueError("a prediction needs at least one gold answer to be scored")
    return max(fn(prediction, gold, scoring, language) for gold in golds)


@Metric.register("luke_squad_em_and_f1")
class SquadEmAndF1(CountingMetric):
    """
    Average exact match (`em`) and F1 (`f1`) over the questions seen, each question scored against the best of its
    gold answers, as fractions (the official SQuAD v1.1 script prints them x 100). Exact under distributed training.

    Call it with one prediction and its gold answers (`metric("Denver Broncos", ["Denver Broncos",
    "Broncos"])`) or with a batch (`metric(["a", "b"], [["a"], ["b", "B"]])`).

    # Parameters

    scoring : `str`, optional (default = `"squad"`)
        `"squad"` (the official SQuAD v1.1 script), `"jglue"` (JGLUE's JSQuAD scoring, character F1) or `"mlqa"`
        (MLQA's official script, for `language`).
    language : `str`, optional (default = `None`)
        The answers' language, for `"mlqa"` only: one of `MLQA_LANGUAGES`.
    """

    COUNTERS = ("sums",)

    def __init__(self, scoring: str = "squad", language: Optional[str] = None) -> None:
        _check_scoring(scoring, language)
        self.scoring = scoring
        self.language = language
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
                em=max_over_golds(exact_match_score, prediction, answers, self.scoring, self.language),
                f1=max_over_golds(f1_score, prediction, answers, self.scoring, self.language),
                count=1,
            )

    def get_metric(self, reset: bool = False) -> Dict[str, float]:
        sums = self.counts()["sums"]
        if reset:
            self.reset()
        count = sums["count"]
        return {"em": sums["em"] / count if count else 0.0, "f1": sums["f1"] / count if count else 0.0}
