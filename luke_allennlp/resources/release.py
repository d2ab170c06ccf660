"""
The weights and entities of a transformers LUKE checkpoint written from a trained model (`allennlp export-luke`).

As transformers' conversion of the original LUKE checkpoints does, a release gets what fine-tuning uses but
pretraining does not train, none of which changes the model's outputs on its inputs:

- the entity-aware query matrices (`w2e_query`, `e2w_query`, `e2e_query`), copies of the word query when
  pretraining used the plain attention (with equal queries the two attentions compute the same thing);
- the `<ent>` and `<ent2>` word tokens of `LukeTokenizer`, initialised from `@` and `#`;
- the `[MASK2]` entity, initialised from `[MASK]`.
"""

import copy
from typing import Any, Dict, List, Optional, Tuple

import torch

from luke_allennlp.modeling import LukeConfig, LukeForPretraining
from luke_allennlp.modeling.loading import EXTRA_QUERIES
from luke_allennlp.resources.checkpoint_tokenizer import checkpoint_entities
from luke_allennlp.resources.entity_vocab import EntityVocab
from luke_allennlp.resources.task_checkpoints import CHECKPOINT_SPECIAL_ENTITIES
from luke_allennlp.resources.tokenization import ENTITY_MARKERS


def release_state(
    model: LukeForPretraining,
    luke_tokenizer: Any,
    trained_words: Dict[str, int],
    vocab: EntityVocab,
    rows: Optional[List[int]] = None,
) -> Tuple[Dict[str, torch.Tensor], LukeConfig]:
    """The state dict and config of the pretraining release (see the module's docstring) of a pretrained model; `trained_words` is the
    training tokenizer's vocabulary; `rows` the entity rows a lite release keeps."""
    config = copy.deepcopy(model.config)
    state = {k: v.detach().clone() for k, v in model.state_dict().items()}
    entity_aware_queries(state, config, "luke.")
    config.vocab_size = add_marker_rows(
        state, "luke.embeddings.word_embeddings.weight", ["lm_head.bias"], luke_tokenizer, trained_words
    )
    entity_table, entity_bias = "luke.entity_embeddings.entity_embeddings.weight", "entity_predictions.bias"
    if rows is not None:
        rows = rows + [vocab.mask_id]  # [MASK2]
    elif "[MASK2]" not in vocab:
        rows = list(range(len(vocab))) + [vocab.mask_id]
    if rows is not None:
        for key in (entity_table, entity_bias):
            state[key] = state[key][rows]
        config.entity_vocab_size = len(rows)
    return state, config


def entity_aware_queries(state: Dict[str, torch.Tensor], config: LukeConfig, prefix: str) -> None:
    """A model trained with the plain attention gets entity-aware queries copied from the word query."""
    if config.use_entity_aware_attention:
        return
    for layer in range(config.num_hidden_layers):
        attention = f"{prefix}encoder.layer.{layer}.attention.self."
        for name in EXTRA_QUERIES:
            for param in ("weight", "bias"):
                state[attention + f"{name}.{param}"] = state[attention + f"query.{param}"].clone()
    config.use_entity_aware_attention = True


def add_marker_rows(
    state: Dict[str, torch.Tensor],
    word_table: str,
    extra: List[str],
    luke_tokenizer: Any,
    trained_words: Dict[str, int],
) -> int:
    """Gives `<ent>`/`<ent2>` (if the training tokenizer lacked them) the rows of `@`/`#` in the word table and in
    the `extra` per-word tensors; returns the new vocabulary size."""
    for token, source in ENTITY_MARKERS.items():
        if token in trained_words:
            continue  # the training tokenizer had it: keep what was trained
        index = luke_tokenizer.convert_tokens_to_ids(token)
        source_index = next(
            (
                i
                for i in luke_tokenizer.convert_tokens_to_ids([source, "\u2581" + source])
                if i is not None and i != luke_tokenizer.unk_token_id
            ),
            luke_tokenizer.unk_token_id,
        )
        size = state[word_table].size(0)
        if index > size:
            raise ValueError(f"the tokenizer gives {token} the id {index}, beyond the next free row {size}")
        for key in [word_table] + [k for k in extra if k in state]:
            row = state[key][source_index : source_index + 1]
            # A new row, or a row of an id the training vocabulary left unused.
            if index == size:
                state[key] = torch.cat([state[key], row])
            else:
                state[key] = state[key].index_copy(0, torch.tensor([index]), row)
    return state[word_table].size(0)


def checkpoint_entity_rows(model_name: str, size: int, lite: bool) -> Tuple[Dict[str, int], Optional[List[int]]]:
    """The entity vocabulary of a model that kept its checkpoint's entity table (luke_squad), and the rows to keep:
    all, with [MASK2] appended if missing; the special entities alone if `lite`."""
    found = checkpoint_entities(model_name)
    if found is None:
        raise ValueError(
            f"{model_name}: no entity vocabulary for the model's entity table (neither entity_vocab.json nor an "
            "entity_vocab in tokenizer_config.json)"
        )
    entities, path = found
    if max(entities.values()) + 1 != size:
        raise ValueError(f"{path} has {max(entities.values()) + 1} entities, the model's entity table {size} rows")
    special = {name: entities[name] for name in CHECKPOINT_SPECIAL_ENTITIES if name in entities}
    special.setdefault("[MASK2]", special["[MASK]"])
    if lite:
        return {name: i for i, name in enumerate(CHECKPOINT_SPECIAL_ENTITIES)}, [
            special[n] for n in CHECKPOINT_SPECIAL_ENTITIES
        ]
    if "[MASK2]" in entities:
        return entities, None
    return {**entities, "[MASK2]": size}, list(range(size)) + [special["[MASK]"]]
