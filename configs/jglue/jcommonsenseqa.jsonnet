// JCommonsenseQA (JGLUE): multiple choice over 5 choices, accuracy (configs/lib/jglue.libsonnet: lr 5e-5,
// batch 64, 4 epochs, 64 subwords per (question, choice), from JGLUE's fine-tuning README).
// Set: MODEL_NAME (e.g. studio-ousia/luke-japanese-base-lite, or a local checkpoint directory),
//      TRAIN_DATA_PATH (e.g. ../shared/data/jglue/jcommonsenseqa-v1.3/train-v1.3.json),
//      VALIDATION_DATA_PATH (e.g. ../shared/data/jglue/jcommonsenseqa-v1.3/valid-v1.3.json).
// Trains on the GPU where there is one (trainer.cuda_device "auto"; -1 is the CPU).
local jglue = import '../lib/jglue.libsonnet';
jglue.multiple_choice(
  std.extVar('MODEL_NAME'),
  std.extVar('TRAIN_DATA_PATH'),
  std.extVar('VALIDATION_DATA_PATH'),
  max_seq_length=64,
  batch_size=64,
  epochs=4,
)
