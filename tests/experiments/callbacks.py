"""A trainer callback for the tests of `allennlp seeds` (imported by its runs with `--include-package`)."""

import os
import signal
from pathlib import Path

from allennlp.training.callbacks import TrainerCallback


@TrainerCallback.register("test_kill_once")
class KillOnce(TrainerCallback):
    """SIGKILLs the run whose serialization directory is named `run` at the end of epoch `epoch` (before that epoch's
    checkpoint), once: `marker` says it happened."""

    def __init__(self, serialization_dir: str, run: str, epoch: int, marker: str) -> None:
        super().__init__(serialization_dir)
        self.run, self.epoch, self.marker = run, epoch, marker

    def on_epoch(self, trainer, metrics, epoch, is_primary=True, **kwargs) -> None:
        named = os.path.basename(os.path.normpath(self.serialization_dir)) == self.run
        if named and epoch == self.epoch and not os.path.exists(self.marker):
            Path(self.marker).touch()
            os.kill(os.getpid(), signal.SIGKILL)
