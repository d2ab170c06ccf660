// Relation classification on SEMEVAL data, variant "roberta" (configs/lib/relation_classification.libsonnet).
// Set: MODEL_NAME (e.g. studio-ousia/luke-base, or a local checkpoint directory),
//      TRAIN_DATA_PATH (e.g. ../shared/data/semeval2010_task8/TRAIN_FILE.TXT),
//      VALIDATION_DATA_PATH (e.g. ../shared/data/semeval2010_task8/TEST_FILE_FULL.TXT).
// Trains on the GPU where there is one (trainer.cuda_device "auto"; -1 is the CPU).
local rc = import '../lib/relation_classification.libsonnet';
rc.config(
  std.extVar('MODEL_NAME'),
  std.extVar('TRAIN_DATA_PATH'),
  std.extVar('VALIDATION_DATA_PATH'),
  validation_metric='+macro_f1',
  variant='roberta',
)
