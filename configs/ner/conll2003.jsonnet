// CoNLL-2003 span NER, variant "luke" (configs/lib/ner.libsonnet).
// Set: MODEL_NAME (e.g. studio-ousia/luke-base, or a local checkpoint directory),
//      TRAIN_DATA_PATH (e.g. ../shared/data/conll2003/eng.train),
//      VALIDATION_DATA_PATH (e.g. ../shared/data/conll2003/eng.testa).
// Trains on the GPU where there is one (trainer.cuda_device "auto"; -1 is the CPU).
local ner = import '../lib/ner.libsonnet';
ner.config(
  std.extVar('MODEL_NAME'),
  std.extVar('TRAIN_DATA_PATH'),
  std.extVar('VALIDATION_DATA_PATH'),
  variant='luke',
) + {
  // The paper's figure (LUKE-large; span F1 on the CoNLL-2003 test set, eng.testb: runs report it as test_f1 with
  // test_data_path and evaluate_on_test), read by `allennlp seeds`; training ignores this key (docs/reproduction.md).
  paper: {
    source: 'Yamada et al. (2020), LUKE-large: span F1 on the CoNLL-2003 test set (eng.testb)',
    metrics: { test_f1: 0.943 },
  },
}
