"""
The validation loop: allennlp's, over every process's every batch (evened as in training, so that every process
makes the same collective calls; none in a process that has none), with the loss kept on the device and progress
reports every `metrics_every_num_batches` batches from this process's metric counts.
"""

import logging
from typing import Any, Dict, Iterable, List, Optional, Tuple

import torch
import torch.distributed as dist
from allennlp.common import Tqdm
from allennlp.data.data_loaders.data_loader import TensorDict
from allennlp.training import util as training_util

from luke_allennlp.training.trainers.allennlp_state import AllenNlpTrainerState
from luke_allennlp.training.trainers.device_prefetch import prefetched
from luke_allennlp.training.trainers.even_batches import evened, sync_buffers_before_uneven_validation
from luke_allennlp.training.trainers.step_metrics import local_progress_metrics

logger = logging.getLogger(__name__)


def validation_loss(
    trainer: Any, state: AllenNlpTrainerState, lengths: Optional[List[int]], epoch: int
) -> Tuple[float, Optional[float], int]:
    """(loss sum, regularization loss sum or None, batches with a loss) of this process, as allennlp's
    `_validation_loss` returns them; `lengths`: every process's number of batches once evened (None where the loader
    has no length, in one process)."""
    loader = state.validation_data_loader
    metrics: Dict[str, Any] = {}
    logger.info("Validating")
    if lengths is not None and 0 in lengths:
        sync_buffers_before_uneven_validation(state.pytorch_model)
    state.pytorch_model.eval()
    if state.moving_average is not None:  # the averaged weights, for validation only
        state.moving_average.assign_average_value()
    try:
        batches: Iterable[TensorDict] = loader
        if lengths is not None:
            batches = evened(loader, len(loader), lengths[dist.get_rank() if state.distributed else 0])
        batches = prefetched(batches, trainer.cuda_device)
        progress = Tqdm.tqdm(batches, total=max(lengths) if lengths else None) if state.primary else batches
        device_losses: Optional[torch.Tensor] = None  # (loss, regularization loss) sums
        count = 0
        for batch in progress:
            outputs = trainer.batch_outputs(batch, for_training=False)
            loss = outputs.get("loss")
            if loss is not None:  # (a model need not compute a validation loss; batches count only with one)
                count += 1
                reg_loss = outputs.get("reg_loss")
                reg_loss = reg_loss.detach() if reg_loss is not None else torch.zeros_like(loss)
                both = torch.stack([loss.detach().double(), reg_loss.double()])
                device_losses = both if device_losses is None else device_losses + both
            if count and count % trainer.metrics_every_num_batches == 0:
                val_loss, val_reg_loss = device_losses.tolist()  # type: ignore[union-attr]
                metrics = local_progress_metrics(trainer.model, val_loss, None, count)
                if state.primary:
                    progress.set_description(training_util.description_from_metrics(metrics), refresh=False)
            for callback in state.callbacks:
                callback.on_batch(
                    trainer, [batch], [outputs], metrics, epoch, count, is_training=False, is_primary=state.primary
                )
        val_loss, val_reg_loss = device_losses.tolist() if device_losses is not None else (0.0, 0.0)
        has_reg = trainer.model.get_regularization_penalty() is not None
        return val_loss, (val_reg_loss if has_reg else None), count
    finally:
        if state.moving_average is not None:
            state.moving_average.restore()
