"""LukeForPretraining against transformers' LukeForMaskedLM, with the same weights."""

import logging

import pytest
import torch
import transformers

from luke_allennlp.modeling import LukeConfig, LukeForPretraining
from luke_allennlp.modeling.static_shapes import Runner
from tests.modeling.test_encoder import DEVICES, batch_inputs, max_diff

TOL = 1e-5
TIED = ("lm_head.decoder.weight", "lm_head.decoder.bias", "entity_predictions.decoder.weight")


def reference_pair(aware: bool = True):
    """A random transformers.LukeForMaskedLM and a LukeForPretraining holding its weights."""
    torch.manual_seed(0)
    config = transformers.LukeConfig(
        vocab_size=120,
        entity_vocab_size=30,
        hidden_size=32,
        entity_emb_size=16,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=37,
        max_position_embeddings=40,
        type_vocab_size=2,
        use_entity_aware_attention=aware,
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
    )
    reference = transformers.LukeForMaskedLM(config)
    reference.lm_head.decoder.weight = reference.luke.embeddings.word_embeddings.weight  # transformers 5 unties it
    with torch.no_grad():  # non-zero head biases and distinct queries, so that a mix-up shows
        for name, param in reference.named_parameters():
            if name.endswith("bias") or "_query" in name:
                param.normal_(std=0.5)
    ours = LukeForPretraining(LukeConfig.from_dict(config.to_dict()))
    state = {k: v for k, v in reference.state_dict().items() if k not in TIED}
    ours.load_state_dict(state, strict=True)
    return reference, ours


def labelled_batch():
    """batch_inputs() with 5 masked words (one in padding is impossible: padding is never labelled) and 3 entities."""
    batch = batch_inputs()
    labels = torch.full_like(batch["input_ids"], -100)
    for row, col in [(0, 1), (0, 5), (1, 3), (2, 2), (2, 8)]:
        labels[row, col] = batch["input_ids"][row, col]
        batch["input_ids"][row, col] = 119  # a stand-in for <mask>
    entity_labels = torch.full_like(batch["entity_ids"], -100)
    for row, col in [(0, 1), (1, 3), (2, 0)]:
        entity_labels[row, col] = batch["entity_ids"][row, col]
        batch["entity_ids"][row, col] = 2  # [MASK]
    return dict(batch, labels=labels, entity_labels=entity_labels)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("aware", [True, False], ids=["entity_aware", "original_attention"])
def test_loss_and_gradients_equal_transformers(aware, device):
    reference, ours = (m.to(device).train() for m in reference_pair(aware))
    batch = {k: v.to(device) for k, v in labelled_batch().items()}
    expected, actual = reference(**batch), ours(**batch)
    assert abs(actual.loss.item() - expected.loss.item()) < TOL
    assert abs(actual.masked_lm_loss.item() - expected.mlm_loss.item()) < TOL
    assert abs(actual.masked_entity_loss.item() - expected.mep_loss.item()) < TOL
    # Heads at the masked positions only: their logits are transformers' at those positions.
    masked = batch["labels"].ne(-100)
    assert actual.logits.shape == (5, 120) and max_diff(actual.logits, expected.logits[masked]) < TOL
    masked_entities = batch["entity_labels"].ne(-100)
    assert max_diff(actual.entity_logits, expected.entity_logits[masked_entities]) < TOL
    assert torch.equal(actual.targets, batch["labels"][masked])
    expected.loss.backward()
    actual.loss.backward()
    theirs = dict(reference.named_parameters())
    checked = 0
    for name, param in ours.named_parameters():
        if name.startswith("luke.pooler."):
            assert not param.requires_grad and param.grad is None  # unused by pretraining, kept frozen
            continue
        assert param.grad is not None, name
        assert max_diff(param.grad, theirs[name].grad) < 1e-4, name
        checked += 1
    assert checked == len(list(ours.parameters())) - 2


def test_logits_without_labels_equal_transformers():
    reference, ours = (m.eval() for m in reference_pair())
    batch = batch_inputs()
    with torch.no_grad():
        expected, actual = reference(**batch), ours(**batch)
    assert actual.loss is None and actual.logits.shape == (3, 11, 120)
    assert max_diff(actual.logits, expected.logits) < TOL
    assert max_diff(actual.entity_logits, expected.entity_logits) < TOL


def test_no_masked_entity_gives_zero_loss_and_gradients():
    """Distributed training needs a gradient for every parameter in every step, even without targets."""
    _, ours = reference_pair()
    batch = labelled_batch()
    batch["entity_labels"][:] = -100
    out = ours(**batch)
    assert out.masked_entity_loss.item() == 0.0 and out.entity_logits.shape == (0, 30)
    out.loss.backward()
    assert all(p.grad is not None for p in ours.entity_predictions.parameters())


def test_one_host_sync_selects_the_masked_words_and_entities(monkeypatch):
    """The heads' masked positions cost one read from the device (both counts at once), and no operation that sizes
    its output by reading a tensor (boolean-mask indexing: `nonzero`, one sync per mask), as the profiler sees it."""
    from torch.profiler import ProfilerActivity, profile

    _, ours = reference_pair()
    batch = labelled_batch()
    reads = []
    for name in ("item", "tolist", "__bool__", "__int__", "__float__"):
        original = getattr(torch.Tensor, name)
        monkeypatch.setattr(torch.Tensor, name, lambda self, *a, _o=original, _n=name: reads.append(_n) or _o(self, *a))
    with profile(activities=[ProfilerActivity.CPU]) as profiler:
        out = ours(**batch)
    monkeypatch.undo()
    assert reads == ["tolist"]
    assert not [e.name for e in profiler.events() if e.name in ("aten::nonzero", "aten::masked_select")]
    assert out.logits.shape == (5, 120) and out.entity_logits.shape == (3, 30)


def test_save_pretrained_loads_in_transformers(tmp_path):
    _, ours = reference_pair()
    ours.save_pretrained(str(tmp_path))
    loaded, info = transformers.LukeForMaskedLM.from_pretrained(str(tmp_path), output_loading_info=True)
    assert not info["missing_keys"] and not info["unexpected_keys"] and not info["mismatched_keys"]
    assert loaded.config.architectures == ["LukeForMaskedLM"]
    batch = labelled_batch()
    ours.eval(), loaded.eval()
    with torch.no_grad():
        assert abs(ours(**batch).loss.item() - loaded(**batch).loss.item()) < TOL
    again = LukeForPretraining.from_pretrained(str(tmp_path))  # and back, heads included
    for name, value in ours.state_dict().items():
        assert torch.equal(value, again.state_dict()[name]), name


@pytest.mark.parametrize("kind", ["roberta", "bert"])
def test_from_a_word_encoder_keeps_its_mlm_head(kind, tmp_path):
    """RobertaForMaskedLM's `lm_head` and BertForMaskedLM's `cls.predictions` become the MLM head."""
    torch.manual_seed(0)
    sizes = dict(
        vocab_size=120,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=37,
        max_position_embeddings=40,
    )
    if kind == "roberta":
        source = transformers.RobertaForMaskedLM(transformers.RobertaConfig(type_vocab_size=1, **sizes))
    else:
        source = transformers.BertForMaskedLM(transformers.BertConfig(pad_token_id=1, **sizes))
    with torch.no_grad():
        source.get_output_embeddings().bias.normal_()
    source.save_pretrained(tmp_path)
    ours = LukeForPretraining.from_pretrained(str(tmp_path), entity_vocab_size=7).eval()
    assert ours.config.entity_vocab_size == 7 and ours.entity_predictions.bias.shape == (7,)
    input_ids = torch.randint(3, 120, (2, 9))  # no padding: BERT numbers positions from 0 regardless
    with torch.no_grad():
        assert max_diff(ours(input_ids).logits, source.eval()(input_ids).logits) < TOL


def test_missing_heads_are_initialised_with_a_warning(tiny_roberta_dir, caplog):
    with caplog.at_level(logging.WARNING):
        ours = LukeForPretraining.from_pretrained(str(tiny_roberta_dir), entity_vocab_size=5)
    assert "lm_head.dense.weight" in caplog.text and "entity_predictions.bias" in caplog.text
    assert ours.lm_head.layer_norm.weight.eq(1).all() and ours.lm_head.bias.eq(0).all()


def test_rejects_heads_of_another_size(tmp_path):
    config = transformers.LukeConfig(
        vocab_size=120,
        entity_vocab_size=30,
        hidden_size=32,
        entity_emb_size=16,
        num_hidden_layers=1,
        num_attention_heads=4,
        intermediate_size=37,
    )
    transformers.LukeForMaskedLM(config).save_pretrained(tmp_path)
    with pytest.raises(ValueError, match="entity_embeddings"):
        LukeForPretraining.from_pretrained(str(tmp_path), entity_vocab_size=31)


def static_positions(labels: torch.Tensor, size: int) -> torch.Tensor:
    """Each row's labelled positions, padded with -1 to `size` (what the reader's `masked_positions` gives)."""
    positions = torch.full((labels.size(0), size), -1, dtype=torch.long)
    for row in range(labels.size(0)):
        chosen = labels[row].ne(-100).nonzero().squeeze(1)
        positions[row, : len(chosen)] = chosen
    return positions


def test_static_positions_give_the_dynamic_loss_and_gradients_without_a_host_read(monkeypatch):
    """Heads gathered at a fixed padded size: the loss, gradients and the real positions' logits are those of the
    dynamic gather, and nothing is read from the device."""
    _, dynamic = reference_pair()
    _, static = reference_pair()
    batch = labelled_batch()
    expected = dynamic(**batch)
    positions = static_positions(batch["labels"], 4)
    entity_positions = static_positions(batch["entity_labels"], 3)
    reads = []
    for name in ("item", "tolist", "__bool__", "__int__", "__float__"):
        original = getattr(torch.Tensor, name)
        monkeypatch.setattr(torch.Tensor, name, lambda self, *a, _o=original, _n=name: reads.append(_n) or _o(self, *a))
    actual = static(**batch, masked_positions=positions, masked_entity_positions=entity_positions)
    monkeypatch.undo()
    assert reads == []
    assert actual.logits.shape == (3 * 4, 120) and actual.entity_logits.shape == (3 * 3, 30)  # padding included
    for ours, theirs in (
        (actual.loss, expected.loss),
        (actual.masked_lm_loss, expected.masked_lm_loss),
        (actual.masked_entity_loss, expected.masked_entity_loss),
    ):
        assert abs(ours.item() - theirs.item()) < TOL
    real = actual.targets.ne(-100)
    assert torch.equal(actual.targets[real], expected.targets) and max_diff(actual.logits[real], expected.logits) < TOL
    expected.loss.backward()
    actual.loss.backward()
    grads = dict(dynamic.named_parameters())
    for name, param in static.named_parameters():
        if param.grad is not None:
            assert max_diff(param.grad, grads[name].grad) < 1e-5, name


def test_static_positions_compile_once_for_a_bucket():
    """The whole model, heads included, under torch.compile (`aot_eager`, as inductor traces): one graph, no graph
    break, and batches of one shape with different masks reuse it (no recompile)."""
    from torch._dynamo.utils import counters

    _, model = reference_pair()
    batch = labelled_batch()
    entity_positions = static_positions(batch["entity_labels"], 3)
    torch._dynamo.reset()
    counters.clear()
    compiled = torch.compile(model, backend="aot_eager", dynamic=False)
    for shift in range(3):  # other masked positions, the same shapes
        other = {k: v.clone() for k, v in batch.items()}
        other["labels"] = torch.roll(batch["labels"], shift, dims=1)
        moved = {
            "masked_positions": static_positions(other["labels"], 4),
            "masked_entity_positions": entity_positions,
        }
        loss = compiled(**other, **moved).loss
        assert abs(loss.item() - model(**other, **moved).loss.item()) < TOL
    assert counters["stats"]["unique_graphs"] == 1  # (a recompile would add a graph)
    assert not counters["graph_break"]


def test_compile_runs_the_whole_model_in_one_graph_per_bucket(caplog):
    """A compiled `Runner`: encoder, heads and loss in one graph per bucket of word / entity lengths (no graph break), reused
    across masks, batch sizes and lengths inside a bucket, a batch of one row included; loss, logits and gradients
    those of the eager model. (`aot_eager` traces as inductor does.)"""
    from torch._dynamo.utils import counters

    _, eager = reference_pair()
    _, compiled = reference_pair()
    compiled.runner = Runner(compiled.luke, {"backend": "aot_eager"}, word_multiple=16, entity_multiple=8)
    torch._dynamo.reset()
    counters.clear()
    caplog.set_level(logging.INFO, logger="luke_allennlp.modeling.static_shapes")
    full = labelled_batch()
    for batch, words, entities, shift in [(3, 11, 4, 0), (3, 11, 4, 1), (2, 9, 3, 0), (1, 11, 4, 2), (3, 11, 2, 0)]:
        case = {k: v[:batch] for k, v in full.items()}
        case["labels"] = torch.roll(case["labels"], shift, dims=1)
        for k in ("input_ids", "attention_mask", "token_type_ids", "labels"):
            case[k] = case[k][:, :words]
        for k in ("entity_ids", "entity_attention_mask", "entity_token_type_ids", "entity_labels"):
            case[k] = case[k][:, :entities]
        case["entity_position_ids"] = case["entity_position_ids"][:, :entities]
        case["masked_positions"] = static_positions(case["labels"], 4)
        case["masked_entity_positions"] = static_positions(case["entity_labels"], 3)
        outputs = []
        for model in (eager, compiled):
            model.zero_grad()
            out = model(**case)
            out.loss.backward()
            outputs.append((out, model.luke.encoder.layer[1].attention.self.w2e_query.weight.grad.clone()))
        (ours, grad), (theirs, compiled_grad) = outputs
        assert abs(ours.loss.item() - theirs.loss.item()) < TOL
        assert theirs.logits.shape == (batch * 4, 120) and theirs.entity_logits.shape == (batch * 3, 30)
        assert torch.equal(ours.targets, theirs.targets) and torch.equal(ours.entity_targets, theirs.entity_targets)
        assert max_diff(ours.logits, theirs.logits) < TOL and max_diff(ours.entity_logits, theirs.entity_logits) < TOL
        assert max_diff(grad, compiled_grad) < TOL
    # Words 9-16 and entities 1-8: one bucket, in training with gradients; one graph for it, no break, no recompile.
    assert counters["stats"]["unique_graphs"] == 1  # (a recompile would add a graph)
    assert not counters["graph_break"]
    logged = [r.getMessage() for r in caplog.records]
    assert logged == ["torch.compile: graph 1 of the pretraining model, for 16 words, 8 entities, training"]
