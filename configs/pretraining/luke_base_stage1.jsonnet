// LUKE base pretraining, stage 1 of 2 (paper Appendix A; configs/lib/pretraining.libsonnet): from RoBERTa,
// only the new parameters (entity embeddings and the entity prediction head) are trained, for 100K steps
// at peak lr 5e-4; everything initialised from RoBERTa stays frozen. Stage 2: luke_base_stage2.jsonnet.
// Set: MODEL_NAME (e.g. roberta-base, or a local RoBERTa/BERT checkpoint directory),
//      CORPUS (a directory written by `allennlp build-pretraining-corpus`, or several joined by commas,
//      e.g. one per language for mLUKE: MODEL_NAME=xlm-roberta-base CORPUS=output/corpus/de,output/corpus/ja).
// Runs on every GPU of the machine, one process each (NUM_GPUS=G in the environment says how many), with 16
// sequences per GPU and 2048 / (16 G) accumulated micro-batches (2,048 per step; 16 on 8 GPUs). Without a GPU,
// one process on the CPU; two: -o '{"distributed": {"cuda_devices": [-1, -1]}, ...}'.
local lib = import '../lib/pretraining.libsonnet';
local corpus = std.extVar('CORPUS');
lib.config(lib.model(std.extVar('MODEL_NAME'), corpus), corpus, lr=5e-4, steps=100000, freeze_word_side=true)
