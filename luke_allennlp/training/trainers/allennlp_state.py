"""
The one place where the trainer reads or writes the private state of allennlp's `GradientDescentTrainer` and its data
loader. `LukeGradientDescentTrainer` replaces three private methods of it (`_train_epoch`, `_validation_loss`,
`_maybe_restore_checkpoint`, which allennlp's `_try_train` calls) and the replacements work on the attributes below,
each named once here, as allennlp `ALLENNLP_VERSION` defines them: an allennlp that renames one fails on that name,
here, rather than somewhere in the training loop.
"""

from typing import Any, Dict, Iterator, Optional

# Read from allennlp/training/gradient_descent_trainer.py and data_loaders/multiprocess_data_loader.py of:
ALLENNLP_VERSION = "2.10.1"

# Each attribute is read as `state.<name without the underscore>`. Set by allennlp's constructor, read only here:
CONSTRUCTED = (
    "_primary _distributed _serialization_dir _num_epochs _num_gradient_accumulation_steps _grad_norm "
    "_scaler _callbacks _checkpointer _metric_tracker _learning_rate_scheduler _momentum_scheduler "
    "_moving_average _validation_data_loader _ddp_wrapped_model _pytorch_model"
).split()
# The training position, which the epoch loop advances and a checkpoint restores:
POSITION = (
    "_epochs_completed _batches_in_epoch_completed _total_batches_completed _start_after_epochs_completed "
    "_start_after_batches_in_epoch_completed _best_model_filename"
).split()
_PRIVATE = {name[1:]: name for name in CONSTRUCTED + POSITION}


class AllenNlpTrainerState:
    """
    A view of a `GradientDescentTrainer`'s private attributes under public names: `state.scaler` reads and writes
    the trainer's `_scaler`. `scaler` is fp16's `GradScaler` or None, `ddp_wrapped_model` allennlp's
    `DdpWrappedModel` or None, `pytorch_model` the model the steps call (torch's DDP wrapper, or the model).
    """

    def __init__(self, trainer: Any) -> None:
        object.__setattr__(self, "trainer", trainer)

    def __getattr__(self, name: str) -> Any:
        if name not in _PRIVATE:
            raise AttributeError(f"{type(self).__name__} names no attribute {name!r} of allennlp's trainer")
        return getattr(self.trainer, _PRIVATE[name])

    def __setattr__(self, name: str, value: Any) -> None:
        if name not in _PRIVATE:
            raise AttributeError(f"{type(self).__name__} names no attribute {name!r} of allennlp's trainer")
        setattr(self.trainer, _PRIVATE[name], value)

    def restore(self, model_state: Dict[str, Any], training_state: Dict[str, Any], optimizer: Any) -> None:
        """allennlp's restore from a checkpoint: the model, metric tracker, optimizer, callbacks, schedulers, moving
        average, fp16's gradient scaler, and the training position."""
        (self.ddp_wrapped_model if self.distributed else self.pytorch_model).load_state_dict(model_state)
        self.metric_tracker.load_state_dict(training_state["metric_tracker"])
        optimizer.load_state_dict(training_state["optimizer"])
        for callback, callback_state in zip(self.callbacks, training_state["callbacks"]):
            callback.load_state_dict(callback_state)
        for name in ("learning_rate_scheduler", "momentum_scheduler", "moving_average"):
            if getattr(self, name) is not None:
                getattr(self, name).load_state_dict(training_state[name])
        if self.scaler is not None and training_state.get("grad_scaler"):
            self.scaler.load_state_dict(training_state["grad_scaler"])
        self.start_after_epochs_completed = training_state["epochs_completed"]
        self.start_after_batches_in_epoch_completed = training_state["batches_in_epoch_completed"]
        self.best_model_filename = training_state["best_model_filename"]

    def optimizer_step(self, optimizer: Any) -> None:
        """allennlp's order after the gradients are clipped: schedulers stepped to the next step, the optimizer
        stepped (through fp16's scaler, which it updates), the moving average applied; the position advanced."""
        step = self.total_batches_completed + 1
        for scheduler in (self.learning_rate_scheduler, self.momentum_scheduler):
            if scheduler is not None:
                scheduler.step_batch(step)
        if self.scaler is not None:
            self.scaler.step(optimizer)
            self.scaler.update()
        else:
            optimizer.step()
        if self.moving_average is not None:
            self.moving_average.apply(step)
        self.batches_in_epoch_completed += 1
        self.total_batches_completed = step

    @staticmethod
    def attributes() -> Iterator[str]:
        """The private attribute names this view reads and writes."""
        return iter(_PRIVATE.values())


def take_batch_generator(loader: Any) -> Optional[Iterator]:
    """The batch generator a `MultiProcessDataLoader` keeps between epochs with `batches_per_epoch` (its worker
    processes live as long as it does), detached from the loader; None for other loaders."""
    generator = getattr(loader, "_batch_generator", None)
    if generator is not None:
        loader._batch_generator = None
    return generator
