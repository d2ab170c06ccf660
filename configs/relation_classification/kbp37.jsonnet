// Relation classification on KBP37 (Zhang and Wang 2015), variant "luke" (configs/lib/relation_classification.libsonnet).
// Set: MODEL_NAME (e.g. studio-ousia/luke-base, or a local checkpoint directory),
//      TRAIN_DATA_PATH (e.g. kbp37/train.txt), VALIDATION_DATA_PATH (e.g. kbp37/dev.txt), files as distributed.
// Models are selected by `macro_f1`: F1 per relation type (both directions pooled; a prediction is right only
// with its direction), averaged over the types, `no_relation` excluded, the score KBP37 results report.
// Examples with an empty mention (`<e1> </e1>`) are skipped and counted (the reader's `skipped_empty_mentions`).
// Trains on the GPU where there is one (trainer.cuda_device "auto"; -1 is the CPU).
local rc = import '../lib/relation_classification.libsonnet';
rc.config(
  std.extVar('MODEL_NAME'),
  std.extVar('TRAIN_DATA_PATH'),
  std.extVar('VALIDATION_DATA_PATH'),
  validation_metric='+macro_f1',
  variant='luke',
)
