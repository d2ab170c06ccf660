// Span NER on CoNLL-format data in any language with a multilingual (mLUKE) checkpoint: CoNLL-2003 German
// (`word lemma POS chunk NER`, IOB1), CoNLL-2002 Spanish and Dutch (`word NER` and `word POS NER`, IOB2), or
// CoNLL-2003 English for zero-shot transfer to the others (mLUKE paper, Ri et al., ACL 2022, §4). The reader takes
// the tag from the last column; IOB1 reading ("iob1") gives the same entities on IOB2 files (a B- tag always
// starts an entity), so one setting serves every file.
// As the original repository's mLUKE NER recipe (studio-ousia/luke, examples/ner: the `transformers_luke` model,
// `use_entity_aware_attention: false`): the span model over the plain attention (variant
// 'luke_original_attention' of configs/lib/ner.libsonnet), lr 1e-5, 8 sentences per step, 5 epochs, 6% warm-up,
// weight decay 0.01 (that recipe also clips gradients at norm 5, which this one does not).
// Set: MODEL_NAME (an mLUKE checkpoint: studio-ousia/mluke-base, studio-ousia/mluke-large-lite, or a directory
//      written by `allennlp export-luke` from a model pretrained with an XLM-R tokenizer),
//      TRAIN_DATA_PATH (e.g. deu.train), VALIDATION_DATA_PATH (e.g. deu.testa, esp.testa, ned.testa).
// The German CoNLL-2003 and the CoNLL-2002 files are ISO-8859-1 as distributed: add
// -o '{"dataset_reader.file_encoding": "latin-1"}' (the reader's default is utf-8).
// Trains on the GPU where there is one (trainer.cuda_device "auto"; -1 is the CPU).
local ner = import '../lib/ner.libsonnet';
ner.config(
  std.extVar('MODEL_NAME'),
  std.extVar('TRAIN_DATA_PATH'),
  std.extVar('VALIDATION_DATA_PATH'),
  variant='luke_original_attention',
)
