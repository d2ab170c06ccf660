"""LukeEncoder.from_pretrained / save_pretrained against transformers checkpoints built offline."""

import json
from pathlib import Path

import pytest
import torch
import transformers

from luke_allennlp.modeling import LukeEncoder
from luke_allennlp.modeling.checkpoint_files import HubUnavailableError

TOL = 1e-5


def tiny_luke_config(**kwargs):
    defaults = dict(
        vocab_size=100,
        entity_vocab_size=20,
        hidden_size=32,
        entity_emb_size=16,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=37,
        max_position_embeddings=40,
    )
    return transformers.LukeConfig(**{**defaults, **kwargs})


def inputs(with_entities=True):
    torch.manual_seed(3)
    out = dict(input_ids=torch.randint(3, 100, (2, 9)), attention_mask=torch.ones(2, 9, dtype=torch.long))
    out["input_ids"][1, 6:], out["attention_mask"][1, 6:] = 1, 0
    if with_entities:
        out["entity_ids"] = torch.tensor([[3, 4], [5, 0]])
        out["entity_attention_mask"] = torch.tensor([[1, 1], [1, 0]])
        out["entity_position_ids"] = torch.tensor([[[1, 2], [4, -1]], [[3, -1], [-1, -1]]])
    return out


def assert_same_outputs(ours, reference, **kwargs):
    ours.eval(), reference.eval()
    batch = inputs(**kwargs)
    with torch.no_grad():
        actual, expected = ours(**batch), reference(**batch)
    assert (actual.last_hidden_state - expected.last_hidden_state).abs().max() < TOL
    if actual.entity_last_hidden_state is not None:
        real = batch["entity_attention_mask"].bool()
        diff = actual.entity_last_hidden_state[real] - expected.entity_last_hidden_state[real]
        assert diff.abs().max() < TOL


@pytest.mark.parametrize(
    "head_class", [transformers.LukeModel, transformers.LukeForMaskedLM, transformers.LukeForEntityClassification]
)
def test_loads_transformers_luke_checkpoints(tmp_path, head_class):
    torch.manual_seed(0)
    config = tiny_luke_config(num_labels=3)
    task_model = head_class(config)
    task_model.save_pretrained(tmp_path)
    ours = LukeEncoder.from_pretrained(str(tmp_path))
    base = task_model if head_class is transformers.LukeModel else task_model.luke
    assert_same_outputs(ours, base)


def test_save_pretrained_loads_in_transformers_without_missing_keys(tmp_path, tiny_luke_dir):
    ours = LukeEncoder.from_pretrained(str(tiny_luke_dir))
    ours.save_pretrained(str(tmp_path))
    reference, info = transformers.LukeModel.from_pretrained(str(tmp_path), output_loading_info=True)
    assert not info["missing_keys"] and not info["unexpected_keys"] and not info["mismatched_keys"]
    assert_same_outputs(ours, reference)
    assert json.loads((tmp_path / "config.json").read_text())["model_type"] == "luke"


def test_entity_aware_queries_initialised_from_query(tmp_path):
    torch.manual_seed(0)
    transformers.LukeModel(tiny_luke_config(use_entity_aware_attention=False)).save_pretrained(tmp_path)
    ours = LukeEncoder.from_pretrained(str(tmp_path), use_entity_aware_attention=True)
    assert ours.config.use_entity_aware_attention
    attention = ours.encoder.layer[1].attention.self
    for name in ("w2e_query", "e2w_query", "e2e_query"):
        assert torch.equal(getattr(attention, name).weight, attention.query.weight)
        assert torch.equal(getattr(attention, name).bias, attention.query.bias)
    # With all queries equal to Q, entity-aware attention computes exactly the original attention.
    reference = transformers.LukeModel.from_pretrained(str(tmp_path))
    assert_same_outputs(ours, reference)


def test_roberta_initialisation(tiny_roberta_dir):
    roberta = transformers.RobertaModel.from_pretrained(str(tiny_roberta_dir)).eval()
    ours = LukeEncoder.from_pretrained(str(tiny_roberta_dir), entity_vocab_size=50).eval()
    assert ours.config.entity_emb_size == 256 and ours.config.entity_vocab_size == 50
    assert ours.config.use_entity_aware_attention
    batch = inputs(with_entities=False)
    batch["input_ids"] = torch.randint(3, 1000, (2, 9))
    batch["input_ids"][1, 6:] = 1
    with torch.no_grad():
        actual, expected = ours(**batch), roberta(**batch)
    assert (actual.last_hidden_state - expected.last_hidden_state).abs().max() < TOL
    assert (actual.pooler_output - expected.pooler_output).abs().max() < TOL
    # Entity side (paper §4): position of word index p = word table row p + pad_token_id + 1.
    words, entities = ours.embeddings, ours.entity_embeddings
    assert torch.equal(entities.position_embeddings.weight[:5], words.position_embeddings.weight[2:7])
    assert torch.equal(entities.token_type_embeddings.weight, words.token_type_embeddings.weight)
    assert torch.equal(entities.LayerNorm.weight, words.LayerNorm.weight)
    attention = ours.encoder.layer[0].attention.self
    assert torch.equal(attention.e2e_query.weight, attention.query.weight)
    assert entities.entity_embeddings.weight.shape == (50, 256)
    assert torch.count_nonzero(entities.entity_embeddings.weight[0]) == 0  # [PAD]
    # An entity whose mention is one word starts from that word's position embedding.
    entity_batch = dict(batch, entity_ids=torch.tensor([[3], [3]]), entity_position_ids=torch.tensor([[[4]], [[4]]]))
    with torch.no_grad():
        assert ours(**entity_batch).entity_last_hidden_state.shape == (2, 1, 32)


def test_bert_initialisation_shifts_positions(tiny_bert_dir):
    bert = transformers.BertModel.from_pretrained(str(tiny_bert_dir)).eval()
    ours = LukeEncoder.from_pretrained(str(tiny_bert_dir), entity_vocab_size=10, entity_emb_size=32).eval()
    assert not hasattr(ours.entity_embeddings, "entity_embedding_dense")  # no projection when widths match
    batch = inputs(with_entities=False)
    batch["token_type_ids"] = torch.zeros_like(batch["input_ids"])
    batch["token_type_ids"][:, 4:] = 1
    with torch.no_grad():
        actual, expected = ours(**batch), bert(**batch)
    real = batch["attention_mask"].bool()
    assert (actual.last_hidden_state[real] - expected.last_hidden_state[real]).abs().max() < TOL


def test_load_weights_false_reads_only_the_architecture(tiny_luke_dir):
    loaded = LukeEncoder.from_pretrained(str(tiny_luke_dir))
    fresh = LukeEncoder.from_pretrained(str(tiny_luke_dir), load_weights=False)
    assert fresh.config == loaded.config
    assert not torch.equal(
        fresh.encoder.layer[0].attention.self.query.weight, loaded.encoder.layer[0].attention.self.query.weight
    )


def test_config_overrides_apply(tiny_luke_dir):
    model = LukeEncoder.from_pretrained(str(tiny_luke_dir), hidden_dropout_prob=0.3, use_entity_aware_attention=False)
    assert model.config.hidden_dropout_prob == 0.3
    assert not hasattr(model.encoder.layer[0].attention.self, "w2e_query")


def test_errors_name_the_problem(tmp_path, tiny_roberta_dir, tiny_luke_dir):
    with pytest.raises(ValueError, match="entity_vocab_size"):
        LukeEncoder.from_pretrained(str(tiny_roberta_dir))
    with pytest.raises(ValueError, match="do not fit"):
        LukeEncoder.from_pretrained(str(tiny_luke_dir), entity_vocab_size=7)
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "gpt2"}))
    with pytest.raises(ValueError, match="gpt2"):
        LukeEncoder.from_pretrained(str(tmp_path))
    # The suite runs with HF_HUB_OFFLINE=1 (conftest): a hub name fails at once, with one line that says what to do.
    with pytest.raises(
        HubUnavailableError,
        match=r"^'no-such-user/no-such-model' is not a local directory.*HF_HUB_OFFLINE=1.*go online$",
    ):
        LukeEncoder.from_pretrained("no-such-user/no-such-model")
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "config.json").write_text(json.dumps({"model_type": "luke"}))
    with pytest.raises(OSError, match="no model.safetensors"):
        LukeEncoder.from_pretrained(str(empty))


def test_a_damaged_or_escaping_checkpoint_is_one_error(tmp_path, tiny_luke_dir):
    """Issue 38: a damaged `model.safetensors` raised safetensors' own error with a traceback ("header too large");
    an index naming a shard outside the checkpoint read it."""
    import shutil
    import struct

    from luke_allennlp.modeling.checkpoint_files import read_state_dict
    from luke_allennlp.modeling.weights import WeightsError

    damaged = tmp_path / "damaged"
    shutil.copytree(tiny_luke_dir, damaged)
    weights = damaged / "model.safetensors"
    weights.write_bytes(struct.pack("<Q", 1 << 40) + weights.read_bytes()[8:])
    with pytest.raises(WeightsError, match=f"^{weights}: not a whole safetensors file, .* \\(a header of 1,099,511,"):
        LukeEncoder.from_pretrained(str(damaged))
    weights.unlink()
    (damaged / "model.safetensors.index.json").write_text(
        json.dumps({"weight_map": {"a": "../other/model.safetensors"}})
    )
    with pytest.raises(ValueError, match="names the file '../other/model.safetensors', outside the checkpoint"):
        read_state_dict(str(damaged))


# --- mLUKE: a checkpoint laid out as studio-ousia/mluke-* ---------------------------------------------------------


def test_mluke_checkpoint_loads_here_and_in_transformers_with_the_same_outputs(tiny_mluke_dir):
    from luke_allennlp.resources.checkpoint_vocab import checkpoint_entity_vocab, is_mluke_checkpoint
    from luke_allennlp.resources.tokenization import load_fast_tokenizer

    assert is_mluke_checkpoint(str(tiny_mluke_dir))
    words = load_fast_tokenizer(str(tiny_mluke_dir))
    # The word tokenizer: XLM-R's special ids, <ent>/<ent2> after <mask>, no special entities as words.
    assert (words.bos_token_id, words.pad_token_id, words.eos_token_id, words.unk_token_id) == (0, 1, 2, 3)
    assert words.convert_tokens_to_ids(["<mask>", "<ent>", "<ent2>"]) == [2001, 2002, 2003]
    assert max(words.get_vocab().values()) == 2003 and words.tokenize("[MASK]") != ["[MASK]"]
    config = json.loads((tiny_mluke_dir / "config.json").read_text())
    assert config["vocab_size"] == 2004 and config["entity_vocab_size"] == 12  # <ent>/<ent2> rows; [MASK2] last
    vocab = checkpoint_entity_vocab(str(tiny_mluke_dir))
    assert (vocab.pad_id, vocab.unk_id, vocab.mask_id, vocab["[MASK2]"], len(vocab)) == (0, 1, 2, 11, 12)
    assert vocab["Berlin"] == vocab.get("Берлин", language="ru") == vocab.get("ベルリン", language="ja") == 4

    ours = LukeEncoder.from_pretrained(str(tiny_mluke_dir)).eval()
    assert ours.missing_from_checkpoint == []
    reference = transformers.LukeModel.from_pretrained(str(tiny_mluke_dir)).eval()
    text = "Angela Merkel besuchte Berlin."
    ids = [0, 2002] + words(text, add_special_tokens=False)["input_ids"] + [2002, 2]
    batch = dict(
        input_ids=torch.tensor([ids]),
        attention_mask=torch.ones(1, len(ids), dtype=torch.long),
        entity_ids=torch.tensor([[vocab["Angela Merkel"], vocab.mask_id]]),
        entity_attention_mask=torch.ones(1, 2, dtype=torch.long),
        entity_position_ids=torch.tensor([[[2, 3, 4, 5, 6, 7, 8, 9], [-1] * 8]]),
    )
    batch["entity_position_ids"][0, 1, :3] = torch.tensor([12, 13, 14])
    with torch.no_grad():
        actual, expected = ours(**batch), reference(**batch)
    assert (actual.last_hidden_state - expected.last_hidden_state).abs().max() < TOL
    assert (actual.entity_last_hidden_state - expected.entity_last_hidden_state).abs().max() < TOL


def test_transformers_mluke_tokenizer_agrees_with_our_word_ids(tiny_mluke_dir):
    from luke_allennlp.resources.checkpoint_vocab import checkpoint_entity_vocab
    from luke_allennlp.resources.tokenization import load_fast_tokenizer

    mluke = transformers.MLukeTokenizer.from_pretrained(str(tiny_mluke_dir))
    words = load_fast_tokenizer(str(tiny_mluke_dir))
    lines = (
        (Path(__file__).resolve().parents[1] / "fixtures" / "data" / "multilingual" / "sentences.txt")
        .read_text()
        .splitlines()
    )
    unknown = 0
    for line in lines + ["Angela Merkel besuchte Berlin und Tokio."]:
        ours, theirs = words(line)["input_ids"], mluke(line)["input_ids"]
        assert len(ours) == len(theirs) and ours[0] == 0 and ours[-1] == 2, line
        for a, b in zip(ours, theirs):
            # transformers 5's MLukeTokenizer numbers a character the pieces lack 0 (<s>), not <unk> (3).
            assert a == b or (a == words.unk_token_id and b == 0), line
            unknown += a != b
    assert unknown < 5
    assert mluke.convert_tokens_to_ids(["<ent>", "<ent2>"]) == words.convert_tokens_to_ids(["<ent>", "<ent2>"])
    # Its entity ids are those of our vocabulary, read with the language prefixes as languages.
    vocab = checkpoint_entity_vocab(str(tiny_mluke_dir))
    encoded = mluke("Berlin und Tokio.", entities=["de:Berlin", "es:Tokio"], entity_spans=[(0, 6), (11, 16)])
    assert encoded["entity_ids"] == [vocab.get("Berlin", language="de"), vocab.get("Tokio", language="es")] == [4, 3]


def test_luke_embedder_keeps_the_special_entities_of_an_mluke_vocabulary(tmp_path, xlmr_tokenizer_dir):
    """An mLUKE entity_vocab.json whose special entities are not at LUKE's ids: the task entities start from them."""
    from luke_allennlp.modules.token_embedders import LukeEmbedder
    from luke_allennlp.testing import write_tiny_checkpoint

    mapping = {"en:Tokyo": 0, "ja:東京都": 0, "[UNK]": 1, "en:Berlin": 2, "[PAD]": 3, "[MASK]": 4, "[MASK2]": 5}
    (tmp_path / "entity_vocab.json").write_text(json.dumps(mapping, ensure_ascii=False))
    model = write_tiny_checkpoint(
        tmp_path / "mluke", "mluke", tokenizer=xlmr_tokenizer_dir, entity_vocab=tmp_path / "entity_vocab.json"
    )
    assert json.loads((model / "entity_vocab.json").read_text()) == mapping
    table = LukeEncoder.from_pretrained(str(model)).entity_embeddings.entity_embeddings.weight
    embedder = LukeEmbedder(str(model), entity_vocab="task")
    # [PAD], [MASK], [HEAD], [TAIL] from the checkpoint's [PAD] (3) and [MASK] (4).
    assert torch.equal(embedder.luke.entity_embeddings.entity_embeddings.weight, table[[3, 4, 4, 4]])


@pytest.mark.parametrize("umask", [0o022, 0o027])
def test_saved_weights_have_the_mode_of_the_files_beside_them(tmp_path, umask):
    """safetensors writes model.safetensors 0600; it gets the umask's mode, as config.json does."""
    import os

    from luke_allennlp.modeling import LukeConfig, LukeForPretraining

    config = LukeConfig(
        vocab_size=100,
        entity_vocab_size=20,
        hidden_size=32,
        entity_emb_size=16,
        num_hidden_layers=1,
        num_attention_heads=4,
        intermediate_size=37,
        max_position_embeddings=40,
    )
    previous = os.umask(umask)
    try:
        LukeEncoder(config).save_pretrained(str(tmp_path / "encoder"))
        LukeForPretraining(config).save_pretrained(str(tmp_path / "pretraining"))
    finally:
        os.umask(previous)
    for directory in ("encoder", "pretraining"):
        modes = {p.name: p.stat().st_mode & 0o777 for p in (tmp_path / directory).iterdir()}
        assert modes == {"config.json": 0o666 & ~umask, "model.safetensors": 0o666 & ~umask}
