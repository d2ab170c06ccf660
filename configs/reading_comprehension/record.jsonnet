// ReCoRD cloze-style QA, variant "luke" (configs/lib/reading_comprehension.libsonnet).
// Set: MODEL_NAME (e.g. studio-ousia/luke-base, or a local checkpoint directory),
//      TRAIN_DATA_PATH (the official ReCoRD train.json), VALIDATION_DATA_PATH (the official dev.json;
//      e.g. ../shared/data/record/record_sample.json for a smoke run).
// Trains on the GPU where there is one (trainer.cuda_device "auto"; -1 is the CPU).
local rc = import '../lib/reading_comprehension.libsonnet';
rc.record(
  std.extVar('MODEL_NAME'),
  std.extVar('TRAIN_DATA_PATH'),
  std.extVar('VALIDATION_DATA_PATH'),
  variant='luke',
) + {
  // The paper's figures (LUKE-large; EM/F1 on the ReCoRD test set, hidden: the leaderboard's), read by
  // `allennlp seeds`; training ignores this key (docs/reproduction.md).
  paper: {
    source: 'Yamada et al. (2020), LUKE-large: ReCoRD test EM/F1 90.6/91.2',
    metrics: { test_em: 0.906, test_f1: 0.912 },
  },
}
