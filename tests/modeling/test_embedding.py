"""The embedding table that keeps its weight gradient's memory: torch's gradients, the memory reused only when nothing
else holds it, and `nn.Embedding` wherever the kept block does not apply."""

import copy
import pickle
import threading

import pytest
import torch
from torch import nn

from luke_allennlp.modeling.embedding import Embedding

IDS = torch.tensor([[5, 5, 7, 1, 1], [7, 9, 5, 2, 1]])  # repeated ids, and the padding id 1


def pair(**kwargs):
    torch.manual_seed(0)
    reference = nn.Embedding(40, 6, padding_idx=1, **kwargs)
    ours = Embedding(40, 6, padding_idx=1, **kwargs)
    ours.load_state_dict(reference.state_dict())
    return reference, ours


def kept(module: Embedding):
    storage = module._kept_gradient.storage
    return None if storage is None else storage.data_ptr()


def test_gradients_are_torchs_and_the_block_is_reused_once_released():
    reference, ours = pair()
    blocks = set()
    for _ in range(3):
        grad = torch.randn(2, 5, 6)
        for module in (reference, ours):
            module.weight.grad = None  # (what `zero_grad()` does)
            module(input=IDS).backward(grad)  # (`nn.Embedding`'s argument name)
        assert torch.equal(ours.weight.grad, reference.weight.grad)  # the same sums in the same order
        assert not ours.weight.grad[1].any()  # the padding row gets no gradient
        assert ours.weight.grad.data_ptr() == kept(ours)
        blocks.add(kept(ours))
    assert len(blocks) == 1


def test_accumulated_and_held_gradients_are_never_overwritten():
    reference, ours = pair()
    for _ in range(2):  # two backward passes without zeroing: the second adds to the first
        grad = torch.randn(2, 5, 6)
        for module in (reference, ours):
            module(IDS).backward(grad)
    assert torch.equal(ours.weight.grad, reference.weight.grad)

    held, copied = ours.weight.grad, ours.weight.grad.clone()  # someone keeps the old gradient
    ours.weight.grad = reference.weight.grad = None
    grad = torch.randn(2, 5, 6)
    for module in (reference, ours):
        module(IDS).backward(grad)
    assert torch.equal(held, copied) and ours.weight.grad.data_ptr() != held.data_ptr()
    assert torch.equal(ours.weight.grad, reference.weight.grad)


def test_two_threads_backward_at_once_sum_their_gradients():
    reference, ours = pair()
    grads = [torch.randn(2, 5, 6) for _ in range(2)]
    for grad in grads:
        reference(IDS).backward(grad)
    for _ in range(5):
        ours.weight.grad = None
        outputs = [ours(IDS) for _ in grads]  # (the graphs built here; the backward passes in the threads)
        threads = [threading.Thread(target=out.backward, args=(grad,)) for out, grad in zip(outputs, grads)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert torch.allclose(ours.weight.grad, reference.weight.grad, atol=1e-6)


@pytest.mark.parametrize(
    "kwargs, context",
    [
        ({}, torch.no_grad),
        ({}, torch.inference_mode),
        ({"sparse": True}, torch.enable_grad),
        ({"max_norm": 1.0}, torch.enable_grad),
        ({"scale_grad_by_freq": True}, torch.enable_grad),
    ],
)
def test_elsewhere_it_is_nn_embedding(kwargs, context):
    reference, ours = pair(**kwargs)
    with context():
        expected, actual = reference(IDS), ours(IDS)
    assert torch.equal(actual, expected)
    if actual.requires_grad:
        for out in (expected, actual):
            out.sum().backward()
        assert ours.weight.grad.is_sparse == reference.weight.grad.is_sparse
        assert torch.equal(ours.weight.grad.to_dense(), reference.weight.grad.to_dense())
    assert kept(ours) is None


def test_functorch_transforms_take_nn_embeddings_path():
    reference, ours = pair()

    def loss(module, weight):
        return torch.func.functional_call(module, {"weight": weight}, (IDS,)).square().sum()

    expected = torch.func.grad(lambda w: loss(reference, w))(reference.weight.detach())
    actual = torch.func.grad(lambda w: loss(ours, w))(ours.weight.detach())
    assert torch.equal(actual, expected) and kept(ours) is None


def test_evaluation_mode_copies_and_casts_release_the_block():
    _, ours = pair()
    ours(IDS).sum().backward()
    assert kept(ours) is not None
    assert kept(copy.deepcopy(ours)) is None and kept(pickle.loads(pickle.dumps(ours))) is None
    ours.eval()
    assert kept(ours) is None
    ours.train()
    ours(IDS).sum().backward()
    ours.double()
    assert kept(ours) is None
    ours.weight.grad = None
    ours(IDS).sum().backward()
    assert ours.weight.grad.dtype == torch.float64 and ours.weight.grad.data_ptr() == kept(ours)
