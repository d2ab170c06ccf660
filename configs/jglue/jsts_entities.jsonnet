// JSTS (configs/jglue/jsts.jsonnet) with entity inputs: the names of a mention dictionary found in the sentences
// (configs/lib/jglue.libsonnet, entity_reader). The other JGLUE configs take them with overrides (see there).
// Set: MODEL_NAME, TRAIN_DATA_PATH, VALIDATION_DATA_PATH as for jsts.jsonnet, and
//      MENTION_DICTIONARY (the file written by `allennlp build-mention-dictionary DUMP OUT`, e.g. from a Japanese
//      Wikipedia dump; the checkpoint's entity vocabulary gives the entity ids).
local jsts = import 'jsts.jsonnet';
local jglue = import '../lib/jglue.libsonnet';
local mentions = std.extVar('MENTION_DICTIONARY');
jsts + {
  dataset_reader+: jglue.entity_reader(mentions),
  model+: { embedder: jglue.entity_embedder(std.extVar('MODEL_NAME'), mentions) },
}
