import logging
import os
import time
from typing import Any, Optional

import torch
from allennlp.nn import util as nn_util
from allennlp.training.checkpointer import Checkpointer
from allennlp.training.trainer import Trainer, TrainerCheckpoint

logger = logging.getLogger(__name__)


def save_atomically(obj: Any, path: str) -> None:
    """`torch.save` to a temporary file in the same directory, flushed to disk, then renamed over `path`: a
    process killed while saving leaves the previous file (or none), never a truncated one."""
    temporary = f"{path}.tmp-{os.getpid()}"
    try:
        with open(temporary, "wb") as f:
            torch.save(obj, f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(temporary, path)
    finally:
        if os.path.exists(temporary):
            os.remove(temporary)


@Checkpointer.register("luke_checkpointer")
class LukeCheckpointer(Checkpointer):
    """
    allennlp's `default` checkpointer with crash-safe files: each state file is written to a temporary name and
    renamed into place, and `--recover` takes the latest checkpoint whose two files load, falling back to an
    older one (with a warning naming what was skipped) when the latest is incomplete or unreadable, e.g. left by
    a kill during saving or by a full disk. Checkpoints are loaded with `weights_only=True`.

    Registered as a `Checkpointer` with name "luke_checkpointer"; the `luke_gradient_descent` trainer's default.
    The parameters are those of allennlp's `Checkpointer`.
    """

    def save_checkpoint(self, trainer: Trainer) -> None:
        if self._serialization_dir is None:
            return
        state = trainer.get_checkpoint_state()
        if state is None:  # a non-primary process of distributed training with an unsharded model
            return
        point = (state.trainer_state["epochs_completed"], state.trainer_state["batches_in_epoch_completed"])
        # The training state last: a checkpoint counts once both files exist (see `_find_all_checkpoints`).
        save_atomically(state.model_state, self._model_state_path(*point))
        save_atomically(state.trainer_state, self._training_state_path(*point))
        self._last_save_time = time.time()
        self._last_save_num_epochs_completed, self._last_save_num_batches_in_epoch_completed = point
        self._prune()

    def _prune(self) -> None:
        """Removes old checkpoints as `keep_most_recent_by_count` / `keep_most_recent_by_age` say (primary only)."""
        if not self._is_primary or (self._keep_most_recent_by_count is None and self._keep_most_recent_by_age is None):
            return
        checkpoints = sorted(self._find_all_checkpoints(), reverse=True)
        keep = (
            set(checkpoints[: self._keep_most_recent_by_count])
            if self._keep_most_recent_by_count is not None
            else set()
        )
        if self._keep_most_recent_by_age is not None:
            now = time.time()
            for point in checkpoints:
                paths = [self._model_state_path(*point), self._training_state_path(*point)]
                if now - max(os.path.getmtime(p) for p in paths) <= self._keep_most_recent_by_age:
                    keep.add(point)
        for point in checkpoints:
            if point not in keep:
                self._remove_checkpoint(*point)

    def _find_all_checkpoints(self):
        """Checkpoints with both files present (a kill between the two writes leaves the model state alone)."""
        return {point for point in super()._find_all_checkpoints() if os.path.isfile(self._training_state_path(*point))}

    def load_checkpoint(self) -> Optional[TrainerCheckpoint]:
        for point in sorted(self._find_all_checkpoints(), reverse=True):
            model_path, training_path = self._model_state_path(*point), self._training_state_path(*point)
            try:
                model_state = torch.load(model_path, map_location=nn_util.device_mapping(-1), weights_only=True)
                training_state = torch.load(training_path, map_location=nn_util.device_mapping(-1), weights_only=True)
            except Exception as e:  # truncated, corrupted or not a checkpoint at all
                logger.warning(
                    "Skipping the unreadable checkpoint %s / %s (%s: %s)",
                    model_path,
                    training_path,
                    type(e).__name__,
                    e,
                )
                continue
            return TrainerCheckpoint(model_state, training_state)
        return None
