// JSQuAD (JGLUE): extractive QA through the SQuAD reader and model, EM / F1 as JGLUE's scorer computes them
// (character F1; configs/lib/jglue.libsonnet: lr 5e-5, batch 32, 3 epochs, 384 subwords with stride 128, from
// JGLUE's fine-tuning README). No entity inputs.
// Set: MODEL_NAME (e.g. studio-ousia/luke-japanese-base-lite, or a local checkpoint directory),
//      TRAIN_DATA_PATH (jsquad-v1.3/train-v1.3.json), VALIDATION_DATA_PATH (e.g. ../shared/data/jglue/jsquad-v1.3/valid-v1.3.json).
// Trains on the GPU where there is one (trainer.cuda_device "auto"; -1 is the CPU).
local jglue = import '../lib/jglue.libsonnet';
jglue.squad(std.extVar('MODEL_NAME'), std.extVar('TRAIN_DATA_PATH'), std.extVar('VALIDATION_DATA_PATH'))
