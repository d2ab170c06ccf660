"""A mention's feature vector, from the word states of its first and last subword and its entity state."""

from typing import Optional

import torch

# Mention features: the first and last subword's states ("words"), the entity's state ("entity"), or all three.
FEATURE_WIDTHS = {"all": 3, "words": 2, "entity": 1}


def check_feature(feature: str, model) -> None:
    """`feature` must be one of FEATURE_WIDTHS, and one with entity states needs a model (a `LukeTaskModel`) that
    has them."""
    if feature not in FEATURE_WIDTHS:
        raise ValueError(f"feature must be one of {tuple(FEATURE_WIDTHS)}, not {feature!r}")
    if feature != "words":
        model.require_entity_states(f'feature "{feature}"')


def mention_features(
    word_states: torch.Tensor,
    entity_states: Optional[torch.Tensor],
    starts: torch.Tensor,
    ends: torch.Tensor,
    feature: str,
) -> torch.Tensor:
    """(batch, entities, FEATURE_WIDTHS[feature] * hidden)"""
    hidden = word_states.size(-1)
    first = word_states.gather(1, starts[..., None].expand(-1, -1, hidden))
    last = word_states.gather(1, ends[..., None].expand(-1, -1, hidden))
    parts = {"all": [first, last, entity_states], "words": [first, last], "entity": [entity_states]}[feature]
    return torch.cat(parts, dim=-1)
