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
)
