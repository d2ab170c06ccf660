// mLUKE's relation classification fine-tuning (Ri et al., ACL 2022, §4.1), for zero-shot cross-lingual transfer:
// trained on KBP37 (English), evaluated on RELX (en, de, es, fr, tr; KBP37's format and labels) with
// `allennlp evaluate-cross-lingual` (docs/tasks/cross-lingual.md). The settings are those of the original
// repository's mLUKE recipe (studio-ousia/luke, examples/relation_classification/README.md "train mLUKE":
// configs/transformers_luke.jsonnet and configs/lib/base.libsonnet): the LUKE encoder without entity-aware
// attention (variant 'luke_original_attention'), the head and tail entity states classified, AdamW lr 1e-5
// (betas 0.9/0.999, eps 1e-8: allennlp's adamw defaults, which that recipe keeps), weight decay 0.01, linear decay
// with 6% warm-up, 5 epochs, 32 examples per step (4 x 8 accumulated), the model kept by micro F1 (`f1` here:
// no_relation left out). That recipe also marks the mentions with `<ent>` / `<ent2>` in the text; with a
// checkpoint whose tokenizer has them (studio-ousia/mluke-base does) add
// -o '{"dataset_reader.entity_marker_tokens": ["<ent>", "<ent2>"]}'.
// Set: MODEL_NAME (studio-ousia/mluke-base, or a local mLUKE checkpoint directory),
//      TRAIN_DATA_PATH (kbp37/train.txt), VALIDATION_DATA_PATH (kbp37/dev.txt), files as distributed.
// On a GPU add: -o '{"trainer.cuda_device": 0}'.
local rc = import '../lib/relation_classification.libsonnet';
local base = rc.config(
  std.extVar('MODEL_NAME'),
  std.extVar('TRAIN_DATA_PATH'),
  std.extVar('VALIDATION_DATA_PATH'),
  validation_metric='+f1',
  variant='luke_original_attention',
);
base + {
  data_loader+: { batch_sampler+: { batch_size: 4 } },
  trainer+: {
    optimizer+: { betas: [0.9, 0.999], eps: 1e-8 },
    num_gradient_accumulation_steps: 8,
  },
}
