"""The encoder's typed inputs: each field's padding declared once, the readers' fields turned into them in one place."""

import numpy as np
import pytest
import torch
from allennlp.data import Batch, Instance

from luke_allennlp.data.inputs import tensor_fields
from luke_allennlp.modeling import LukeConfig, LukeEncoder
from luke_allennlp.modeling.inputs import FIELD_PADDING, PADDING, LukeFields, LukeInputs
from luke_allennlp.modeling.static_shapes import ENTITIES, MENTIONS, WORDS


def tiny_encoder() -> LukeEncoder:
    torch.manual_seed(0)
    config = LukeConfig(
        vocab_size=50,
        entity_vocab_size=10,
        hidden_size=16,
        entity_emb_size=8,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=40,
    )
    return LukeEncoder(config).eval()


def test_every_input_declares_its_padding_once():
    assert PADDING._fields == LukeInputs._fields and FIELD_PADDING._fields == LukeFields._fields
    assert [p.kind for p in PADDING] == [WORDS, WORDS, WORDS, ENTITIES, MENTIONS, ENTITIES, ENTITIES]
    assert PADDING.entity_position_ids.value == -1 and PADDING.attention_mask.value == 0


def test_the_readers_fields_pad_as_declared():
    rows = [([0, 5, 2], [1]), ([0, 2], [1, 1])]
    fields = [
        tensor_fields(
            7,
            word_ids=np.array(words),
            word_attention_mask=np.ones(len(words), dtype=bool),
            entity_start_positions=np.array(starts),
        )
        for words, starts in rows
    ]
    batch = Batch([Instance(f) for f in fields]).as_tensor_dict()
    assert batch["word_ids"][1].tolist() == [0, 2, 7]  # the tokenizer's pad id
    assert batch["word_attention_mask"][1].tolist() == [True, True, False]
    assert batch["entity_start_positions"][0].tolist() == [1, 0]


def test_fields_become_the_encoders_inputs_with_capped_positions():
    word_ids = torch.tensor([[[0, 5, 6, 7, 2], [0, 5, 2, 1, 1]]])  # (batch, windows, words)
    fields = LukeFields(
        word_ids,
        word_ids != 1,
        entity_ids=torch.tensor([[[3], [4]]]),
        entity_start_positions=torch.tensor([[[1], [1]]]),
        entity_end_positions=torch.tensor([[[3], [1]]]),
    )
    passes = (torch.tensor([0]), torch.tensor([0]))
    inputs = fields.select(passes).luke_inputs(longest_mention=None, position_cap=2)
    assert inputs.input_ids.tolist() == [[0, 5, 6, 7, 2]]
    assert inputs.entity_position_ids.tolist() == [[[1, 2]]]  # positions 1..3, the first two kept
    assert inputs.entity_token_type_ids is None and inputs.sizes() == (1, 5, 1)
    with pytest.raises(ValueError, match="entity_position_ids is required"):
        LukeInputs(word_ids[0], entity_ids=torch.tensor([[3], [4]])).complete()


def test_the_encoder_takes_its_inputs_whole_or_by_transformers_names():
    encoder = tiny_encoder()
    input_ids = torch.tensor([[0, 5, 6, 2], [0, 5, 2, 1]])
    names = dict(
        attention_mask=input_ids != 1,
        entity_ids=torch.tensor([[3], [4]]),
        entity_position_ids=torch.tensor([[[1, 2]], [[1, -1]]]),
    )
    whole = encoder(LukeInputs(input_ids, **names))
    by_name = encoder(input_ids, **names)
    assert torch.equal(whole.last_hidden_state, by_name.last_hidden_state)
    assert torch.equal(whole.entity_last_hidden_state, by_name.entity_last_hidden_state)
    with pytest.raises(ValueError, match="no other input is given by name"):
        encoder(LukeInputs(input_ids), attention_mask=names["attention_mask"])
