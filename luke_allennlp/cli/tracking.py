"""
The trainer's trackers named by the environment: `LUKE_TRACKING` (`tensorboard`, `mlflow`, `wandb`, comma-separated)
is an external variable of every config, empty unless the environment sets it; `configs/lib/tracking.libsonnet`
turns it into the trainer's callbacks. (allennlp gives Jsonnet the environment, and a missing variable is an error:
see `devices` for `NUM_GPUS`.)
"""

import types
from typing import Dict

from luke_allennlp_compat.patch import repaired, replace


def repair_params(module: types.ModuleType) -> None:
    environment_variables = module._environment_variables
    if repaired(environment_variables):
        return

    def with_tracking() -> Dict[str, str]:
        variables = environment_variables()
        variables.setdefault("LUKE_TRACKING", "")
        return variables

    replace(module, "_environment_variables", with_tracking)
