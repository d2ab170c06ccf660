// JSTS (JGLUE): sentence-pair regression, similarity 0-5, Pearson and Spearman over the whole split
// (configs/lib/jglue.libsonnet: lr 5e-5, batch 32, 4 epochs, 128 subwords, from JGLUE's fine-tuning README).
// Set: MODEL_NAME (e.g. studio-ousia/luke-japanese-base-lite, or a local checkpoint directory),
//      TRAIN_DATA_PATH (e.g. ../shared/data/jglue/jsts-v1.3/train-v1.3.json),
//      VALIDATION_DATA_PATH (e.g. ../shared/data/jglue/jsts-v1.3/valid-v1.3.json).
// Trains on the GPU where there is one (trainer.cuda_device "auto"; -1 is the CPU).
local jglue = import '../lib/jglue.libsonnet';
jglue.sentence_classification(
  std.extVar('MODEL_NAME'),
  std.extVar('TRAIN_DATA_PATH'),
  std.extVar('VALIDATION_DATA_PATH'),
  fields=['sentence1', 'sentence2'],
  max_seq_length=128,
  batch_size=32,
  epochs=4,
  regression=true,
  id_field='sentence_pair_id',
)
