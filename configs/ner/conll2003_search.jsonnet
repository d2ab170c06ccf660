// A hyperparameter search space for configs/ner/conll2003.jsonnet, for `allennlp tune` (Optuna):
//   allennlp tune configs/ner/conll2003.jsonnet configs/ner/conll2003_search.jsonnet -s output/ner-search --trials 30
// with the config's variables set (MODEL_NAME, TRAIN_DATA_PATH, VALIDATION_DATA_PATH). Each parameter is a setting of
// the config as -o names it; the search space's schema: luke_allennlp/experiments/search_space.py, docs/training.md.
{
  // Optimised: the validation span F1 (each epoch's validation_f1 reported for pruning; a trial's value is its
  // best_validation_f1), higher is better. (The config's trainer.validation_metric, "+f1", would be the default.)
  metric: 'f1',
  direction: 'maximize',
  parameters: {
    // Around the paper's 1e-5 (Table 12), on a log scale.
    'trainer.optimizer.lr': { type: 'float', low: 5e-6, high: 5e-5, log: true },
    'data_loader.batch_sampler.batch_size': { type: 'categorical', choices: [8, 16, 32] },
    'trainer.learning_rate_scheduler.warmup_ratio': { type: 'float', low: 0.0, high: 0.2, step: 0.02 },
    'model.dropout': { type: 'float', low: 0.0, high: 0.3, step: 0.05 },
    'trainer.num_epochs': { type: 'int', low: 3, high: 6 },
  },
  // TPE, each trial seeded with 13 + its number (reproducible, and different in each process of a shared study).
  sampler: { type: 'tpe', seed: 13 },
  // A trial whose validation F1 after an epoch is below the median of the earlier trials' at that epoch stops there;
  // not before 5 trials have finished, nor in the first epoch (warm-up makes it noisy).
  pruner: { type: 'median', n_startup_trials: 5, n_warmup_steps: 1 },
}
