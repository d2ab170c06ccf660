"""luke_allennlp/resources/release.py: the weights of a transformers LUKE release written from a trained model."""

import json

import torch
from transformers import RobertaTokenizerFast

from luke_allennlp.modeling import LukeConfig, LukeForPretraining
from luke_allennlp.resources.entity_vocab import EntityVocab
from luke_allennlp.resources.release import release_state
from luke_allennlp.resources.tokenization import write_luke_tokenizer


def test_release_appends_rows_for_new_tokens(shared_data, tmp_path):
    """With a word vocabulary without free ids, `<ent>`/`<ent2>` get new rows (from `@`/`#`); `[MASK2]` a new entity
    row (from `[MASK]`); the plain attention's query is copied to the entity-aware ones."""
    words = json.loads((shared_data / "tokenizers" / "roberta-base" / "vocab.json").read_text())
    words.update({f"madeupword{i}": 50261 + i for i in range(3)})  # fill the ids the shared vocabulary leaves free
    (tmp_path / "vocab.json").write_text(json.dumps(words))
    word_tokenizer = RobertaTokenizerFast(
        str(tmp_path / "vocab.json"), str(shared_data / "tokenizers" / "roberta-base" / "merges.txt")
    )
    config = LukeConfig(
        vocab_size=50265,
        entity_vocab_size=5,
        hidden_size=32,
        entity_emb_size=16,
        num_hidden_layers=1,
        num_attention_heads=4,
        intermediate_size=37,
        max_position_embeddings=40,
        use_entity_aware_attention=False,
    )
    model = LukeForPretraining(config)
    vocab = EntityVocab(["[PAD]", "[UNK]", "[MASK]", "Tokyo", "Kyoto"])
    entities = {**vocab.to_transformers_json(), "[MASK2]": len(vocab)}  # as export_luke appends it
    luke_tokenizer = write_luke_tokenizer(word_tokenizer, entities, str(tmp_path / "out"))
    state, released = release_state(model, luke_tokenizer, word_tokenizer.get_vocab(), vocab)
    assert (released.vocab_size, released.entity_vocab_size, released.use_entity_aware_attention) == (50267, 6, True)
    table, bias = state["luke.embeddings.word_embeddings.weight"], state["lm_head.bias"]
    for index, source in ((50265, "@"), (50266, "#")):
        source_index = word_tokenizer.convert_tokens_to_ids(source)
        assert torch.equal(table[index], table[source_index]) and bias[index] == bias[source_index]
    assert torch.equal(
        state["luke.entity_embeddings.entity_embeddings.weight"][5],
        model.state_dict()["luke.entity_embeddings.entity_embeddings.weight"][2],
    )
    layer = "luke.encoder.layer.0.attention.self."
    assert torch.equal(state[layer + "w2e_query.weight"], state[layer + "query.weight"])
    LukeForPretraining(released).load_state_dict(state)  # strict: the release is complete
