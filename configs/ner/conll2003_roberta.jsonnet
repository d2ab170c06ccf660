// CoNLL-2003 span NER, variant "roberta" (configs/lib/ner.libsonnet).
// Set: MODEL_NAME (e.g. studio-ousia/luke-base, or a local checkpoint directory),
//      TRAIN_DATA_PATH (e.g. ../shared/data/conll2003/eng.train),
//      VALIDATION_DATA_PATH (e.g. ../shared/data/conll2003/eng.testa).
// Trains on the GPU where there is one (trainer.cuda_device "auto"; -1 is the CPU).
local ner = import '../lib/ner.libsonnet';
ner.config(
  std.extVar('MODEL_NAME'),
  std.extVar('TRAIN_DATA_PATH'),
  std.extVar('VALIDATION_DATA_PATH'),
  variant='roberta'
)
