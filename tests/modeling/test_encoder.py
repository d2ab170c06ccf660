"""LukeEncoder against transformers' reference LukeModel, with the same weights."""

import logging
import pickle

import pytest
import torch
import transformers
from torch.nn import functional as F

from luke_allennlp.modeling import LukeConfig, LukeEncoder
from luke_allennlp.modeling.encoder import ACTIVATIONS, IN_PLACE_ACTIVATIONS
from luke_allennlp.modeling.inputs import LukeInputs
from luke_allennlp.modeling.static_shapes import Runner

TOL = 1e-5
DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


def reference_pair(aware: bool, dropout: float = 0.0, **sizes):
    """A random transformers.LukeModel and a LukeEncoder holding its weights."""
    torch.manual_seed(0)
    config = transformers.LukeConfig(
        vocab_size=120,
        entity_vocab_size=30,
        hidden_size=32,
        entity_emb_size=16,
        num_hidden_layers=3,
        num_attention_heads=4,
        intermediate_size=37,
        max_position_embeddings=40,
        type_vocab_size=2,
        use_entity_aware_attention=aware,
        hidden_dropout_prob=dropout,
        attention_probs_dropout_prob=dropout,
        **sizes,
    )
    reference = transformers.LukeModel(config)
    # Distinct entity-aware query matrices, so that picking the wrong one cannot go unnoticed.
    with torch.no_grad():
        for name, param in reference.named_parameters():
            if "_query" in name or "token_type" in name:
                param.normal_(std=0.5)
    ours = LukeEncoder(LukeConfig.from_dict(config.to_dict()))
    ours.load_state_dict(reference.state_dict(), strict=True)
    return reference, ours


def batch_inputs():
    """Three examples with word padding, entity padding, multi-word mentions and two token types."""
    torch.manual_seed(1)
    input_ids = torch.randint(3, 120, (3, 11))
    attention_mask = torch.ones_like(input_ids)
    input_ids[1, 7:], attention_mask[1, 7:] = 1, 0  # 1 = pad_token_id
    input_ids[2, 9:], attention_mask[2, 9:] = 1, 0
    token_type_ids = torch.zeros_like(input_ids)
    token_type_ids[:, 5:] = 1
    entity_ids = torch.randint(3, 30, (3, 4))
    entity_attention_mask = torch.ones_like(entity_ids)
    entity_ids[2, 2:], entity_attention_mask[2, 2:] = 0, 0
    entity_ids[0, 3], entity_attention_mask[0, 3] = 0, 0
    entity_position_ids = torch.full((3, 4, 3), -1)
    entity_position_ids[:, 0, :2] = torch.tensor([1, 2])
    entity_position_ids[:, 1, 0] = 4
    entity_position_ids[:, 2, :3] = torch.tensor([5, 6, 3])
    entity_position_ids[:, 3, :1] = 6
    entity_token_type_ids = torch.tensor([[0, 0, 1, 1], [0, 1, 0, 1], [1, 0, 0, 0]])
    return dict(
        input_ids=input_ids,
        attention_mask=attention_mask,
        token_type_ids=token_type_ids,
        entity_ids=entity_ids,
        entity_position_ids=entity_position_ids,
        entity_attention_mask=entity_attention_mask,
        entity_token_type_ids=entity_token_type_ids,
    )


def max_diff(a, b):
    return (a - b).abs().max().item()


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("aware", [True, False], ids=["entity_aware", "original_attention"])
def test_outputs_equal_transformers(aware, device):
    reference, ours = reference_pair(aware)
    reference.eval().to(device), ours.eval().to(device)
    inputs = {k: v.to(device) for k, v in batch_inputs().items()}
    with torch.no_grad():
        expected, actual = reference(**inputs), ours(**inputs)
    real_words = inputs["attention_mask"].bool()
    real_entities = inputs["entity_attention_mask"].bool()
    assert max_diff(actual.last_hidden_state[real_words], expected.last_hidden_state[real_words]) < TOL
    assert (
        max_diff(actual.entity_last_hidden_state[real_entities], expected.entity_last_hidden_state[real_entities]) < TOL
    )
    # Padded positions too: both attend to the same keys.
    assert max_diff(actual.last_hidden_state, expected.last_hidden_state) < TOL
    assert max_diff(actual.pooler_output, expected.pooler_output) < TOL


def test_without_gradients_the_activations_and_residual_sums_run_in_place_with_the_same_values():
    """Under `no_grad` the intermediate activation and the residual sum write into the fresh products (every
    activation a config may name: into its input), with the values and dtypes they have when gradients are on (under
    autocast too); the encoder holding them still pickles."""
    assert IN_PLACE_ACTIVATIONS.keys() == ACTIVATIONS.keys()
    x = torch.randn(50, 37) * 3
    for name, activation in ACTIVATIONS.items():
        y = x.clone()
        assert IN_PLACE_ACTIVATIONS[name](y).data_ptr() == y.data_ptr() and torch.equal(y, activation(x)), name
    _, ours = reference_pair(True)
    layer = ours.encoder.layer[0].eval()
    rows = torch.randn(9, 32)
    with torch.no_grad():
        intermediate = layer.intermediate(rows)
        output = layer.output(intermediate, rows)
    assert torch.equal(intermediate, layer.intermediate(rows)) and torch.equal(output, layer.output(intermediate, rows))
    assert not rows.requires_grad and layer.intermediate(rows).requires_grad  # (the second pair: with gradients)
    # Under autocast the product is in bfloat16 and the residual in float32: the sum is promoted, as with gradients.
    with torch.autocast("cpu", dtype=torch.bfloat16):
        expected = layer.output(layer.intermediate(rows), rows)
        with torch.no_grad():
            output = layer.output(layer.intermediate(rows), rows)
    assert output.dtype == expected.dtype == torch.float32 and torch.equal(output, expected.detach())
    assert pickle.loads(pickle.dumps(ours)).encoder.layer[0].intermediate.activation_in_place is not None


def test_a_training_step_under_bf16_autocast_matches_transformers_under_it():
    """The entity-aware projections under autocast (the GPU's bf16 training; here the CPU's autocast, which takes the
    same path): the step runs, and its loss and the query matrices' gradients are transformers' to bfloat16's
    precision."""
    reference, ours = reference_pair(True)
    reference.train(), ours.train()
    generator, grads = torch.Generator().manual_seed(0), []
    word_weights, entity_weights = (
        torch.randn(3, 11, 32, generator=generator),
        torch.randn(3, 4, 32, generator=generator),
    )
    for model in (reference, ours):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            out = model(**batch_inputs())
            # (a random projection: the squares of LayerNorm's outputs hardly depend on the layers below)
            loss = (out.last_hidden_state.float() * word_weights).sum() + (
                out.entity_last_hidden_state.float() * entity_weights
            ).sum()
        loss.backward()
        attention = model.encoder.layer[0].attention.self
        names = ("query", "w2e_query", "e2w_query", "e2e_query", "key", "value")
        grads.append((loss.detach(), [getattr(attention, name).weight.grad for name in names]))
    (expected_loss, expected), (loss, actual) = grads
    assert torch.allclose(loss, expected_loss, rtol=2e-2)
    for theirs, mine in zip(expected, actual):
        assert mine is not None and mine.dtype == torch.float32 and torch.isfinite(mine).all()
        assert F.cosine_similarity(mine.flatten(), theirs.flatten(), dim=0) > 0.99


@pytest.mark.parametrize("aware", [True, False], ids=["entity_aware", "original_attention"])
def test_words_only_equals_transformers(aware):
    reference, ours = reference_pair(aware)
    reference.eval(), ours.eval()
    inputs = {k: v for k, v in batch_inputs().items() if not k.startswith("entity")}
    with torch.no_grad():
        expected, actual = reference(**inputs), ours(**inputs)
    assert actual.entity_last_hidden_state is None
    assert max_diff(actual.last_hidden_state, expected.last_hidden_state) < TOL


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("padded_values", [True, False])
def test_gradients_equal_transformers(padded_values, device, monkeypatch):
    reference, ours = reference_pair(True)
    monkeypatch.setattr(
        type(ours.encoder.layer[0].attention.self), "_fused_kernel_needs_equal_head_dims", lambda self, v: padded_values
    )
    reference.train().to(device), ours.train().to(device)  # dropout is 0: train mode must still be deterministic
    inputs = {k: v.to(device) for k, v in batch_inputs().items()}
    for model in (reference, ours):
        out = model(**inputs)
        (out.last_hidden_state.square().mean() + out.entity_last_hidden_state.sin().sum()).backward()
    ours_grads = dict(ours.named_parameters())
    for name, param in reference.named_parameters():
        if param.grad is None:  # the pooler, unused by this loss
            assert ours_grads[name].grad is None, name
        else:
            assert max_diff(ours_grads[name].grad, param.grad) < 1e-4, name


def test_entity_aware_differs_from_original_attention():
    """With distinct query matrices, the switch changes entity and word outputs (the ablation is real)."""
    _, ours = reference_pair(True)
    ours.eval()
    inputs = batch_inputs()
    with torch.no_grad():
        aware = ours(**inputs)
        for layer in ours.encoder.layer:
            layer.attention.self.use_entity_aware_attention = False
        original = ours(**inputs)
    assert max_diff(aware.entity_last_hidden_state, original.entity_last_hidden_state) > 1e-3
    assert max_diff(aware.last_hidden_state, original.last_hidden_state) > 1e-3


@pytest.mark.parametrize("aware", [True, False])
def test_one_fused_attention_call_per_layer(aware, monkeypatch):
    """The widened formulation (GPUs, `torch.compile`): one `scaled_dot_product_attention` call per layer."""
    _, ours = reference_pair(aware)
    monkeypatch.setattr(type(ours.encoder.layer[0].attention.self), "formulation", lambda self, x: "widened")
    calls = []
    sdpa = F.scaled_dot_product_attention

    def counting_sdpa(q, k, v, **kwargs):
        calls.append((q.shape, k.shape, v.shape, kwargs["scale"]))
        return sdpa(q, k, v, **kwargs)

    monkeypatch.setattr(F, "scaled_dot_product_attention", counting_sdpa)
    ours(**batch_inputs())
    assert len(calls) == ours.config.num_hidden_layers
    q_shape, k_shape, v_shape, scale = calls[0]
    head_dim = ours.config.head_dim
    assert q_shape == (3, 4, 11 + 4, 2 * head_dim if aware else head_dim)
    assert scale == pytest.approx(head_dim**-0.5)


def test_padding_does_not_change_outputs():
    """Extra word and entity padding leaves the real tokens' states unchanged."""
    _, ours = reference_pair(True)
    ours.eval()
    inputs = {k: v[:1] for k, v in batch_inputs().items()}
    padded = dict(inputs)
    padded["input_ids"] = F.pad(inputs["input_ids"], (0, 5), value=1)
    padded["attention_mask"] = F.pad(inputs["attention_mask"], (0, 5))
    padded["token_type_ids"] = F.pad(inputs["token_type_ids"], (0, 5))
    for key, value in (("entity_ids", 0), ("entity_attention_mask", 0), ("entity_token_type_ids", 0)):
        padded[key] = F.pad(inputs[key], (0, 3), value=value)
    padded["entity_position_ids"] = F.pad(inputs["entity_position_ids"], (0, 2, 0, 3), value=-1)
    with torch.no_grad():
        short, long = ours(**inputs), ours(**padded)
    assert max_diff(long.last_hidden_state[:, :11], short.last_hidden_state) < TOL
    assert max_diff(long.entity_last_hidden_state[:, :3], short.entity_last_hidden_state[:, :3]) < TOL


def test_entity_position_is_mean_of_mention_positions():
    _, ours = reference_pair(True)
    table = ours.entity_embeddings.position_embeddings.weight
    with torch.no_grad():
        ours.entity_embeddings.LayerNorm.weight.fill_(1.0)
    positions = torch.tensor([[[2, 3, 7, -1]]])
    entity_ids = torch.tensor([[5]])
    with torch.no_grad():
        got = ours.entity_embeddings(entity_ids, positions, torch.zeros_like(entity_ids))
        e = ours.entity_embeddings
        expected = e.entity_embedding_dense(e.entity_embeddings(entity_ids)) + table[[2, 3, 7]].mean(0)
        expected = e.LayerNorm(expected + e.token_type_embeddings.weight[0])
    assert max_diff(got, expected) < TOL


def test_traces_without_graph_breaks():
    """torch.compile captures the whole forward in one graph (what the embedder's `compile` option relies on)."""
    _, ours = reference_pair(True)
    explanation = torch._dynamo.explain(ours)(**batch_inputs())
    assert explanation.graph_break_count == 0 and explanation.graph_count == 1


def test_compile_pads_to_static_shapes_and_gives_the_same_outputs():
    """A compiled `Runner` pads words and entities to bucket multiples, so new sequence lengths inside a bucket and new batch
    and mention sizes reuse one graph; outputs and gradients equal the eager model's. (`aot_eager` traces as inductor
    does, without its slow code generation; benchmarks/trainer_throughput.py runs inductor.)"""
    from torch._dynamo.utils import counters

    _, eager = reference_pair(True)
    _, compiled = reference_pair(True)
    runner = Runner(compiled, {"backend": "aot_eager"}, word_multiple=16, entity_multiple=8)
    assert LukeEncoder.compile is torch.nn.Module.compile  # (the encoder is the model only: no compile of its own)
    torch._dynamo.reset()
    counters.clear()
    inputs = batch_inputs()
    for batch, words, entities, mention in [(3, 11, 4, 3), (2, 9, 3, 3), (3, 11, 2, 2), (3, 13, 4, 3), (3, 17, 4, 3)]:
        case = {k: v[:batch] for k, v in inputs.items()}
        case["input_ids"], case["attention_mask"], case["token_type_ids"] = (
            F.pad(case[k], (0, words - 11), value=1 if k == "input_ids" else 0)[:, :words]
            for k in ("input_ids", "attention_mask", "token_type_ids")
        )
        for k in ("entity_ids", "entity_attention_mask", "entity_token_type_ids"):
            case[k] = case[k][:, :entities]
        case["entity_position_ids"] = case["entity_position_ids"][:, :entities, :mention]
        outputs = []
        for model, run in ((eager, lambda c: eager(**c)), (compiled, lambda c: runner(LukeInputs(**c)))):
            model.zero_grad()
            out = run(case)
            (out.last_hidden_state.sum() + out.entity_last_hidden_state.pow(2).sum()).backward()
            outputs.append((out, model.encoder.layer[0].attention.self.e2w_query.weight.grad.clone()))
        (ours, grad), (theirs, compiled_grad) = outputs
        assert (
            theirs.last_hidden_state.shape == (batch, words, 32)
            and theirs.entity_last_hidden_state.shape[1] == entities
        )
        assert max_diff(ours.last_hidden_state, theirs.last_hidden_state) < TOL
        assert max_diff(ours.entity_last_hidden_state, theirs.entity_last_hidden_state) < TOL
        assert max_diff(grad, compiled_grad) < TOL
    # Words 9-16 share a bucket, 17 opens a second one; batch, entity count (< 8) and mention length vary freely.
    assert counters["stats"]["unique_graphs"] == 2


def test_compile_bounds_the_graphs_and_warns_when_dynamo_falls_back(caplog):
    """One graph per (word bucket, entity bucket or none) whatever the batch size, entity count and mention length,
    batches of one row and mentions of one word included (dynamo would specialise size 1: a second graph for each);
    the outputs of such a batch are the eager model's. Past dynamo's recompile limit, a new bucket runs uncompiled,
    with a warning."""
    from torch._dynamo.utils import counters

    _, eager = reference_pair(True)
    _, compiled = reference_pair(True)
    runner = Runner(compiled, {"backend": "eager"}, word_multiple=16, entity_multiple=8)  # dynamo's graphs, no compiler
    torch._dynamo.reset()
    counters.clear()
    g = torch.Generator().manual_seed(0)
    # (batch, words, entities (None: no entity inputs), mention length): buckets 16/32 words x none/8/16 entities
    shapes = [
        (1, 5, 1, 1),
        (3, 9, 3, 2),
        (2, 16, 8, 1),
        (5, 12, 10, 3),
        (1, 7, None, 0),
        (4, 3, None, 0),
        (1, 20, 0, 1),
        (2, 31, 9, 1),
        (1, 17, 16, 2),
        (6, 30, 12, 4),
        (2, 25, None, 0),
        (1, 32, None, 0),
    ]
    buckets = set()
    caplog.set_level(logging.INFO, logger="luke_allennlp.modeling.static_shapes")
    for batch, words, entities, mention in shapes:
        case = {"input_ids": torch.randint(3, 120, (batch, words), generator=g)}
        if entities is not None:
            case["entity_ids"] = torch.randint(1, 30, (batch, entities), generator=g)
            case["entity_position_ids"] = torch.randint(0, words, (batch, entities, mention), generator=g)
        out = runner(LukeInputs(**case))
        buckets.add((-(-words // 16), None if entities is None else max(1, -(-entities // 8))))
        assert out.last_hidden_state.shape == (batch, words, 32)
        if batch == 1 and entities:
            with torch.no_grad():
                reference = eager(**case)
            assert max_diff(out.last_hidden_state, reference.last_hidden_state) < TOL
            assert max_diff(out.entity_last_hidden_state, reference.entity_last_hidden_state) < TOL
    assert len(buckets) == 6 and counters["stats"]["unique_graphs"] == len(buckets)
    assert sum("torch.compile: graph" in r.getMessage() for r in caplog.records) == len(buckets)
    assert not any(r.levelno >= logging.WARNING for r in caplog.records)
    with torch._dynamo.config.patch(recompile_limit=len(buckets)):
        runner(LukeInputs(torch.randint(3, 120, (2, 33), generator=g)))  # a seventh bucket
    assert counters["stats"]["unique_graphs"] == len(buckets)
    assert any("run uncompiled" in r.getMessage() for r in caplog.records if r.levelno == logging.WARNING)


def test_a_second_instance_reuses_the_graph_with_its_own_weights(caplog):
    """Dynamo's graph of a bucket serves another encoder of the same structure (its guards hold, the weights are
    inputs): no compilation, no warning, a log line that says so, and the outputs of that encoder's weights."""
    from torch._dynamo.utils import counters

    _, first = reference_pair(True)
    _, second = reference_pair(True)
    with torch.no_grad():
        for param in second.parameters():
            param.add_(0.1)
    inputs = batch_inputs()
    with torch.no_grad():
        expected = [model(**inputs).entity_last_hidden_state for model in (first, second)]
    torch._dynamo.reset()
    counters.clear()
    caplog.set_level(logging.INFO, logger="luke_allennlp.modeling.static_shapes")
    for model, reference in zip((first, second), expected):
        runner = Runner(model, {"backend": "aot_eager"}, word_multiple=16, entity_multiple=8)
        with torch.no_grad():
            assert max_diff(runner(LukeInputs(**inputs)).entity_last_hidden_state, reference) < TOL
    assert max_diff(expected[0], expected[1]) > 0.01 and counters["stats"]["unique_graphs"] == 1
    logged = [(r.levelno, r.getMessage()) for r in caplog.records]
    assert [level for level, _ in logged] == [logging.INFO, logging.INFO]
    assert logged[0][1].startswith("torch.compile: graph 1 of the encoder, for 16 words, 8 entities")
    assert logged[1][1].startswith("torch.compile: the encoder reuses a graph compiled before (another instance)")


def test_entity_inputs_need_positions():
    _, ours = reference_pair(True)
    inputs = batch_inputs()
    del inputs["entity_position_ids"]
    with pytest.raises(ValueError, match="entity_position_ids"):
        ours(**inputs)


def test_config_rejects_bad_head_count():
    with pytest.raises(ValueError, match="multiple"):
        LukeConfig(hidden_size=30, num_attention_heads=4)
