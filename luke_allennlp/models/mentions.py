"""What the task models share: encoding words with mention entities, and a mention's feature vector."""
from typing import Optional, Tuple

import torch
from allennlp.modules.token_embedders import TokenEmbedder

from luke_allennlp.modeling.encoder import span_position_ids
from luke_allennlp.modules.token_embedders.luke_embedder import LukeEmbedder

# Mention features: the first and last subword's states ("words"), the entity's state ("entity"), or all three.
FEATURE_WIDTHS = {"all": 3, "words": 2, "entity": 1}


def check_feature(feature: str, embedder: TokenEmbedder) -> None:
    if feature not in FEATURE_WIDTHS:
        raise ValueError(f"feature must be one of {tuple(FEATURE_WIDTHS)}, not {feature!r}")
    if feature != "words" and not isinstance(embedder, LukeEmbedder):
        raise ValueError(f'feature "{feature}" needs entity states: use the "luke" embedder')


def encode_mentions(
    embedder: TokenEmbedder,
    word_ids: torch.Tensor,
    word_mask: torch.Tensor,
    entity_ids: torch.Tensor,
    starts: torch.Tensor,
    ends: torch.Tensor,
    entity_mask: Optional[torch.Tensor] = None,
) -> Tuple[torch.Tensor, Optional[torch.Tensor]]:
    """
    Word states (batch, words, hidden) and, with a `luke` embedder, the states (batch, entities, hidden) of
    entities whose mentions span subwords `starts`..`ends` (inclusive), both (batch, entities).
    A word-only embedder gets the words alone and returns no entity states.
    """
    if isinstance(embedder, LukeEmbedder):
        out = embedder.encode(
            word_ids, word_mask, entity_ids=entity_ids, entity_position_ids=span_position_ids(starts, ends),
            entity_attention_mask=entity_mask,
        )  # fmt: skip
        return out.last_hidden_state, out.entity_last_hidden_state
    return embedder(token_ids=word_ids, mask=word_mask), None


def mention_features(
    word_states: torch.Tensor, entity_states: Optional[torch.Tensor], starts: torch.Tensor, ends: torch.Tensor, feature: str
) -> torch.Tensor:
    """(batch, entities, FEATURE_WIDTHS[feature] * hidden)"""
    hidden = word_states.size(-1)
    first = word_states.gather(1, starts[..., None].expand(-1, -1, hidden))
    last = word_states.gather(1, ends[..., None].expand(-1, -1, hidden))
    parts = {"all": [first, last, entity_states], "words": [first, last], "entity": [entity_states]}[feature]
    return torch.cat(parts, dim=-1)
