"""
Trainer callbacks: the trackers `tensorboard` (allennlp's name, this project's callback), `mlflow` and `wandb`
(allennlp's name, this project's callback), which write the same scalars every optimizer step (`log_writer`), and the
trainer's quiet console default (`console_logger`).
"""
