// Open Entity typing, variant "luke" (configs/lib/entity_typing.libsonnet).
// Set: MODEL_NAME (e.g. studio-ousia/luke-base, or a local checkpoint directory),
//      TRAIN_DATA_PATH (e.g. ../shared/data/open_entity/train.json; the crowd JSON-lines format works too),
//      VALIDATION_DATA_PATH (e.g. ../shared/data/open_entity/dev.json).
// Trains on the GPU where there is one (trainer.cuda_device "auto"; -1 is the CPU).
local typing = import '../lib/entity_typing.libsonnet';
typing.config(
  std.extVar('MODEL_NAME'),
  std.extVar('TRAIN_DATA_PATH'),
  std.extVar('VALIDATION_DATA_PATH'),
  variant='luke',
) + {
  // The paper's figure (LUKE-large; micro F1 on the Open Entity test set: test_f1 with test_data_path and
  // evaluate_on_test), read by `allennlp seeds`; training ignores this key (docs/reproduction.md).
  paper: {
    source: 'Yamada et al. (2020), LUKE-large: micro F1 on the Open Entity test set',
    metrics: { test_f1: 0.782 },
  },
}
