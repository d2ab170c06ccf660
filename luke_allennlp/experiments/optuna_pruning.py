"""
The trainer callback `luke_optuna_pruning`: after each epoch, reports the epoch's validation metric to an Optuna
trial, and stops the training where the trial's pruner says so.

`allennlp tune` adds it to each trial's config; it names the trial by its study (storage URL and name) and number,
so that the training runs in a process of its own (the `allennlp train` of the trial) and writes straight to the
shared study. A pruned trial records the epoch in the trial (`user_attrs["pruned_after_epoch"]`) and stops the
command with one line (`TrialPrunedError`); the trial is then told PRUNED by `tune`. Under distributed training the
global primary reports and asks, and every process stops alike.

Optuna is imported when training starts (the `tune` extra).
"""

from typing import Any, Dict, Optional

from allennlp.training.callbacks import TrainerCallback

PRUNED_AFTER_EPOCH = "pruned_after_epoch"


class TrialPrunedError(Exception):
    """Training stopped because the trial's pruner stopped it (the `allennlp` command prints it as one line)."""

    user_error = True


@TrainerCallback.register("luke_optuna_pruning")
class LukeOptunaPruning(TrainerCallback):
    """
    Reports `validation_<metric>` of each epoch to the trial `trial_number` of the study `study_name` in `storage`,
    and stops the training when `pruner` (a spec: `{"type": "median", ...}`, as in a search space) prunes it.

    # Parameters

    storage : `str`
        The study's storage URL (`sqlite:///DIR/study.db`, any database URL Optuna takes).
    study_name : `str`
    trial_number : `int`
    metric : `str`
        The validation metric, without `validation_` (e.g. `f1`).
    pruner : `Dict[str, Any]`, optional (default = `{"type": "median"}`)
    """

    def __init__(
        self,
        serialization_dir: str,
        storage: str,
        study_name: str,
        trial_number: int,
        metric: str,
        pruner: Optional[Dict[str, Any]] = None,
    ) -> None:
        super().__init__(serialization_dir)
        self.storage, self.study_name, self.trial_number = storage, study_name, trial_number
        self.metric = metric
        self.pruner = dict(pruner or {"type": "median"})
        self._trial: Any = None

    def _get_trial(self) -> Any:
        if self._trial is None:
            from luke_allennlp.experiments.search_space import make_pruner
            from luke_allennlp.experiments.storage import open_study, optuna_module

            study = open_study(self.storage, self.study_name, make_pruner(self.pruner))
            trial_id = study._storage.get_trial_id_from_study_id_trial_number(study._study_id, self.trial_number)
            self._trial = optuna_module().trial.Trial(study, trial_id)
        return self._trial

    def on_start(self, trainer: Any, is_primary: bool = True, **kwargs: Any) -> None:
        if is_primary:
            self._get_trial()  # (a study that cannot be opened stops the run before its first epoch)

    def on_epoch(
        self, trainer: Any, metrics: Dict[str, Any], epoch: int, is_primary: bool = True, **kwargs: Any
    ) -> None:
        pruned = False
        key = f"validation_{self.metric}"
        if is_primary:
            if key not in metrics:
                raise ValueError(
                    f"luke_optuna_pruning: the epoch's metrics have no {key} (validation data, and a model metric "
                    f"named {self.metric}, are needed; the metrics: {', '.join(sorted(metrics))})"
                )
            trial = self._get_trial()
            trial.report(float(metrics[key]), step=epoch)
            pruned = trial.should_prune()
            if pruned:
                trial.set_user_attr(PRUNED_AFTER_EPOCH, epoch)
        pruned = _agree(pruned)
        if pruned:
            raise TrialPrunedError(
                f"trial {self.trial_number} pruned after epoch {epoch}"
                + (f" ({key} {metrics[key]:.4g})" if key in metrics else "")
            )


def _agree(decision: bool) -> bool:
    """The global primary's decision, in every process of a distributed run."""
    import torch.distributed as dist

    if not (dist.is_available() and dist.is_initialized()) or dist.get_world_size() == 1:
        return decision
    shared = [decision]
    dist.broadcast_object_list(shared, src=0)
    return bool(shared[0])
