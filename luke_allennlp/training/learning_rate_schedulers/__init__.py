from luke_allennlp.training.learning_rate_schedulers.linear_with_warmup_ratio import LinearWithWarmupRatio

__all__ = ["LinearWithWarmupRatio"]
