// Entity disambiguation fine-tuned on AIDA-CoNLL (configs/lib/entity_disambiguation.libsonnet), the paper's setting.
// Set: MODEL_NAME (a LUKE checkpoint with its entity prediction head and entity_vocab.json, e.g. the output of
//      `allennlp export-luke`, or a transformers LukeForMaskedLM directory),
//      TRAIN_DATA_PATH (deep-ed's aida_train.csv), VALIDATION_DATA_PATH (aida_testA.csv).
// The files bring their own candidates. Evaluate on aida_testB.csv, wned-*.csv with `allennlp evaluate`.
// Trains on the GPU where there is one (trainer.cuda_device "auto"; -1 is the CPU); local inference: -o '{"model.inference": "local"}'.
local ed = import '../lib/entity_disambiguation.libsonnet';
local model = std.extVar('MODEL_NAME');
ed.config(model, std.extVar('TRAIN_DATA_PATH'), std.extVar('VALIDATION_DATA_PATH'), ed.reader(model), ed.reader(model))
