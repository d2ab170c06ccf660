// Span NER on CoNLL-format data in any language with a multilingual (mLUKE) checkpoint: CoNLL-2003 German
// (`word lemma POS chunk NER`, IOB1), CoNLL-2002 Spanish and Dutch (`word NER` and `word POS NER`, IOB2), or
// CoNLL-2003 English for zero-shot transfer to the others (mLUKE paper, Ri et al., ACL 2022, §4). The reader takes
// the tag from the last column; IOB1 reading ("iob1") gives the same entities on IOB2 files (a B- tag always
// starts an entity), so one setting serves every file. The model is "luke" of configs/lib/ner.libsonnet.
// Hyper-parameters: LUKE's CoNLL-2003 settings (lr 1e-5, batch 8, 5 epochs); the mLUKE paper's own NER settings
// were not at hand when this config was written.
// Set: MODEL_NAME (an mLUKE checkpoint: studio-ousia/mluke-base, studio-ousia/mluke-large-lite, or a directory
//      written by `allennlp export-luke` from a model pretrained with an XLM-R tokenizer),
//      TRAIN_DATA_PATH (e.g. deu.train), VALIDATION_DATA_PATH (e.g. deu.testa, esp.testa, ned.testa).
// The files must be UTF-8: the German CoNLL-2003 files are ISO-8859-1 as distributed
// (`iconv -f ISO-8859-1 -t UTF-8 deu.train > deu.train.utf8`), and so are CoNLL-2002's.
// On a GPU add: -o '{"trainer.cuda_device": 0}'.
local ner = import '../lib/ner.libsonnet';
ner.config(
  std.extVar('MODEL_NAME'),
  std.extVar('TRAIN_DATA_PATH'),
  std.extVar('VALIDATION_DATA_PATH'),
  variant='luke',
)
