"""
Weights are loaded with `weights_only=True`, an unreadable file is named.

Every function of allennlp that calls `torch.load` does so without `weights_only`: `read_state_dict` (archives,
`from_archive` models), the `pretrained` initializer, the trainer's reload of best.th, the `default` checkpointer,
`cached_transformers.get` (the `pretrained_transformer` embedder's `override_weights_file`), `TensorCache` and the
FairScale accelerator's sharded checkpoints. torch 2.6 made `weights_only=True` the default, but
TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD=1 in the environment turns it back off for such calls, so a crafted pickle could run
code. The first four load through `load_weights` instead, the others (`WEIGHTS_ONLY_CALLS`) run with every `torch.load`
they make reading weights only (`weights_only_loads`): `weights_only=True` passed explicitly, which that variable cannot
override, and a file that does not unpickle raises a `WeightsError` naming it (`luke_allennlp.archival.load_archive`
adds the archive's name). `tests/cli/test_weights.py` checks that no other function of allennlp calls `torch.load`.
Also silenced: the FutureWarning of allennlp's `torch.cuda.amp.autocast` (deprecated in torch 2.4) on every training
run.
"""

import contextlib
import functools
import os
import threading
import types
from typing import Any, Callable, Dict, Iterator, List, Optional

from luke_allennlp.cli import logger
from luke_allennlp.modeling.weights import WeightsError, load_weights
from luke_allennlp_compat.patch import repaired, replace


def repair_nn_util(module: types.ModuleType) -> None:
    from collections import OrderedDict

    if repaired(module.read_state_dict):
        return
    import re

    def read_state_dict(
        path: Any,
        strip_prefix: Optional[str] = None,
        ignore: Optional[List[str]] = None,
        strict: bool = True,
        cuda_device: int = -1,
    ) -> Dict[str, Any]:
        # allennlp's own, but for the load: its key filtering, its errors. An archive's weights, copied into the model
        # as it loads, are read from the file mapped into memory (no copy of their own).
        from luke_allennlp.resources.archive_config import loading

        state = load_weights(path, map_location=module.device_mapping(cuda_device), mmap=loading() is not None)
        if ignore is not None and not isinstance(ignore, list):
            raise ValueError("'ignore' parameter should be a list")
        out: Dict[str, Any] = OrderedDict()
        prefix_used, ignore_used = False, [False] * len(ignore or [])
        for key in state.keys():
            matched = [i for i, pattern in enumerate(ignore or []) if re.match(pattern, key)]
            if matched:
                ignore_used[matched[0]] = True
                logger.warning("ignoring %s from state dict", key)
                continue
            new_key = key
            if strip_prefix and key.startswith(strip_prefix):
                prefix_used, new_key = True, key[len(strip_prefix) :]
                if not new_key:
                    raise ValueError("'strip_prefix' resulted in an empty string for a key")
            out[new_key] = state[key]
        if strict and strip_prefix is not None and not prefix_used:
            raise ValueError(f"'strip_prefix' of '{strip_prefix}' was never used")
        for pattern, used in zip(ignore or [], ignore_used):
            if strict and not used:
                raise ValueError(f"'ignore' pattern '{pattern}' didn't have any matches")
        return out

    replace(module, "read_state_dict", read_state_dict)


def repair_initializers(module: types.ModuleType) -> None:
    initializer = module.PretrainedModelInitializer
    if repaired(initializer.__init__):
        return
    import tarfile

    def __init__(self: Any, weights_file_path: str, parameter_name_overrides: Dict[str, str] = None) -> None:  # noqa: RUF013 (allennlp's signature)
        from allennlp.models.archival import extracted_archive, get_weights_path

        if tarfile.is_tarfile(weights_file_path):
            with extracted_archive(weights_file_path) as extraction_path:
                try:
                    self.weights = load_weights(get_weights_path(extraction_path))
                except WeightsError as error:
                    raise error.inside(weights_file_path, extraction_path) from error
        else:
            self.weights = load_weights(weights_file_path)
        self.parameter_name_overrides = parameter_name_overrides or {}

    replace(initializer, "__init__", __init__)


def repair_trainer_loads(module: types.ModuleType) -> None:
    import warnings

    trainer = module.GradientDescentTrainer
    if repaired(trainer._load_model_state):
        return
    # allennlp's validation loop enters `torch.cuda.amp.autocast(use_amp)` (a no-op unless fp16), which torch 2.4+
    # deprecates with a FutureWarning on every training run: silenced for that module only.
    warnings.filterwarnings(
        "ignore",
        r"`torch\.cuda\.amp\.(autocast|GradScaler)\(args\.\.\.\)` is deprecated",
        FutureWarning,
        r"allennlp\.training\.gradient_descent_trainer",
    )

    def _load_model_state(self: Any, path: str) -> None:
        model = self._ddp_wrapped_model if self._ddp_wrapped_model is not None else self._pytorch_model
        model.load_state_dict(load_weights(path))  # after training, on the CPU (as allennlp's)

    replace(trainer, "_load_model_state", _load_model_state)


def repair_checkpointer_loads(module: types.ModuleType) -> None:
    checkpointer = module.Checkpointer
    if repaired(checkpointer.load_checkpoint):
        return

    def load_checkpoint(self: Any) -> Any:
        latest = self.find_latest_checkpoint()
        if latest is None:
            return None
        model_path, training_state_path = latest
        device = module.nn_util.device_mapping(-1)
        return module.TrainerCheckpoint(load_weights(model_path, device), load_weights(training_state_path, device))

    replace(checkpointer, "load_checkpoint", load_checkpoint)


# allennlp's other functions that call `torch.load`: "module:qualified name" -> run under `weights_only_loads`.
WEIGHTS_ONLY_CALLS = (
    "allennlp.common.cached_transformers:get",
    "allennlp.common.file_utils:TensorCache.__getitem__",
    "allennlp.nn.parallel.fairscale_fsdp_accelerator:FairScaleFsdpWrappedModel.consolidate_sharded_state",
)
_SWAP = threading.Lock()
_active: List[Any] = [0, None]  # calls running under `weights_only_loads`, and torch.load as it was before them


@contextlib.contextmanager
def weights_only_loads() -> Iterator[None]:
    """While in this context, `torch.load` reads weights only (a path through `load_weights`, so named if refused),
    in every thread: `TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD` cannot turn unpickling back on for a call inside."""
    import torch

    with _SWAP:
        if _active[0] == 0:
            original = torch.load

            def load(f: Any, map_location: Any = None, *args: Any, **kwargs: Any) -> Any:
                if isinstance(f, (str, os.PathLike)) and not args and set(kwargs) <= {"weights_only"}:
                    return load_weights(f, map_location)
                return original(f, map_location, *args, **{**kwargs, "weights_only": True})

            _active[1], torch.load = original, load
        _active[0] += 1
    try:
        yield
    finally:
        with _SWAP:
            _active[0] -= 1
            if _active[0] == 0:
                torch.load = _active[1]


def repair_weights_only_calls(module: types.ModuleType) -> None:
    """The functions of `WEIGHTS_ONLY_CALLS` in `module` run under `weights_only_loads`."""
    for target in WEIGHTS_ONLY_CALLS:
        name, _, qualified = target.partition(":")
        if name != module.__name__:
            continue
        *owners, attribute = qualified.split(".")
        owner: Any = module
        for part in owners:
            owner = getattr(owner, part)
        function = getattr(owner, attribute)
        if repaired(function):
            continue
        static = isinstance(vars(owner).get(attribute), staticmethod)

        def call(*args: Any, __function: Callable = function, **kwargs: Any) -> Any:
            with weights_only_loads():
                return __function(*args, **kwargs)

        functools.update_wrapper(call, function)
        call.__module__ = __name__  # (the mark `replace` sets: this behaviour's)
        replace(owner, attribute, call)
        if static:
            setattr(owner, attribute, staticmethod(call))
