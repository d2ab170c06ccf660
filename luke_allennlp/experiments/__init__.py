"""
Experiments over many training runs, for the `allennlp seeds` and `allennlp tune` commands:

- `runs`: `allennlp train` as a child process (its own log, a GPU of its own or a share of the CPU's threads);
- `seeds`: one config over several seeds (every seed the config has, varied), resumable;
- `summary`: the spread of the runs' final metrics (mean, sample standard deviation, ...) beside the paper's figure,
  as `summary.json` and `summary.md`;
- `search_space`: a hyperparameter search space written in Jsonnet, sampled by an Optuna trial;
- `study`: an Optuna study of trials that train the config, its best trial as a config, its plots;
- `optuna_pruning`: the trainer callback `luke_optuna_pruning` that reports each epoch's validation metric to a
  trial and stops a pruned one.

Optuna and matplotlib are the `tune` extra (`pip install 'luke_allennlp[tune]'`), imported only where used.
"""
