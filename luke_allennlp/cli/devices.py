"""
The training devices, checked before any work, and the machine's GPU count for configs.

- A config that names a GPU the machine does not have (`trainer.cuda_device: 0`, or GPUs in
  `distributed.cuda_devices`, on a machine without a GPU): allennlp read the data and built the model, then failed in
  torch with some 29 lines ending "Cannot access accelerator device". Here `train_model` checks the config first and
  stops with one line naming the setting and saying that `"auto"` or -1 runs on the CPU (a `ConfigurationError`,
  printed as one line by `luke_allennlp.cli.user_errors`). `allennlp predict` and `allennlp evaluate` check their
  `--cuda-device` the same way before they load the archive (torch's 20-line "Cannot access accelerator device").
- allennlp gives Jsonnet the environment as external variables; a missing one is an error, so a config cannot ask
  for a value with a default. `NUM_GPUS` is given as the number of GPUs torch sees and `GPU_MEMORY_GIB` as the first
  one's memory in GiB (0 without a GPU), unless the environment sets them (the pretraining configs take their number
  of processes and their micro-batch from them).
"""

import types
from typing import Any, Dict, Optional

from luke_allennlp_compat.patch import repaired, replace


def _index(device: Any) -> Optional[int]:
    """The GPU index a config's device value names (None: the CPU, "auto", or not a device)."""
    if isinstance(device, bool):
        return None
    if isinstance(device, int):
        return device if device >= 0 else None
    if isinstance(device, str):
        if device.lstrip("-").isdigit():
            return _index(int(device))
        if device.startswith("cuda"):
            return int(device.partition(":")[2] or 0)
    return None


def check_devices(params: Any) -> None:
    """Raises a `ConfigurationError` if the training config names a GPU that this machine lacks."""
    from allennlp.common.checks import ConfigurationError

    from luke_allennlp.training.devices import missing_gpu  # (`luke_allennlp.training` imports allennlp's trainer)

    distributed = params.get("distributed")
    distributed = distributed.as_dict(quiet=True) if hasattr(distributed, "as_dict") else distributed
    if distributed:
        for device in distributed.get("cuda_devices") or []:
            index = _index(device)
            problem = missing_gpu("a device in distributed.cuda_devices", index) if index is not None else None
            if problem:
                raise ConfigurationError(
                    problem.replace('"auto" (a GPU where there is one, else the CPU) or -1', "-1 for each process")
                )
        return
    trainer = params.get("trainer")
    device = trainer.get("cuda_device") if trainer is not None and hasattr(trainer, "get") else None
    index = _index(device)
    problem = missing_gpu("trainer.cuda_device", index) if index is not None else None
    if problem:
        raise ConfigurationError(problem)


def repair_train(module: types.ModuleType) -> None:
    """`train_model` checks the devices before it creates the output directory or reads anything."""
    train_model = module.train_model
    if repaired(train_model):
        return

    def checked_train_model(params: Any, *args: Any, **kwargs: Any) -> Any:
        check_devices(params)
        return train_model(params, *args, **kwargs)

    replace(module, "train_model", checked_train_model)


def check_command_device(args: Any) -> None:
    """Raises a `ConfigurationError` if a command's `--cuda-device` names a GPU that this machine lacks."""
    from allennlp.common.checks import ConfigurationError

    from luke_allennlp.training.devices import missing_gpu

    index = _index(getattr(args, "cuda_device", None))
    problem = missing_gpu("--cuda-device", index) if index is not None else None
    if problem:
        raise ConfigurationError(problem.split(": set it to")[0] + ": pass --cuda-device -1 (the CPU)")


def _checked_command(module: types.ModuleType, name: str) -> None:
    command = getattr(module, name)
    if repaired(command):
        return

    def checked(args: Any) -> Any:
        check_command_device(args)
        return command(args)

    replace(module, name, checked)


def repair_predict(module: types.ModuleType) -> None:
    """`allennlp predict --cuda-device N` checked before the archive is loaded."""
    _checked_command(module, "_predict")


def repair_evaluate(module: types.ModuleType) -> None:
    """`allennlp evaluate --cuda-device N` checked before the archive is loaded."""
    _checked_command(module, "evaluate_from_args")


def repair_params(module: types.ModuleType) -> None:
    """`NUM_GPUS` and `GPU_MEMORY_GIB` among the external variables that Jsonnet sees, the machine's unless the
    environment sets them."""
    environment_variables = module._environment_variables
    if repaired(environment_variables):
        return

    def with_gpus() -> Dict[str, str]:
        from luke_allennlp.training.devices import gpu_count, gpu_memory_gib

        variables = environment_variables()
        variables.setdefault("NUM_GPUS", str(gpu_count()))
        if "GPU_MEMORY_GIB" not in variables:
            variables["GPU_MEMORY_GIB"] = str(gpu_memory_gib())
        return variables

    replace(module, "_environment_variables", with_gpus)
