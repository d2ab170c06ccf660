// SQuAD 1.1 extractive QA, variant "luke" without entity inputs (Table 5's ablation) (configs/lib/reading_comprehension.libsonnet).
// Set: MODEL_NAME (e.g. studio-ousia/luke-base, or a local LUKE checkpoint directory),
//      TRAIN_DATA_PATH (the official train-v1.1.json), VALIDATION_DATA_PATH (the official dev-v1.1.json,
//      e.g. ../shared/data/squad1.1/dev-v1.1.json).
// Trains on the GPU where there is one (trainer.cuda_device "auto"; -1 is the CPU).
local rc = import '../lib/reading_comprehension.libsonnet';
rc.squad(
  std.extVar('MODEL_NAME'),
  std.extVar('TRAIN_DATA_PATH'),
  std.extVar('VALIDATION_DATA_PATH'),
  variant='luke',
)
