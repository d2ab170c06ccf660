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
) + {
  // The paper's figure (LUKE-large; micro F1 on the TACRED test set: test_f1 with test_data_path and
  // evaluate_on_test), read by `allennlp seeds`; training ignores this key (docs/reproduction.md).
  paper: {
    source: 'Yamada et al. (2020), LUKE-large: micro F1 on the TACRED test set',
    metrics: { test_f1: 0.727 },
  },
}
