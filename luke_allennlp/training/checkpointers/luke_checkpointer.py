import logging
import os
import re
import time
from typing import Any, Iterable, Optional, Tuple, Union

import torch
import torch.distributed as dist
from allennlp.common.util import is_distributed
from allennlp.nn import util as nn_util
from allennlp.training.checkpointer import Checkpointer
from allennlp.training.trainer import Trainer, TrainerCheckpoint

from luke_allennlp.modeling.weights import WeightsError, load_weights
from luke_allennlp.resources.output import DiskFullError, disk_full

logger = logging.getLogger(__name__)

CHECKPOINT_FILE = re.compile(r"(model|training)_state_e\d+_b\d+(_w\d+)?\.th")


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
    except (OSError, RuntimeError) as error:  # torch reports a full disk as "unexpected pos", the OSError chained
        full = disk_full(error)
        if full is None:
            raise
        raise DiskFullError(full.errno, full.strerror, path) from error
    finally:
        if os.path.exists(temporary):
            os.remove(temporary)


@Checkpointer.register("luke_checkpointer")
class LukeCheckpointer(Checkpointer):
    """
    allennlp's `default` checkpointer with crash-safe files: each state file is written to a temporary name and
    renamed into place, and `--recover` takes the latest checkpoint whose two files load, falling back to an
    older one (with a warning naming what was skipped; the unreadable files renamed `*.damaged`) when the latest
    is incomplete or unreadable, e.g. left by a kill during saving or by a full disk. Where none loads, `--recover`
    stops at once (`RecoveryError`) instead of training from scratch. Checkpoints are loaded with
    `weights_only=True`.

    Under distributed training every process saves at the same steps (saving is a collective call): the
    decision is rank 0's and all follow. Counting batches, every process counts the same; for
    `save_every_num_seconds` (which allennlp's refuses under distributed training) rank 0's clock decides, and the
    `luke_gradient_descent` trainer passes its decision along with the one small all-reduce it may make per step
    (`agreed_time_is_up`); any other trainer costs a broadcast per step. The trainer is read through allennlp's
    public interfaces only: its `get_checkpoint_state()` and the position it gives `maybe_save_checkpoint`.

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
        super().__init__(
            serialization_dir,
            save_completed_epochs,
            None,
            save_every_num_batches,
            keep_most_recent_by_count,
            keep_most_recent_by_age,
        )
        self._save_every_num_seconds = save_every_num_seconds
        # rank 0's time decision for the next `maybe_save_checkpoint`, when the trainer has it already
        self.agreed_time_is_up: Optional[bool] = None

    @property
    def saves_by_time(self) -> bool:
        """Whether checkpoints are saved every N seconds (rank 0's clock decides: one all-reduce a step)."""
        return self._save_every_num_seconds is not None

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
        if not (
            (end_of_epoch and self._save_completed_epochs)
            or time_is_up
            or (every is not None and num_batches_in_epoch_completed - last >= every)
        ):
            return False
        self.save_checkpoint(trainer)
        # Every process counts the save, at the position the trainer gave, also one whose trainer gave no state to
        # save (allennlp's returned early on ranks >= 1, which then saved at every batch).
        self._last_save_num_epochs_completed = num_epochs_completed
        self._last_save_num_batches_in_epoch_completed = num_batches_in_epoch_completed
        return True

    def save_checkpoint(self, trainer: Trainer) -> None:
        """The trainer's `get_checkpoint_state()` (allennlp's `Trainer` interface), its two files written atomically,
        the model state first; old checkpoints pruned."""
        if self._serialization_dir is None:
            return
        state = trainer.get_checkpoint_state()  # a collective call under distributed training
        self._last_save_time = time.time()  # (every process: rank 0's clock decides only where it is asked)
        if state is None:  # a non-primary process of distributed training with an unsharded model
            return
        point = (state.trainer_state["epochs_completed"], state.trainer_state["batches_in_epoch_completed"])
        self._last_save_num_epochs_completed, self._last_save_num_batches_in_epoch_completed = point
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
        """
        Under distributed training, rank 0's checkpoint (read from its serialization directory, then broadcast): the
        other processes may run on nodes whose directories hold no checkpoints, since only rank 0 writes them.
        """
        if not is_distributed():
            return self._load_own_checkpoint()
        found: Any = None
        failure: Optional[Exception] = None
        if self._is_primary:
            try:
                found = self._load_own_checkpoint()
            except Exception as e:  # the others are told, so that they stop too rather than wait
                failure, found = e, RecoveryError(f"rank 0 could not recover: {e}")
        box = [found]
        dist.broadcast_object_list(box, 0)
        if failure is not None:
            raise failure
        if isinstance(box[0], RecoveryError):
            raise RecoveryError(str(box[0]))
        return box[0]

    def _load_own_checkpoint(self) -> Optional[TrainerCheckpoint]:
        """
        The newest checkpoint whose two files load. Newer ones that do not are renamed `*.damaged` (kept, but out
        of the way of pruning and of `best.th`) with a warning. Where checkpoint files exist but no pair loads, a
        `RecoveryError` stops `--recover` before anything is changed: it never trains from scratch in a directory
        that holds checkpoints.
        """
        device = nn_util.device_mapping(-1)
        damaged = []
        for point in sorted(self._find_all_checkpoints(), reverse=True):
            model_path, training_path = self._model_state_path(*point), self._training_state_path(*point)
            try:
                model_state, training_state = load_weights(model_path, device), load_weights(training_path, device)
            except WeightsError as e:  # truncated, corrupted or not a checkpoint at all
                cause = e.__cause__ or e
                logger.warning(
                    "Skipping the unreadable checkpoint %s / %s (%s: %s)",
                    model_path,
                    training_path,
                    type(cause).__name__,
                    cause,
                )
                damaged.append((point, e))
                continue
            self._set_aside(point for point, _ in damaged)
            return TrainerCheckpoint(model_state, training_state)
        directory = self._serialization_dir
        files = (
            sorted(n for n in os.listdir(directory) if CHECKPOINT_FILE.fullmatch(n))
            if directory and os.path.isdir(directory)
            else []
        )
        if damaged:
            first = damaged[0][1]
            more = f" (and {len(damaged) - 1} older checkpoint(s) likewise)" if len(damaged) > 1 else ""
            raise RecoveryError(
                f"{self._serialization_dir}: no checkpoint to recover from: {os.path.basename(first.path)} "
                f"{first.reason}{more}. Nothing was changed; restore the files, or train into a new directory"
            )
        if files:
            raise RecoveryError(
                f"{self._serialization_dir}: no complete checkpoint to recover from (a model state and its training "
                f"state): only {', '.join(files)}. Nothing was changed; restore the missing files, or train into a "
                "new directory"
            )
        return None

    def _set_aside(self, points: Iterable[Tuple[int, int]]) -> None:
        """Renames the files of unreadable checkpoints newer than the one recovered to `*.damaged` (primary only)."""
        for point in points:
            for path in (self._model_state_path(*point), self._training_state_path(*point)):
                if self._is_primary and os.path.exists(path):
                    os.replace(path, path + ".damaged")
                    logger.warning("Renamed the unreadable checkpoint file %s to %s.damaged", path, path)


class RecoveryError(RuntimeError):
    """`--recover` in a directory whose checkpoints are all unreadable or incomplete."""

    user_error = True  # the `allennlp` command prints it as one line
