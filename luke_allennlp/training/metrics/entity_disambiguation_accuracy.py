from typing import Dict, Optional

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
        mask: Optional[torch.Tensor] = None,
    ) -> None:
        """
        All of one shape, e.g. (mentions,): predicted entity ids (-1: none), gold entity ids (-1: not in the entity
        vocabulary), the prior's predictions (-1: none), how many candidates each mention has, and whether its gold
        entity is one of them; `mask`: the gold mentions to evaluate (default: all). Counted on the device and read
        when the metric is (a training step does not wait for it).
        """
        mask = torch.ones_like(gold, dtype=torch.bool) if mask is None else mask.bool()
        known = gold.ge(0) & mask
        sums = torch.stack(
            [
                mask.sum(),
                (predictions.eq(gold) & known).sum(),
                (prior_predictions.eq(gold) & known).sum(),
                (gold_in_candidates.bool() & mask).sum(),
                (candidate_counts.eq(0) & mask).sum(),
                (mask & ~known).sum(),
            ]
        ).detach()
        names = (
            "mentions",
            "correct",
            "prior_correct",
            "gold_in_candidates",
            "without_candidates",
            "gold_outside_vocabulary",
        )
        self.defer(lambda: self._counts["counts"].update(dict(zip(names, sums.tolist()))))

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
