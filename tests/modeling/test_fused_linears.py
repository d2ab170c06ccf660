"""The attention's projections kept in one storage: their names, gradients, updates and what undoes the layout."""

import copy

import torch
from torch import nn

from luke_allennlp.modeling.checkpoint_files import save_safetensors
from luke_allennlp.modeling.fused_linears import by_type, fuse, fused, is_fused


def six_linears(seed=0):
    torch.manual_seed(seed)
    return [nn.Linear(5, 3) for _ in range(6)]


def test_fuse_lays_the_parameters_out_back_to_back_keeping_values_and_identity():
    linears = six_linears()
    params = [lin.weight for lin in linears]
    values = [p.detach().clone() for p in params]
    fuse(linears)
    assert is_fused(linears) and all(p is lin.weight for p, lin in zip(params, linears))
    assert all(torch.equal(p, v) for p, v in zip(params, values))
    weight, bias = fused(linears[2:])
    assert weight.data_ptr() == linears[2].weight.data_ptr() and weight.shape == (12, 5)  # no copy
    assert torch.equal(weight, torch.cat([lin.weight for lin in linears[2:]]))


def test_by_type_gradients_equal_separate_layers_frozen_ones_included():
    reference, linears = six_linears(), six_linears()
    fuse(linears)
    linears[1].weight.requires_grad_(False)
    reference[1].weight.requires_grad_(False)
    x = torch.randn(7, 5, requires_grad=True)
    x_ref = x.detach().clone().requires_grad_(True)
    first, second = by_type(x, 4, linears)
    expected_first = torch.cat([lin(x_ref[:4]) for lin in reference[:4]], -1)
    expected_second = torch.cat([lin(x_ref[4:]) for lin in reference[2:]], -1)
    assert torch.allclose(first, expected_first, atol=1e-6) and torch.allclose(second, expected_second, atol=1e-6)
    g1, g2 = torch.randn_like(first), torch.randn_like(second)
    (first * g1).sum().add((second * g2).sum()).backward()
    (expected_first * g1).sum().add((expected_second * g2).sum()).backward()
    assert torch.allclose(x.grad, x_ref.grad, atol=1e-6)
    assert linears[1].weight.grad is None
    for ours, theirs in zip(linears, reference):
        for name in ("weight", "bias"):
            if getattr(theirs, name).grad is not None:
                assert torch.allclose(getattr(ours, name).grad, getattr(theirs, name).grad, atol=1e-6), name


def test_an_optimizer_step_updates_what_the_fused_view_reads():
    linears = six_linears()
    fuse(linears)
    optimizer = torch.optim.AdamW([p for lin in linears for p in lin.parameters()], lr=0.1)
    first, second = by_type(torch.randn(6, 5), 3, linears)
    (first.sum() + second.square().sum()).backward()
    optimizer.step()
    assert is_fused(linears)
    assert torch.equal(fused(linears)[0], torch.cat([lin.weight for lin in linears]))


def test_what_undoes_the_layout_falls_back_to_a_copy_and_the_module_lays_it_out_again():
    from luke_allennlp.modeling import LukeConfig
    from luke_allennlp.modeling.attention import LukeSelfAttention

    attention = LukeSelfAttention(LukeConfig(hidden_size=8, num_attention_heads=2))
    assert is_fused(attention._linears())
    attention.query.weight = nn.Parameter(attention.query.weight.detach().clone())  # replaced: layout broken
    assert not is_fused(attention._linears())
    weight, _ = fused(attention._linears())
    assert torch.equal(weight[8:16], attention.query.weight)  # (a concatenation; `w2e_query` first)
    attention.double()  # `Module._apply`: laid out again
    assert is_fused(attention._linears()) and attention.key.weight.dtype == torch.float64
    state = {k: v.clone() for k, v in attention.state_dict().items()}
    attention.load_state_dict(state, assign=True)
    assert is_fused(attention._linears())
    assert is_fused(copy.deepcopy(attention)._linears())


def test_shared_storages_are_saved_each_on_its_own(tmp_path):
    from safetensors.torch import load_file

    linears = six_linears()
    fuse(linears)
    state = {f"l{i}.weight": lin.weight.detach() for i, lin in enumerate(linears)}
    save_safetensors(state, str(tmp_path / "model.safetensors"))
    loaded = load_file(str(tmp_path / "model.safetensors"))
    assert all(torch.equal(loaded[k], v) for k, v in state.items())


def test_by_type_gradients_as_one_matrix_off_the_cpu_equal_separate_layers(monkeypatch):
    """(GPUs: the six weights' gradients in one matrix of three products.) Checked on the CPU by pretending."""
    import luke_allennlp.modeling.fused_linears as fused_linears

    reference, linears = six_linears(), six_linears()
    fuse(linears)
    x = torch.randn(7, 5, requires_grad=True)
    with monkeypatch.context() as patched:
        patched.setattr(torch.Tensor, "device", property(lambda self: torch.device("meta")))
        first, second = fused_linears._ByType.apply(
            x, 4, *fused_linears._storage(linears), *([lin.weight for lin in linears] + [lin.bias for lin in linears])
        )
        (first.sum() + second.square().sum()).backward()
    x_ref = x.detach().clone()
    expected_first = torch.cat([lin(x_ref[:4]) for lin in reference[:4]], -1)
    expected_second = torch.cat([lin(x_ref[4:]) for lin in reference[2:]], -1)
    (expected_first.sum() + expected_second.square().sum()).backward()
    for ours, theirs in zip(linears, reference):
        assert torch.allclose(ours.weight.grad, theirs.weight.grad, atol=1e-5)
        assert torch.allclose(ours.bias.grad, theirs.bias.grad, atol=1e-5)


def test_by_type_under_autocast_takes_autocast_dtypes_with_float_gradients():
    """Under autocast the products are in autocast's dtype, as separate `F.linear`s under it are, and the gradients
    reach the parameters in theirs (the custom backward pass, which writes in the input's dtype, is not used)."""
    reference, linears = six_linears(), six_linears()
    fuse(linears)
    x = torch.randn(7, 5, requires_grad=True)
    x_ref = x.detach().clone().requires_grad_(True)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        first, second = by_type(x, 4, linears)
        expected_first = torch.cat([lin(x_ref[:4]) for lin in reference[:4]], -1)
        expected_second = torch.cat([lin(x_ref[4:]) for lin in reference[2:]], -1)
    assert first.dtype == second.dtype == expected_first.dtype == torch.bfloat16
    assert torch.allclose(first.float(), expected_first.float(), atol=1e-2)
    assert torch.allclose(second.float(), expected_second.float(), atol=1e-2)
    (first.float().sum() + second.float().square().sum()).backward()
    (expected_first.float().sum() + expected_second.float().square().sum()).backward()
    assert x.grad.dtype == torch.float32 and torch.allclose(x.grad, x_ref.grad, atol=5e-2)
    for ours, theirs in zip(linears, reference):
        assert ours.weight.grad.dtype == torch.float32
        assert torch.allclose(ours.weight.grad, theirs.weight.grad, atol=5e-2)
        assert torch.allclose(ours.bias.grad, theirs.bias.grad, atol=5e-2)
