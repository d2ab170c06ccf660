// Entity disambiguation trained on Wikipedia hyperlinks (configs/lib/entity_disambiguation.libsonnet): a corpus written
// by `allennlp build-pretraining-corpus` with the model's tokenizer, every 10th page held out for validation.
// Set: MODEL_NAME (a LUKE checkpoint with its entity prediction head and entity_vocab.json),
//      TRAIN_DATA_PATH and VALIDATION_DATA_PATH (the corpus directory, usually both the same),
//      MENTION_DICTIONARY (`allennlp build-mention-dictionary` output: the candidates, p(entity | mention)).
// Trains on the GPU where there is one (trainer.cuda_device "auto"; -1 is the CPU); local inference: -o '{"model.inference": "local"}'.
local ed = import '../lib/entity_disambiguation.libsonnet';
local model = std.extVar('MODEL_NAME');
local mentions = std.extVar('MENTION_DICTIONARY');
ed.config(model, std.extVar('TRAIN_DATA_PATH'), std.extVar('VALIDATION_DATA_PATH'),
          ed.reader(model, mentions, pages='train'), ed.reader(model, mentions, pages='held_out'))
