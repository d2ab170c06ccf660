// Shared parts of the fine-tuning configs: the paper's optimiser and schedule (Tables 11 and 12: AdamW,
// weight decay 0.01, Adam betas (0.9, 0.98), epsilon 1e-6, linear decay with 6% warm-up) and the LUKE /
// RoBERTa embedders.
local tracking = import 'tracking.libsonnet';

{
  // The `luke` embedder with the fine-tuning entity vocabulary ([PAD], [MASK], [HEAD], [TAIL]).
  luke_embedder(model_name, entity_aware=true):: {
    type: 'luke',
    model_name: model_name,
    entity_vocab: 'task',
    use_entity_aware_attention: entity_aware,
  },

  // A plain word encoder (allennlp's own), for the RoBERTa/BERT baselines.
  transformer_embedder(model_name):: {
    type: 'pretrained_transformer',
    model_name: model_name,
  },

  // The project's trainer (allennlp's gradient_descent + precision, exact --recover; see docs/training.md, "The
  // trainer's options"): precision "auto" is bf16 autocast on a GPU that has it, fp32 on the CPU. luke_adamw is PyTorch's AdamW,
  // fused on GPUs.
  trainer(lr, epochs, cuda_device):: {
    type: 'luke_gradient_descent',
    precision: 'auto',
    optimizer: {
      type: 'luke_adamw',
      lr: lr,
      weight_decay: 0.01,
      betas: [0.9, 0.98],
      eps: 1e-6,
      parameter_groups: [[['bias', 'LayerNorm\\.weight', 'LayerNorm\\.bias'], { weight_decay: 0.0 }]],
    },
    learning_rate_scheduler: { type: 'linear_with_warmup_ratio', warmup_ratio: 0.06 },
    num_epochs: epochs,
    cuda_device: cuda_device,
    callbacks: tracking.callbacks(),  // LUKE_TRACKING=tensorboard,mlflow,wandb (tracking.libsonnet)
  },

  // Training batches of instances of similar size (less padding), in random order; override the size with
  // -o '{"data_loader.batch_sampler.batch_size": 8}'. Validation keeps the file's order (predictions files follow it).
  data_loader(batch_size, sorting_keys=['word_ids']):: {
    batch_sampler: { type: 'luke_bucket', batch_size: batch_size, sorting_keys: sorting_keys },
  },

  // `allennlp evaluate --predictions-output-file` writes one JSON line per instance.
  evaluation: { type: 'simple', batch_serializer: { type: 'luke_per_instance' } },
}
