from typing import Dict

import torch
from allennlp.training.metrics.metric import Metric

from luke_allennlp.training.metrics.counting_metric import CountingMetric


@Metric.register("luke_entity_disambiguation_accuracy")
class EntityDisambiguationAccuracy(CountingMetric):
    """
    In-KB micro accuracy of entity disambiguation: correct predictions / gold mentions (mentions whose gold is NIL
    are no ED mentions and never reach it). A mention without candidates, or whose gold entity is outside the
    entity vocabulary or outside its candidates, counts as wrong. Also reported on the same mentions:

    - `prior_accuracy`: always predicting the candidate of highest p(entity | mention), the usual baseline;
    - `candidate_recall`: the share of mentions whose gold entity is among their candidates (the ceiling of both);
    - `mentions`, `mentions_without_candidates`, `gold_outside_vocabulary`: counts.

    Exact under distributed training (the counts of every process are summed).
    """

    COUNTERS = ("counts",)

    def __call__(  # type: ignore[override]
        self,
        predictions: torch.Tensor,
        gold: torch.Tensor,
        prior_predictions: torch.Tensor,
        candidate_counts: torch.Tensor,
        gold_in_candidates: torch.Tensor,
    ) -> None:
        """
        All (mentions,), for the gold mentions evaluated: predicted entity ids (-1: none), gold entity ids (-1: not
        in the entity vocabulary), the prior's predictions (-1: none), how many candidates each mention has, and
        whether its gold entity is one of them.
        """
        known = gold.ge(0)
        self._counts["counts"].update(
            mentions=gold.numel(),
            correct=int((predictions.eq(gold) & known).sum()),
            prior_correct=int((prior_predictions.eq(gold) & known).sum()),
            gold_in_candidates=int(gold_in_candidates.sum()),
            without_candidates=int(candidate_counts.eq(0).sum()),
            gold_outside_vocabulary=int((~known).sum()),
        )

    def get_metric(self, reset: bool = False) -> Dict[str, float]:
        counts = self.counts()["counts"]
        if reset:
            self.reset()
        mentions = counts["mentions"]
        return {
            "accuracy": counts["correct"] / mentions if mentions else 0.0,
            "prior_accuracy": counts["prior_correct"] / mentions if mentions else 0.0,
            "candidate_recall": counts["gold_in_candidates"] / mentions if mentions else 0.0,
            "mentions": float(mentions),
            "mentions_without_candidates": float(counts["without_candidates"]),
            "gold_outside_vocabulary": float(counts["gold_outside_vocabulary"]),
        }
