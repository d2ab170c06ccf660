"""
The `wandb` callback: allennlp's Weights & Biases callback (its registered name, its parameters), writing what the
other trackers write.
"""

import os
import sys
from typing import Any, Dict, List, Optional, Tuple

from allennlp.common import Params
from allennlp.training.callbacks.callback import TrainerCallback
from allennlp.training.callbacks.log_writer import LogWriterCallback
from allennlp.training.callbacks.wandb import WandBCallback as AllenNlpWandBCallback

from luke_allennlp.resources.extras import require
from luke_allennlp.training.callbacks.log_writer import StepLogWriter


@TrainerCallback.register("wandb", exist_ok=True)
class WandBCallback(StepLogWriter, AllenNlpWandBCallback):
    """
    allennlp's `wandb` callback (`wandb.init` in the primary process only, the config as the run's config, the files
    of `files_to_save`, the run resumed with `--recover`), logging what `luke_allennlp.training.callbacks.log_writer`
    says (the loss and each parameter group's learning rate every optimizer step, with explicit steps) instead of
    allennlp's metrics every 100 batches and learning rates per parameter. `WANDB_MODE=offline` writes the run under
    `wandb/` of the serialization directory (`wandb sync` uploads it later); the run ends with exit code 1 when
    training fails. W&B drops what a resumed run logs at steps it already has (those from the checkpoint to the
    interruption).

    Registered as a `TrainerCallback` with name "wandb" (replacing allennlp's). The parameters are allennlp's, with
    the defaults of the other trackers; `watch_model` is off by default (its hooks on every parameter).

    # Parameters

    summary_interval : `int`, optional (default = `1`)
    distribution_interval, batch_size_interval : `int`, optional (default = `None`)
    should_log_parameter_statistics : `bool`, optional (default = `False`)
    should_log_learning_rate : `bool`, optional (default = `True`)
        As `tensorboard`'s.
    project, entity, group, name, notes : `str`, optional (default = `None`)
    tags : `List[str]`, optional (default = `None`)
        The run's, as `wandb.init` takes them.
    watch_model : `bool`, optional (default = `False`)
        `wandb.watch` the model (gradient histograms every 1000 steps, through hooks on every parameter).
    files_to_save : `Tuple[str, ...]`, optional (default = `("config.json", "out.log")`)
        Files of the serialization directory saved with the run.
    wandb_kwargs : `Dict[str, Any]`, optional (default = `None`)
        More arguments of `wandb.init`.
    """

    def __init__(
        self,
        serialization_dir: str,
        summary_interval: int = 1,
        distribution_interval: Optional[int] = None,
        batch_size_interval: Optional[int] = None,
        should_log_parameter_statistics: bool = False,
        should_log_learning_rate: bool = True,
        project: Optional[str] = None,
        entity: Optional[str] = None,
        group: Optional[str] = None,
        name: Optional[str] = None,
        notes: Optional[str] = None,
        tags: Optional[List[str]] = None,
        watch_model: bool = False,
        files_to_save: Tuple[str, ...] = ("config.json", "out.log"),
        wandb_kwargs: Optional[Dict[str, Any]] = None,
    ) -> None:
        require("wandb", "tracking", "the wandb callback")
        # allennlp's constructor, less its config read (the config is read when the run starts) and its warning
        # about WANDB_API_KEY (wandb says what it needs, and offline runs need nothing).
        self._init_writer(
            serialization_dir,
            summary_interval,
            should_log_learning_rate,
            should_log_parameter_statistics,
            distribution_interval,
            batch_size_interval,
        )
        self._watch_model = watch_model
        self._files_to_save = files_to_save
        self._run_id: Optional[str] = None
        self._wandb_kwargs: Dict[str, Any] = dict(
            dir=os.path.abspath(serialization_dir),
            project=project,
            entity=entity,
            group=group,
            name=name,
            notes=notes,
            tags=tags,
            **(wandb_kwargs or {}),
        )

    def on_start(self, trainer: Any, is_primary: bool = True, **kwargs: Any) -> None:
        """allennlp's, with wandb's own run id for a new run (allennlp's `wandb.util.generate_id` is gone)."""
        LogWriterCallback.on_start(self, trainer, is_primary=is_primary, **kwargs)
        if not is_primary:
            return
        import wandb

        self.wandb = wandb
        config = os.path.join(self.serialization_dir, "config.json")
        if "config" not in self._wandb_kwargs and os.path.exists(config):
            self._wandb_kwargs["config"] = Params.from_file(config).as_dict()
        # `_run_id`: None for a new run; with `--recover`, the checkpoint's (allennlp's `load_state_dict` resumes it)
        run = wandb.init(id=self._run_id, **self._wandb_kwargs)
        self._run_id = run.id  # kept in checkpoints (allennlp's `state_dict`)
        for path in self._files_to_save:
            wandb.save(os.path.join(self.serialization_dir, path), base_path=self.serialization_dir)
        if self._watch_model:
            wandb.watch(trainer.model)

    def write(self, scalars: Dict[str, float], step: int) -> None:
        if scalars:
            self.wandb.log(scalars, step=step)

    def close(self) -> None:
        LogWriterCallback.close(self)
        self.wandb.finish(exit_code=0 if sys.exc_info()[1] is None else 1)  # (on_end runs in the trainer's `finally`)
