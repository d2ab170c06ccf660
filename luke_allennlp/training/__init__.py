"""Training components (importing this package registers them): the `luke_gradient_descent` trainer, the
`luke_checkpointer`, the `luke_adamw` optimizer, the `linear_with_warmup_ratio` schedule, and the metrics."""

from luke_allennlp.training.checkpointers.luke_checkpointer import LukeCheckpointer
from luke_allennlp.training.learning_rate_schedulers import LinearWithWarmupRatio
from luke_allennlp.training.optimizers.luke_adamw import LukeAdamW
from luke_allennlp.training.trainers.luke_gradient_descent import LukeGradientDescentTrainer

__all__ = ["LinearWithWarmupRatio", "LukeAdamW", "LukeCheckpointer", "LukeGradientDescentTrainer"]
