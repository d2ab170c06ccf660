// LUKE base pretraining in one stage (configs/lib/pretraining.libsonnet): every parameter is trained from the
// start, for the paper's 200K steps at Table 9's peak lr 1e-5. The paper's recipe is the two stages of
// luke_base_stage1.jsonnet and luke_base_stage2.jsonnet; this one continues pretraining a LUKE checkpoint
// (same entity vocabulary) on a corpus, or pretrains without the frozen first stage.
// Set: MODEL_NAME (a LUKE, RoBERTa or BERT checkpoint directory, or a hub name),
//      CORPUS (a directory written by `allennlp build-pretraining-corpus`, or several joined by commas,
//      e.g. one per language for mLUKE: MODEL_NAME=xlm-roberta-base CORPUS=output/corpus/de,output/corpus/ja).
// Devices and batches as in luke_base_stage1.jsonnet.
local lib = import '../lib/pretraining.libsonnet';
local corpus = std.extVar('CORPUS');
lib.config(lib.model(std.extVar('MODEL_NAME'), corpus), corpus, lr=1e-5, steps=200000)
