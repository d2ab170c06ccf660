"""The CPU's dropout: its rate, its values and gradient, and where it stands aside for `F.dropout`."""

import torch
import torch.nn.functional as F

from luke_allennlp.modeling.dropout import Dropout, dropout, dropout_add, fast_dropout_applies, keep


def test_each_element_is_dropped_at_the_rate_and_the_rest_scaled():
    torch.manual_seed(0)
    x = torch.rand(200_000) + 1.0  # (no element is 0 before dropout)
    for p in (0.1, 0.5):
        y = dropout(x, p, training=True)
        dropped = y == 0
        assert abs(dropped.float().mean().item() - p) < 0.005  # binomial sd 0.0011
        assert torch.equal(y[~dropped], x[~dropped] * (1.0 / (1.0 - p)))  # F.dropout's values: x * (1 / (1 - p))


def test_the_mask_is_drawn_from_the_default_generator():
    x = torch.ones(70_000)  # more than one chunk
    torch.manual_seed(3)
    first = dropout(x, 0.3, True)
    torch.manual_seed(3)
    assert torch.equal(first, dropout(x, 0.3, True))
    assert not torch.equal(first, dropout(x, 0.3, True))


def test_gradient_is_the_mask_times_the_scale_and_dropout_add_adds_the_residual():
    x = torch.randn(3000, requires_grad=True)
    residual = torch.randn(3000, requires_grad=True)
    torch.manual_seed(1)
    y = dropout(x, 0.2, True)
    y.sum().backward()
    assert torch.equal(x.grad, (y != 0).float() * (1 / 0.8))
    torch.manual_seed(1)
    z = dropout_add(x.detach(), residual, 0.2, True)
    assert torch.allclose(z, y.detach() + residual, atol=1e-6, rtol=0)


def test_keep_multiplies_and_fills():
    torch.manual_seed(2)
    values = torch.rand(100_000) + 0.5
    out = keep(torch.empty(100_000), 0.4, times=values)
    assert set(torch.unique(out[out != 0] / values[out != 0]).tolist()) == {1.0}
    assert abs((out == 0).float().mean().item() - 0.4) < 0.01


def test_outside_training_or_on_no_drop_it_is_f_dropout():
    x = torch.randn(100)
    assert not fast_dropout_applies(x, 0.1, training=False) and not fast_dropout_applies(x, 0.0, True)
    assert torch.equal(dropout(x, 0.1, False), x) and torch.equal(Dropout(0.1).eval()(x), x)
    assert isinstance(Dropout(0.3), torch.nn.Dropout) and Dropout(0.3).p == 0.3
    assert torch.equal(dropout(x, 0.0, True), F.dropout(x, 0.0, True))


def test_dropout_add_backward_is_the_mask_for_x_and_the_gradient_itself_for_the_residual():
    x = torch.randn(3000, requires_grad=True)
    residual = torch.randn(3000, requires_grad=True)
    torch.manual_seed(4)
    z = dropout_add(x, residual, 0.2, True)
    upstream = torch.randn(3000)
    z.backward(upstream)
    kept = (z - residual).detach() != 0  # (no element of x is 0)
    assert 0.75 < kept.float().mean().item() < 0.85
    assert torch.equal(x.grad, upstream * kept.float() * 1.25) and torch.equal(residual.grad, upstream)
    # torch.func's transforms take it too (the same mask: seeded)
    torch.manual_seed(4)
    grad = torch.func.grad(lambda x: (dropout_add(x, residual.detach(), 0.2, True) * upstream).sum())(x.detach())
    assert torch.equal(grad, x.grad)


def test_rates_at_the_edges_draw_no_out_of_range_threshold():
    torch.manual_seed(5)
    assert keep(torch.empty(100_000), 1e-12).eq(1).all()  # (nothing dropped)
    assert keep(torch.empty(100_000), 1 - 1e-12).eq(0).all()  # (everything dropped)


def test_dropout_add_takes_forward_mode_and_vmap():
    x, residual, tangent = torch.randn(500), torch.randn(500), torch.randn(500)
    torch.manual_seed(6)
    expected = dropout_add(x, residual, 0.2, True)
    kept = ((expected - residual) != 0).float()
    torch.manual_seed(6)
    out, out_tangent = torch.func.jvp(lambda x: dropout_add(x, residual, 0.2, True), (x,), (tangent,))
    assert torch.equal(out, expected) and torch.equal(out_tangent, tangent * kept * 1.25)
    batched = torch.func.vmap(lambda x: dropout_add(x, residual, 0.2, True), randomness="same")(torch.randn(3, 500))
    assert batched.shape == (3, 500)
