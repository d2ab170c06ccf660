// mLUKE's extractive QA fine-tuning (Ri et al., ACL 2022, §4.1), for zero-shot cross-lingual transfer: trained on
// SQuAD 1.1 (English), evaluated on XQuAD and MLQA in other languages with `allennlp evaluate-cross-lingual`
// (docs/tasks/cross-lingual.md). The settings are those of the original repository's mLUKE recipe
// (studio-ousia/luke, examples/reading_comprehension/README.md "train mLUKE": configs_squad/transformers_luke.jsonnet
// and configs_squad/lib/base.libsonnet): the LUKE encoder without entity-aware attention (variant
// 'luke_original_attention'), AdamW lr 2e-5 (betas 0.9/0.999, eps 1e-8: allennlp's adamw defaults, which that recipe
// keeps), weight decay 0.01 (none on biases and LayerNorm weights), linear decay with 6% warm-up, 2 epochs, 32
// questions per step (2 x 16 accumulated), gradients clipped at norm 5, the model kept by validation loss.
// Windows of 512 subwords with stride 128 and top-20 x 20 decoding, as configs/lib/reading_comprehension.libsonnet.
// Set: MODEL_NAME (studio-ousia/mluke-base, or a local mLUKE checkpoint directory),
//      TRAIN_DATA_PATH (the official train-v1.1.json), VALIDATION_DATA_PATH (dev-v1.1.json),
//      MENTION_DICTIONARY: the JSON of `allennlp build-mention-dictionary` for entity inputs (mLUKE-E, the paper's
//      best QA figures), or the empty string for the word-only model (mLUKE-W).
// On a GPU add: -o '{"trainer.cuda_device": 0}'.
local rc = import '../lib/reading_comprehension.libsonnet';
local mention_dictionary = std.extVar('MENTION_DICTIONARY');
local base = rc.squad(
  std.extVar('MODEL_NAME'),
  std.extVar('TRAIN_DATA_PATH'),
  std.extVar('VALIDATION_DATA_PATH'),
  variant='luke_original_attention',
  mention_dictionary=if mention_dictionary == '' then null else mention_dictionary,
);
base + {
  data_loader+: { batch_sampler+: { batch_size: 2 } },
  validation_data_loader+: { batch_size: 8 },
  trainer+: {
    optimizer+: { lr: 2e-5, betas: [0.9, 0.999], eps: 1e-8 },
    num_gradient_accumulation_steps: 16,
    grad_norm: 5.0,
    validation_metric: '-loss',
  },
}
