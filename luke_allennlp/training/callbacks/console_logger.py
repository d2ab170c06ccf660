"""
The trainer's default callbacks, with a quiet console: allennlp's `console_logger` (the table of each epoch's
metrics) without its dump of the first training and validation batches' raw tensors ("Batch inputs": some 40 and
180 log lines for a LUKE task, printed in the middle of the progress bar). Asked for with
`{"type": "console_logger", "should_log_inputs": true}` among the trainer's callbacks, they are printed as allennlp
prints them.
"""

from typing import List

from allennlp.training import gradient_descent_trainer
from allennlp.training.callbacks import ConsoleLoggerCallback, TrainerCallback


def default_callbacks(serialization_dir: str, given: List[TrainerCallback]) -> List[TrainerCallback]:
    """allennlp's `DEFAULT_CALLBACKS` that `given` lacks (the trainer adds them after `given`), the console logger
    without the batch inputs."""
    added: List[TrainerCallback] = []
    for kind in gradient_descent_trainer.DEFAULT_CALLBACKS:
        if any(type(callback) is kind for callback in given):
            continue
        if kind is ConsoleLoggerCallback:
            added.append(ConsoleLoggerCallback(serialization_dir, should_log_inputs=False))
        else:
            added.append(kind(serialization_dir))
    return added
