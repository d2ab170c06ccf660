"""
Counting the operations of a training step that make the host wait for a GPU, on any device.

A CPU hides device syncs: a `.item()`, a blocking copy or a boolean-mask index costs nothing there, and on a GPU each
one stops the host until the device has caught up, so the next kernels are not queued while it works. `SyncAudit`
counts them where they would block, on a GPU or on the CPU (where the CPU stands for the device):

- reads of a device tensor by the host: `.item()`, `bool()`, `int()`, `float()` (also inside PyTorch's C++ code:
  every `aten._local_scalar_dense`), `.tolist()`, `.numpy()`, `.cpu()`, `torch.equal`;
- blocking copies: `.to(...)`, `.cuda()`, `.copy_(...)` of a host tensor to the device without `non_blocking=True`
  (on a GPU also a `non_blocking` one from memory that is not pinned, which is synchronous; on the CPU a
  `non_blocking` one is taken as pinned);
- host values copied to the device: `torch.tensor(...)`, `torch.as_tensor(...)`, `torch.asarray(...)` with a device
  that is not the CPU (on the CPU: any `device=`), and `tensor.new_tensor(...)`;
- operations whose output size depends on the data, which read it back: `nonzero` (not `nonzero_static`),
  `masked_select`, boolean-mask indexing and assignment (`x[mask]`, `x[mask] = v`), `unique`,
  `repeat_interleave` without `output_size`, `bincount`;
- a device tensor indexed by host indices (`x[torch.arange(n)]`): PyTorch copies them to the device, blocking.

What is a host tensor: on a GPU, one on the CPU; on the CPU, one that `mark_host` named (the trainer names each batch
as the data loader gives it, before copying it to the device), one made without a device (`torch.from_numpy`,
`torch.tensor`, `torch.zeros`, ... while the audit is active; `torch.from_numpy`, which modes do not see, is
wrapped once to do so), their views, and what an operation computes from host tensors alone (not a copy to a
device). Reads of host tensors are not counted, and nor is what
happens inside `torch.optim` (PyTorch's optimizers keep their step counters on the host unless fused or capturable,
and read them there).

    with SyncAudit() as audit:
        ...  # a training step
    audit.count   # int: operations that block the host on a GPU
    audit.events  # List[str]: each one's operation and where it was called, e.g. "item at luke_span_ner.py:120"
    audit.reset()

The trainer's `audit_host_syncs: true` (`luke_gradient_descent`) runs every training step under one and keeps, on the
trainer:

- `host_sync_counts: List[Tuple[int, bool, int]]`: (step of the run, whether the step reported metrics, its count).
  A step's count runs from the end of the step before (the next batch's fetch and copy included) to its end
  (optimizer step, callbacks and checkpoint included). Steps that report read the loss and metrics once: only steps
  without a report must count 0;
- `host_sync_events: List[Tuple[int, List[str]]]`: the events of each step that had any;
- on a GPU, `cuda_sync_counts: List[Tuple[int, bool, int]]`: PyTorch's own count of each step (see below);
- and, with or without the audit, the loop's timing: `data_waits: List[float]` (seconds each step waited for its
  batches), `step_times: List[float]` (each step's wall time, its wait included) and `pass_start_waits:
  List[float]` (the data wait of each epoch's first step). The stall at a pass's start, in steps, is
  `pass_start_waits[e] / median(step_times)`; with `batches_per_epoch` a pass of the data can also end inside an
  epoch: `max(data_waits) / median(step_times)` covers both.

On a GPU the audit also runs PyTorch's own check, `torch.cuda.set_sync_debug_mode("warn")`, and counts what it
reports apart: `audit.cuda_syncs` and `audit.cuda_events` (the trainer: `cuda_sync_counts`, as `host_sync_counts`).
It sees the syncs of CUDA calls, also inside C++ code, but not every blocking copy (a copy from pageable memory).
`torch.cuda.set_sync_debug_mode("error")` around the same steps makes PyTorch raise at the first one instead.
"""

import contextlib
import os
import threading
import traceback
import warnings
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

import torch
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils.weak import WeakIdKeyDictionary

_TORCH_DIR = os.path.dirname(torch.__file__) + os.sep
_THIS_FILE = os.path.abspath(__file__)
_IGNORED = (os.path.join(_TORCH_DIR, "optim") + os.sep,)  # see the module docstring
_active = threading.local()

# aten operations that read a device value back to the host (their output size, or a scalar, depends on the data).
_READS = {
    "_local_scalar_dense": "item",
    "nonzero": "nonzero",
    "masked_select": "masked_select",
    "_unique": "unique",
    "_unique2": "unique",
    "unique_dim": "unique",
    "unique_consecutive": "unique",
    "bincount": "bincount",
    "equal": "equal",
}
_MASK_DTYPES = (torch.bool, torch.uint8)
# Functions that make a tensor on the host unless given a device.
_HOST_FACTORIES = {
    torch.tensor,
    torch.as_tensor,
    torch.asarray,
    torch.zeros,
    torch.ones,
    torch.empty,
    torch.full,
    torch.arange,
    torch.rand,
    torch.randn,
    torch.randint,
    torch.linspace,
}


def _marking_from_numpy() -> None:
    """`torch.from_numpy` is not seen by torch function modes: wrapped (once) to name its tensors host tensors while
    an audit is active."""
    from_numpy = torch.from_numpy
    if getattr(from_numpy, "_marks_host", False):
        return

    def marked(array: Any) -> torch.Tensor:
        tensor = from_numpy(array)
        audit = current()
        if audit is not None and audit.host_device:
            audit.mark_host(tensor)
        return tensor

    marked._marks_host = True  # type: ignore[attr-defined]
    torch.from_numpy = marked


def current() -> Optional["SyncAudit"]:
    """The innermost active `SyncAudit` of this thread, if any."""
    stack = getattr(_active, "stack", None)
    return stack[-1] if stack else None


def mark_host(value: Any) -> None:
    """Names the tensors in `value` (nested dicts, lists and tuples) host tensors for the active audit, if any."""
    audit = current()
    if audit is not None:
        audit.mark_host(value)


def _tensors(value: Any):
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _tensors(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _tensors(item)


def _device_of(value: Any) -> Optional[torch.device]:
    """The device a `.to(...)` / `.cuda(...)` argument names, if any."""
    if isinstance(value, torch.device):
        return value
    if isinstance(value, str):
        try:
            return torch.device(value)
        except RuntimeError:
            return None
    if isinstance(value, int) and not isinstance(value, bool):
        return torch.device("cuda", value)
    if isinstance(value, torch.Tensor):
        return value.device
    return None


class _Auditing:
    """A mode that reports to `audit`."""

    def __init__(self, audit: "SyncAudit") -> None:
        super().__init__()
        self.audit = audit


class _Functions(_Auditing, TorchFunctionMode):
    """Python-level calls: host reads without an aten operation (`tolist`, `numpy`), copies, tensors from host
    values."""

    def __torch_function__(self, func: Callable, types: Any, args: Tuple = (), kwargs: Optional[Dict] = None) -> Any:
        kwargs, audit = kwargs or {}, self.audit
        name = getattr(func, "__name__", "")
        if audit.host_device and func in _HOST_FACTORIES and kwargs.get("device") is None:
            # On the CPU: a tensor made without a device would be on the host on a GPU run too.
            result = func(*args, **kwargs)
            audit.mark_host(result)
            return result
        if name in ("tolist", "numpy", "cpu") and args and isinstance(args[0], torch.Tensor):
            if audit.on_device(args[0]):
                audit.record(name)
        elif name in ("to", "cuda", "copy_") and args and isinstance(args[0], torch.Tensor):
            self._copy(name, args, kwargs)
        elif name in ("tensor", "as_tensor", "asarray") and func in (torch.tensor, torch.as_tensor, torch.asarray):
            device = kwargs.get("device")
            data = args[0] if args else kwargs.get("data", kwargs.get("obj"))
            if device is not None and audit.is_device(_device_of(device)):
                if not isinstance(data, torch.Tensor) or not audit.on_device(data):
                    audit.record(f"torch.{name}(host values, device=...)")
        elif name == "new_tensor" and args and isinstance(args[0], torch.Tensor):
            named = _device_of(kwargs.get("device"))
            on_device = audit.is_device(named) if named is not None else audit.on_device(args[0])
            data = args[1] if len(args) > 1 else kwargs.get("data")
            if on_device and (not isinstance(data, torch.Tensor) or not audit.on_device(data)):
                audit.record("new_tensor(host values)")
        return func(*args, **kwargs)

    def _copy(self, name: str, args: Tuple, kwargs: Dict) -> None:
        audit = self.audit
        if name == "copy_":  # destination.copy_(source)
            destination, source = args[0], args[1] if len(args) > 1 else kwargs.get("src")
            if not isinstance(source, torch.Tensor):
                return
            host_to_device = audit.is_host(source) and audit.on_device(destination)
            device_to_host = audit.on_device(source) and audit.is_host(destination)
        else:
            source = args[0]
            if name == "cuda":
                target: Optional[torch.device] = _device_of(args[1] if len(args) > 1 else kwargs.get("device", "cuda"))
            else:
                target = _device_of(kwargs.get("device"))
                for value in args[1:]:
                    target = target or _device_of(value)
            if target is None:
                return  # a dtype change: no copy between host and device
            host_to_device = audit.is_host(source) and audit.is_device(target)
            device_to_host = audit.on_device(source) and target.type == "cpu" and not audit.host_device
        non_blocking = bool(kwargs.get("non_blocking", args[2] if name == "copy_" and len(args) > 2 else False))
        if name == "to" and not non_blocking:
            non_blocking = any(v is True for v in args[1:])  # .to(device, dtype, non_blocking) positionally
        if host_to_device and (
            not non_blocking or (source.device.type == "cpu" and audit.gpu and not source.is_pinned())
        ):
            audit.record(f"{name} (blocking copy to the device)")
        elif device_to_host and not non_blocking:
            audit.record(f"{name} (blocking copy to the host)")


class _Dispatch(_Auditing, TorchDispatchMode):
    """aten operations, also those that PyTorch's C++ code calls: scalar reads and data-dependent output sizes."""

    def __torch_dispatch__(self, func: Any, types: Any, args: Tuple = (), kwargs: Optional[Dict] = None) -> Any:
        kwargs, audit = kwargs or {}, self.audit
        name = func._schema.name.split("::")[-1]
        what = _READS.get(name)
        if what is None:
            if name in ("index", "_index_put_impl_", "index_put", "index_put_"):
                indices = [i for i in (args[1] if len(args) > 1 else kwargs.get("indices", ())) or () if i is not None]
                if any(isinstance(i, torch.Tensor) and i.dtype in _MASK_DTYPES for i in indices):
                    what = "boolean-mask index" if name == "index" else "boolean-mask assignment"
                elif any(isinstance(i, torch.Tensor) and audit.is_host(i) and i.dim() > 0 for i in indices):
                    what = "host indices of a device tensor (a blocking copy)"
            elif name == "repeat_interleave" and func.overloadpacket is torch.ops.aten.repeat_interleave:
                if kwargs.get("output_size") is None and isinstance(args[0], torch.Tensor) and len(args) < 3:
                    if not (len(args) > 1 and isinstance(args[1], int)):
                        what = "repeat_interleave without output_size"
        tensors = list(_tensors(list(args) + list(kwargs.values())))
        if what is not None and any(audit.on_device(t) for t in tensors):
            audit.record(what)
        result = func(*args, **kwargs)
        # On the CPU: what is computed from host tensors alone stays on the host (`host.long()`, `host + 1`), but
        # for a copy to a device (`.to(device)`), which `_Functions` judges.
        if audit.host_device and tensors and all(audit.is_host(t) for t in tensors):
            if not (name == "_to_copy" and kwargs.get("device") is not None):
                audit.mark_host(result)
        return result


class SyncAudit:
    """
    A context manager that counts, while active, every operation that would make the host wait for a GPU (see the
    module docstring), on a GPU or on the CPU. `count` is their number, `events` names each one and where it was
    called; `reset()` clears both.

    # Parameters

    device : `torch.device`, optional (default = `None`)
        The device training runs on; `None` is the first GPU where there is one, else the CPU. On the CPU, only
        tensors that `mark_host` named are host tensors.
    """

    def __init__(self, device: Optional[torch.device] = None) -> None:
        if device is None:
            device = torch.device("cuda", 0) if torch.cuda.is_available() else torch.device("cpu")
        self.device = torch.device(device)
        self.gpu = self.device.type != "cpu"
        self.host_device = not self.gpu  # the CPU stands for the device: host tensors are those named
        self._host: WeakIdKeyDictionary = WeakIdKeyDictionary()
        self._modes: List[Any] = []
        self._paused = 0
        self.count = 0
        self.events: List[str] = []
        self.cuda_events: List[str] = []  # what PyTorch's sync debug mode reported (on a GPU)
        self._caught: Optional[List[warnings.WarningMessage]] = None
        self._debug: Any = None

    @property
    def cuda_syncs(self) -> int:
        self._collect()
        return len(self.cuda_events)

    def reset(self) -> None:
        self._collect()
        self.count = 0
        self.events = []
        self.cuda_events = []

    def _collect(self) -> None:
        """PyTorch's sync warnings caught so far into `cuda_events`; other warnings are shown as they would be."""
        if not self._caught:
            return
        caught, self._caught[:] = list(self._caught), []
        for warning in caught:
            message = str(warning.message)
            if "synchroniz" in message:
                where = f"{os.path.basename(warning.filename)}:{warning.lineno}"
                self.cuda_events.append(f"{message.splitlines()[0]} at {where}")
            else:
                warnings.showwarning(warning.message, warning.category, warning.filename, warning.lineno)

    # --- where a tensor lives ---

    def mark_host(self, value: Any) -> None:
        for tensor in _tensors(value):
            self._host[tensor] = True

    def is_host(self, tensor: torch.Tensor) -> bool:
        if self.gpu:
            return tensor.device.type == "cpu"
        return tensor in self._host or (tensor._base is not None and tensor._base in self._host)  # (or a view)

    def on_device(self, tensor: torch.Tensor) -> bool:
        return not self.is_host(tensor) and tensor.device.type != "meta"

    def is_device(self, device: Optional[torch.device]) -> bool:
        """Whether a target device of a copy is the training device (on the CPU: any device named)."""
        if device is None:
            return False
        return self.host_device or device.type != "cpu"

    # --- recording ---

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        """Nothing is counted inside: for the data loader's own work, on host tensors by definition (on the CPU its
        tensors cannot be told from the device's)."""
        self._paused += 1
        try:
            yield
        finally:
            self._paused -= 1

    def record(self, what: str) -> None:
        if self._paused:
            return
        stack = traceback.extract_stack()[:-1]
        if any(frame.filename.startswith(_IGNORED) for frame in stack):
            return
        caller = next(
            (f for f in reversed(stack) if not f.filename.startswith(_TORCH_DIR) and f.filename != _THIS_FILE),
            None,
        )
        where = f"{os.path.basename(caller.filename)}:{caller.lineno}" if caller is not None else "?"
        self.count += 1
        self.events.append(f"{what} at {where}")

    def __enter__(self) -> "SyncAudit":
        if self.gpu:
            self._debug = (torch.cuda.get_sync_debug_mode(), warnings.catch_warnings(record=True))
            self._caught = self._debug[1].__enter__()
            warnings.simplefilter("always")
            torch.cuda.set_sync_debug_mode("warn")
        _marking_from_numpy()
        self._modes = [_Functions(self), _Dispatch(self)]
        for mode in self._modes:
            mode.__enter__()
        if not hasattr(_active, "stack"):
            _active.stack = []
        _active.stack.append(self)
        return self

    def __exit__(self, *exc: Any) -> None:
        _active.stack.remove(self)
        for mode in reversed(self._modes):
            mode.__exit__(*exc)
        self._modes = []
        if self._debug is not None:
            mode, catching = self._debug
            torch.cuda.set_sync_debug_mode(mode)
            self._collect()
            catching.__exit__(*exc)
            self._caught, self._debug = None, None
