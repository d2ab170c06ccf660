"""
A config names the paper's figures for its task with a top-level `paper` key, which training ignores.

`allennlp seeds` writes each published figure beside the mean and spread of the runs' metric
(`luke_allennlp.experiments.summary`), reading it from the config. allennlp builds its training loop from every
top-level key of the config left after the ones it takes first, and refused the key ("Extra parameters passed to
TrainModel"). Here `prepare_environment`, which takes the seeds from the config just before that, takes `paper` too:
the key stays in the run's `config.json` and its archive (where `allennlp seeds --summarize` finds it), and nothing
else reads it.
"""

import types
from typing import Any

from luke_allennlp_compat.patch import repaired, replace

PAPER_KEY = "paper"  # (luke_allennlp.experiments.summary reads and checks it)


def repair_prepare_environment(module: types.ModuleType) -> None:
    """`allennlp.common.util.prepare_environment` also takes the config's `paper` key (in every training process)."""
    prepare_environment = module.prepare_environment
    if repaired(prepare_environment):
        return

    def patched(params: Any) -> None:
        params.pop(PAPER_KEY, None)
        prepare_environment(params)

    replace(module, "prepare_environment", patched)
