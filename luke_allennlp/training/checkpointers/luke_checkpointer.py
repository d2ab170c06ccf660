import logging
import os
import time
from typing import Any, Optional, Union

import torch
import torch.distributed as dist
from allennlp.common.util import is_distributed
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

    Under distributed training every process saves at the same steps (saving is a collective call): the
    decision is rank 0's and all follow. Counting batches, every process counts the same; for
    `save_every_num_seconds` (which allennlp's refuses under distributed training) rank 0's clock decides, and the
    `luke_gradient_descent` trainer passes its decision along with the one small all-reduce it may make per step
    (`agreed_time_is_up`); any other trainer costs a broadcast per step.

    Registered as a `Checkpointer` with name "luke_checkpointer"; the `luke_gradient_descent` trainer's default.
    The parameters are those of allennlp's `Checkpointer`.
    """

    def __init__(
        self,
        serialization_dir: Union[str, os.PathLike],
        save_completed_epochs: bool = True,
        save_every_num_seconds: Optional[float] = None,
        save_every_num_batches: Optional[int] = None,
        keep_most_recent_by_count: Optional[int] = 2,
        keep_most_recent_by_age: Optional[int] = None,
    ) -> None:
        super().__init__(serialization_dir, save_completed_epochs, None, save_every_num_batches,
                         keep_most_recent_by_count, keep_most_recent_by_age)  # fmt: skip
        self._save_every_num_seconds = save_every_num_seconds
        # rank 0's time decision for the next `maybe_save_checkpoint`, when the trainer has it already
        self.agreed_time_is_up: Optional[bool] = None

    def time_is_up(self) -> bool:
        """Whether `save_every_num_seconds` have passed since the last save, by this process's clock."""
        return self._save_every_num_seconds is not None and (
            time.time() - self._last_save_time >= self._save_every_num_seconds
        )

    def _agreed_time_is_up(self) -> bool:
        agreed, self.agreed_time_is_up = self.agreed_time_is_up, None
        if self._save_every_num_seconds is None:
            return False
        if not is_distributed():
            return self.time_is_up()
        if agreed is None:  # rank 0 tells the others
            flag = torch.tensor([int(self.time_is_up())])
            if dist.get_backend() == "nccl":
                flag = flag.cuda()
            dist.broadcast(flag, 0)
            agreed = bool(flag.item())
        return agreed

    def maybe_save_checkpoint(
        self, trainer: Trainer, num_epochs_completed: int, num_batches_in_epoch_completed: int
    ) -> bool:
        """allennlp's decision (at the end of an epoch, every N batches, every N seconds), the same in every process."""
        time_is_up = self._agreed_time_is_up()
        end_of_epoch = num_batches_in_epoch_completed == 0
        last = (
            self._last_save_num_batches_in_epoch_completed
            if num_epochs_completed == self._last_save_num_epochs_completed
            else 0
        )
        every = self._save_every_num_batches
        if (
            (end_of_epoch and self._save_completed_epochs)
            or time_is_up
            or (every is not None and num_batches_in_epoch_completed - last >= every)
        ):
            self.save_checkpoint(trainer)
            return True
        return False

    def save_checkpoint(self, trainer: Trainer) -> None:
        if self._serialization_dir is None:
            return
        state = trainer.get_checkpoint_state()  # a collective call under distributed training
        # Every process counts the save (allennlp's returned early on ranks >= 1: they then saved at every batch).
        self._last_save_time = time.time()
        self._last_save_num_epochs_completed = trainer._epochs_completed  # type: ignore[attr-defined]
        self._last_save_num_batches_in_epoch_completed = trainer._batches_in_epoch_completed  # type: ignore
        if state is None:  # a non-primary process of distributed training with an unsharded model
            return
        point = (state.trainer_state["epochs_completed"], state.trainer_state["batches_in_epoch_completed"])
        # The training state last: a checkpoint counts once both files exist (see `_find_all_checkpoints`).
        save_atomically(state.model_state, self._model_state_path(*point))
        save_atomically(state.trainer_state, self._training_state_path(*point))
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
