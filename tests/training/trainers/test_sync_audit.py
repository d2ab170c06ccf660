import numpy as np
import pytest
import torch

from luke_allennlp.models.luke_task_model import LukeTaskModel
from luke_allennlp.training.trainers.sync_audit import SyncAudit

x = torch.arange(6.0).reshape(2, 3)
host = torch.ones(3)

# Each operation that makes the host wait for a GPU, and what the audit calls it.
BLOCKING = {
    "item": (lambda: x[0, 0].item(), "item"),
    "bool": (lambda: bool(x[0, 0] > 0), "item"),
    "int": (lambda: int(x[0, 0]), "item"),
    "float": (lambda: float(x.sum()), "item"),
    "tolist": (lambda: x.tolist(), "tolist"),
    "numpy": (lambda: x.numpy(), "numpy"),
    "cpu": (lambda: x.cpu(), "cpu"),
    "torch.tensor": (lambda: torch.tensor(3, device=x.device), "torch.tensor(host values, device=...)"),
    "torch.as_tensor": (lambda: torch.as_tensor([1, 2], device="cpu"), "torch.as_tensor(host values, device=...)"),
    "new_tensor": (lambda: x.new_tensor([1]), "new_tensor(host values)"),
    "nonzero": (lambda: x.nonzero(), "nonzero"),
    "where": (lambda: torch.where(x > 1), "nonzero"),
    "mask index": (lambda: x[x > 1], "boolean-mask index"),
    "mask assignment": (lambda: x.clone().__setitem__(x > 1, 0.0), "boolean-mask assignment"),
    "masked_select": (lambda: x.masked_select(x > 1), "masked_select"),
    "unique": (lambda: torch.unique(x), "unique"),
    "repeat_interleave": (lambda: torch.repeat_interleave(x[0].long()), "repeat_interleave without output_size"),
    "bincount": (lambda: torch.bincount(x.long().flatten()), "bincount"),
    "equal": (lambda: torch.equal(x, x), "equal"),
    "host indices": (lambda: x[torch.arange(2)], "host indices of a device tensor (a blocking copy)"),
    "host indices assigned": (
        lambda: x.clone().index_put_((host.long(),), torch.zeros(3, 3, device=x.device)),
        "host indices of a device tensor (a blocking copy)",
    ),
    "blocking copy": (lambda: host.to(x.device), "to (blocking copy to the device)"),
    "copy_": (lambda: x[0].clone().copy_(host), "copy_ (blocking copy to the device)"),
    "a host array's blocking copy": (
        lambda: torch.from_numpy(np.ones(2)).to(x.device),
        "to (blocking copy to the device)",
    ),
}
FREE = {
    "non_blocking copy": lambda: host.to(x.device, non_blocking=True, copy=True),
    "host read": lambda: host[0].item() + sum(host.tolist()),
    "arithmetic": lambda: (x * 2).sum(-1).argmax(),
    "index tensor": lambda: x[torch.arange(2, device=x.device)],
    "nonzero_static": lambda: torch.nonzero_static(x, size=3),
    "fill": lambda: x.new_full((), 3) + torch.zeros(2, device=x.device),
    "dtype": lambda: x.to(torch.float64),
    "repeat_interleave by an int": lambda: x.repeat_interleave(2, dim=0),
    "masked_fill": lambda: x.masked_fill(x > 1, 0.0),
    "host_to_device": lambda: LukeTaskModel.host_to_device(np.ones(2), x.device),
    "a tensor made on the host, read there": lambda: torch.arange(3).tolist(),
}


@pytest.mark.parametrize("name", BLOCKING)
def test_the_audit_counts_each_blocking_operation_on_the_cpu(name):
    operation, what = BLOCKING[name]
    with SyncAudit(torch.device("cpu")) as audit:
        audit.mark_host(host)
        operation()
    assert audit.count == 1 and audit.events == [f"{what} at test_sync_audit.py:{audit.events[0].rsplit(':')[-1]}"]
    assert audit.events[0].split(" at ")[1].startswith("test_sync_audit.py:")


@pytest.mark.parametrize("name", FREE)
def test_what_does_not_block_is_not_counted(name):
    with SyncAudit(torch.device("cpu")) as audit:
        audit.mark_host(host)
        FREE[name]()
    assert audit.count == 0, audit.events


def test_reset_pause_and_nesting():
    with SyncAudit(torch.device("cpu")) as audit:
        x.tolist()
        with audit.paused():
            x.tolist()
        assert audit.count == 1
        audit.reset()
        assert (audit.count, audit.events) == (0, [])
        x.sum().item()
    x.tolist()  # not active any more
    assert audit.count == 1
