// MARC-ja sentiment (JGLUE): single-sentence classification, positive / negative, accuracy
// (configs/lib/jglue.libsonnet: lr 5e-5, batch 32, 4 epochs, 512 subwords, from JGLUE's fine-tuning README).
// Set: MODEL_NAME (e.g. studio-ousia/luke-japanese-base-lite, or a local checkpoint directory),
//      TRAIN_DATA_PATH, VALIDATION_DATA_PATH (JGLUE's marc_ja-v1.x/{train,valid}-v1.x.json, JSON lines
//      {"sentence", "label", "review_id"}: Amazon no longer distributes MARC, so build them from a copy you have).
// Trains on the GPU where there is one (trainer.cuda_device "auto"; -1 is the CPU).
local jglue = import '../lib/jglue.libsonnet';
jglue.sentence_classification(
  std.extVar('MODEL_NAME'),
  std.extVar('TRAIN_DATA_PATH'),
  std.extVar('VALIDATION_DATA_PATH'),
  fields=['sentence'],
  max_seq_length=512,
  batch_size=32,
  epochs=4,
  labels=['positive', 'negative'],
  id_field='review_id',
)
