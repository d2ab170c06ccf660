"""
Weights are loaded with `weights_only=True`, an unreadable file is named.

allennlp's `read_state_dict` (archives, `from_archive` models), the `pretrained` initializer, the trainer's reload of
best.th and the `default` checkpointer call `torch.load` without `weights_only`. torch 2.6 made `weights_only=True` the
default, but TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD=1 in the environment turns it back off for such calls, so a crafted
`weights.th` could run code while unpickling. They load through `load_weights` instead: `weights_only=True` passed
explicitly (which that variable cannot override), and a file that does not unpickle raises a `WeightsError` naming it
(`luke_allennlp.archival.load_archive` adds the archive's name). Also silenced: the FutureWarning of allennlp's
`torch.cuda.amp.autocast` (deprecated in torch 2.4) on every training run.
"""

import types
from typing import Any, Dict, List, Optional

from luke_allennlp.cli._patch import logger, repaired, replace
from luke_allennlp.modeling.weights import WeightsError, load_weights


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
        from luke_allennlp.resources.archive_config import LOADING

        state = load_weights(path, map_location=module.device_mapping(cuda_device), mmap=LOADING.get() is not None)
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
