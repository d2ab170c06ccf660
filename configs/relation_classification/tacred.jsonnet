// Relation classification on TACRED data, variant "luke" (configs/lib/relation_classification.libsonnet).
// Set: MODEL_NAME (e.g. studio-ousia/luke-base, or a local checkpoint directory),
//      TRAIN_DATA_PATH (e.g. ../shared/data/tacred_sample/train.json (the full TACRED is licensed)),
//      VALIDATION_DATA_PATH (e.g. ../shared/data/tacred_sample/dev.json).
// Trains on the GPU where there is one (trainer.cuda_device "auto"; -1 is the CPU).
local rc = import '../lib/relation_classification.libsonnet';
rc.config(
  std.extVar('MODEL_NAME'),
  std.extVar('TRAIN_DATA_PATH'),
  std.extVar('VALIDATION_DATA_PATH'),
  variant='luke',
)
