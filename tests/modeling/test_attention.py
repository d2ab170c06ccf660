"""The attention's two formulations and packed batches against transformers' LukeModel, and the block formulation's
backward pass (with dropout) against finite differences."""

import pytest
import torch
import transformers
from torch.nn import functional as F

from luke_allennlp.modeling import LukeConfig, LukeEncoder
from luke_allennlp.modeling import attention as attention_module
from luke_allennlp.modeling.attention import LukeSelfAttention, Shape, _BlockAttention, _Layout
from tests.modeling.test_encoder import TOL, batch_inputs, max_diff, reference_pair


def wider_pair(aware: bool = True):
    """A transformers.LukeModel and our encoder at a wider shape than `reference_pair` (8 heads of 8, 2 layers)."""
    torch.manual_seed(3)
    config = transformers.LukeConfig(
        vocab_size=200,
        entity_vocab_size=20,
        hidden_size=64,
        entity_emb_size=24,
        num_hidden_layers=2,
        num_attention_heads=8,
        intermediate_size=96,
        max_position_embeddings=80,
        use_entity_aware_attention=aware,
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
    )
    reference = transformers.LukeModel(config)
    with torch.no_grad():
        for name, param in reference.named_parameters():
            if "_query" in name:
                param.normal_(std=0.3)
    ours = LukeEncoder(LukeConfig.from_dict(config.to_dict()))
    ours.load_state_dict(reference.state_dict())
    return reference, ours


def ragged_inputs(batch=4, words=37, entities=13, seed=5):
    """Rows of different real lengths (words and entities padded at the end), multi-word mentions."""
    g = torch.Generator().manual_seed(seed)
    word_lengths = [words, words - 9, 6, words - 20][:batch]
    entity_lengths = [entities, 3, 0, entities - 5][:batch]
    input_ids = torch.randint(3, 200, (batch, words), generator=g)
    attention_mask = torch.zeros(batch, words, dtype=torch.long)
    entity_attention_mask = torch.zeros(batch, entities, dtype=torch.long)
    positions = torch.full((batch, entities, 4), -1)
    for b, (n, m) in enumerate(zip(word_lengths, entity_lengths)):
        input_ids[b, n:] = 1
        attention_mask[b, :n] = 1
        entity_attention_mask[b, :m] = 1
        for e in range(entities):
            start = int(torch.randint(0, n, (1,), generator=g))
            positions[b, e, : min(3, n - start)] = torch.arange(start, min(start + 3, n))
    inputs = dict(
        input_ids=input_ids,
        attention_mask=attention_mask,
        entity_ids=torch.randint(1, 20, (batch, entities), generator=g),
        entity_position_ids=positions,
        entity_attention_mask=entity_attention_mask,
    )
    return inputs, (word_lengths, entity_lengths)


def loss_of(out, words, entities):
    return out.last_hidden_state[words].square().mean() + out.entity_last_hidden_state[entities].sin().sum()


@pytest.mark.parametrize("padded_values", [True, False])
def test_the_widened_formulation_on_the_cpu_equals_transformers(monkeypatch, padded_values):
    """The formulation GPUs and `torch.compile` run, forced on the CPU: outputs and gradients as transformers'."""
    reference, ours = reference_pair(True)
    attention = type(ours.encoder.layer[0].attention.self)
    monkeypatch.setattr(attention, "formulation", lambda self, x: "widened")
    monkeypatch.setattr(attention, "_fused_kernel_needs_equal_head_dims", lambda self, v: padded_values)
    inputs = batch_inputs()
    for model in (reference, ours):
        out = model(**inputs)
        (out.last_hidden_state.square().mean() + out.entity_last_hidden_state.sin().sum()).backward()
    with torch.no_grad():
        assert max_diff(ours(**inputs).last_hidden_state, reference(**inputs).last_hidden_state) < TOL
    grads = dict(ours.named_parameters())
    for name, param in reference.named_parameters():
        if param.grad is not None:
            assert max_diff(grads[name].grad, param.grad) < 1e-5, name


def test_the_cpu_runs_the_block_formulation_without_sdpa(monkeypatch):
    _, ours = reference_pair(True)
    called = []
    monkeypatch.setattr(F, "scaled_dot_product_attention", lambda *a, **k: called.append(1))
    blocks = []
    apply = _BlockAttention.apply
    monkeypatch.setattr(_BlockAttention, "apply", lambda *a: blocks.append(1) or apply(*a))
    ours(**batch_inputs())
    assert not called and len(blocks) == ours.config.num_hidden_layers


@pytest.mark.parametrize(
    "aware, fold",
    [(True, False), (True, True), (False, False)],
    ids=["entity_aware", "entity_aware_folded", "original_attention"],
)
def test_wider_ragged_batches_equal_transformers_padded_and_packed(aware, fold, monkeypatch):
    """At a wider shape with rows of different lengths (one row without entities): outputs and gradients of the
    padded batch and of the packed one (`lengths`) equal transformers' at the real tokens; packed, padding is 0.
    `fold`: the words' scores against entity keys from `w2e_query` folded into the keys (`_folded_scores`; the shape
    has too many entities for it to pay, so it is forced here), else from the words' queries (forced too)."""
    monkeypatch.setattr(LukeSelfAttention, "_fold_pays", lambda self, shape: fold)
    folded = []
    real_folded_scores = attention_module._folded_scores
    monkeypatch.setattr(attention_module, "_folded_scores", lambda *a: folded.append(1) or real_folded_scores(*a))
    reference, ours = wider_pair(aware)
    inputs, lengths = ragged_inputs()
    words, entities = inputs["attention_mask"].bool(), inputs["entity_attention_mask"].bool()
    expected = reference(**inputs)
    loss_of(expected, words, entities).backward()
    reference_grads = {n: p.grad for n, p in reference.named_parameters() if p.grad is not None}
    for packed in (False, True):
        ours.zero_grad()
        out = ours(**inputs, lengths=lengths if packed else None)
        assert max_diff(out.last_hidden_state[words], expected.last_hidden_state[words]) < TOL
        assert max_diff(out.entity_last_hidden_state[entities], expected.entity_last_hidden_state[entities]) < TOL
        if packed:
            assert (
                out.last_hidden_state[~words].abs().max() == 0
                and out.entity_last_hidden_state[~entities].abs().max() == 0
            )
        else:
            assert max_diff(out.last_hidden_state, expected.last_hidden_state) < TOL  # padding too
        loss_of(out, words, entities).backward()
        grads = dict(ours.named_parameters())
        for name, grad in reference_grads.items():
            assert max_diff(grads[name].grad, grad) < 1e-5 * max(1.0, grad.abs().max().item()), (packed, name)
    assert len(folded) == (2 * ours.config.num_hidden_layers if fold else 0)  # (padded and packed, each layer)


def test_packed_lengths_are_checked():
    _, ours = wider_pair()
    inputs, (word_lengths, entity_lengths) = ragged_inputs()
    with pytest.raises(ValueError, match="rows of 1 to 37 words"):
        ours(**inputs, lengths=([38, *word_lengths[1:]], entity_lengths))
    with pytest.raises(ValueError, match="rows of 0 to 13 entities"):
        ours(**inputs, lengths=(word_lengths, entity_lengths[:3]))


@pytest.mark.parametrize("packed", [False, True])
@pytest.mark.parametrize("groups", [2, 1, "folded"])
def test_block_backward_with_dropout_equals_finite_differences(packed, groups):
    """`_BlockAttention`'s written-out backward pass, dropout included (the same mask each call: seeded), against
    torch.autograd.gradcheck in float64, for a padded batch (with a mask) and a packed one; `"folded"`: two query
    groups, the words' scores against entity keys given (`_folded_scores`' output), their gradient checked too."""
    folded = groups == "folded"
    groups = 2 if folded else groups
    heads, head_dim, hidden = 2, 3, 6
    if packed:
        shape = Shape(2, 4, 3, (4, 2), (3, 1))
        bias = None
    else:
        shape = Shape(2, 4, 3)
        bias = torch.zeros(2, 1, 7, dtype=torch.float64)
        bias[1, 0, 3] = bias[1, 0, 6] = torch.finfo(torch.float64).min
    columns = tuple(range(0, hidden * (groups + 2), hidden))
    entity_columns = columns if groups == 1 else (2 * hidden, 3 * hidden, 0, hidden)
    word_width = hidden * (groups + 2)
    if folded:
        columns, word_width = (0, -1, hidden, 2 * hidden), 3 * hidden
    layout = _Layout(shape, heads, head_dim, columns, entity_columns, head_dim**-0.5)
    assert layout.folded == folded
    g = torch.Generator().manual_seed(0)
    words = torch.randn(shape.word_rows, word_width, generator=g, dtype=torch.float64, requires_grad=True)
    entity_rows = sum(shape.entity_lengths) if packed else shape.batch * shape.entities
    entities = torch.randn(entity_rows, hidden * (groups + 2), generator=g, dtype=torch.float64, requires_grad=True)
    scores = None
    if folded:
        size = sum(s.batch * heads * s.words * s.entities for s, _, _ in shape.groups())
        scores = torch.randn(size, generator=g, dtype=torch.float64, requires_grad=True)

    def attention(w, e, *s):
        torch.manual_seed(7)  # the same dropout mask at every call
        return _BlockAttention.apply(w, e, bias, layout, 0.3, *s)

    inputs = (words, entities) + ((scores,) if folded else ())
    assert torch.autograd.gradcheck(attention, inputs, eps=1e-6, atol=1e-6, fast_mode=True)
    torch.manual_seed(7)
    out = attention(*inputs)
    torch.manual_seed(8)
    assert not torch.equal(out, _BlockAttention.apply(*inputs[:2], bias, layout, 0.3, *inputs[2:]))  # (dropout is real)


def test_folded_scores_equal_the_words_queries_for_entity_keys():
    """`_folded_scores`: x (W_h^T k) + b_h . k, each head, equals the scores of the words' `w2e_query` projections
    against the entity keys, for a padded and a packed shape (a row without entities included)."""
    heads, head_dim = 3, 4
    hidden = heads * head_dim
    g = torch.Generator().manual_seed(2)
    weight, bias = (
        torch.randn(hidden, hidden, generator=g, dtype=torch.float64),
        torch.randn(hidden, generator=g, dtype=torch.float64),
    )
    for shape in (Shape(2, 5, 3), Shape(3, 5, 3, (5, 2, 4), (3, 0, 1))):
        words = torch.randn(shape.word_rows, hidden, generator=g, dtype=torch.float64)
        entity_rows = sum(shape.entity_lengths) if shape.packed else shape.batch * shape.entities
        entities = torch.randn(entity_rows, 4 * hidden, generator=g, dtype=torch.float64)  # [k, v, e2w q, e2e q]
        layout = _Layout(shape, heads, head_dim, (0, -1, hidden, 2 * hidden), (2 * hidden, 3 * hidden, 0, hidden), 1.0)
        expected = []
        for group, word_row, entity_row in shape.groups():
            q = (words[word_row : word_row + group.batch * group.words] @ weight.t() + bias).view(
                group.batch, group.words, heads, head_dim
            )
            k = entities[entity_row : entity_row + group.batch * group.entities, :hidden].view(
                group.batch, group.entities, heads, head_dim
            )
            expected.append(torch.einsum("bwhd,behd->bhwe", q, k).reshape(-1))
        assert torch.allclose(
            attention_module._folded_scores(words, entities, layout, weight, bias), torch.cat(expected), atol=1e-12
        )


def test_a_self_attention_module_keeps_the_checkpoint_names():
    attention = LukeSelfAttention(LukeConfig(hidden_size=8, num_attention_heads=2))
    assert sorted(attention.state_dict()) == sorted(
        f"{name}.{p}"
        for name in ("query", "key", "value", "w2e_query", "e2w_query", "e2e_query")
        for p in ("weight", "bias")
    )


def test_inference_mode_outputs_equal_transformers():
    """Under `torch.inference_mode` in evaluation mode the CPU multiplies by packed weights (`packed_linear`)."""
    reference, ours = wider_pair()
    inputs, lengths = ragged_inputs()
    words = inputs["attention_mask"].bool()
    reference.eval(), ours.eval()
    with torch.inference_mode():
        expected = reference(**inputs).last_hidden_state
        assert max_diff(ours(**inputs).last_hidden_state, expected) < TOL
        assert max_diff(ours(**inputs, lengths=lengths).last_hidden_state[words], expected[words]) < TOL
    assert any("_packed_weights" in module.__dict__ for module in ours.modules())
    ours.train()
    assert not any("_packed_weights" in module.__dict__ for module in ours.modules())


def test_a_packed_batch_too_big_for_memory_is_encoded_in_checkpointed_groups(monkeypatch):
    """Past `activation_memory()`, the rows run in groups under activation checkpointing: the loss and gradients of
    all rows at once; with dropout, the recomputation draws the masks the forward pass drew (the gradients are those
    of the same groups without checkpointing)."""
    import torch.utils.checkpoint

    _, ours = wider_pair()
    inputs, lengths = ragged_inputs()
    words, entities = inputs["attention_mask"].bool(), inputs["entity_attention_mask"].bool()

    def run(budget):
        monkeypatch.setenv("LUKE_CPU_ACTIVATION_MEMORY", budget)
        ours.zero_grad()
        torch.manual_seed(0)
        loss = loss_of(ours(**inputs, lengths=lengths), words, entities)
        loss.backward()
        return (
            ours._row_groups(*lengths),
            loss.item(),
            {n: p.grad.clone() for n, p in ours.named_parameters() if p.grad is not None},
        )

    def same(first, second):
        assert abs(first[1] - second[1]) < 1e-5
        for name, grad in first[2].items():
            assert max_diff(second[2][name], grad) < 1e-5 * max(1.0, grad.abs().max().item()), name

    whole, grouped = run("100"), run("0.0000001")  # GiB: all rows at once, then one row a group
    assert whole[0] == [(0, 4)] and grouped[0] == [(0, 1), (1, 2), (2, 3), (3, 4)]
    same(whole, grouped)
    for module in ours.modules():  # with dropout
        if isinstance(module, torch.nn.Dropout):
            module.p = 0.2
    for layer in ours.encoder.layer:
        layer.attention.self.dropout_prob = 0.2
    checkpointed = run("0.0000001")
    monkeypatch.setattr(torch.utils.checkpoint, "checkpoint", lambda function, *args, **kwargs: function(*args))
    same(checkpointed, run("0.0000001"))
