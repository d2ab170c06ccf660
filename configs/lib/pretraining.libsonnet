// LUKE pretraining (paper §3.3, Appendix A and Table 9): masked language modelling + masked entity prediction
// on a corpus built by `allennlp build-pretraining-corpus`, with AllenNLP's distributed training.
//
// Table 9: batch 2,048 sequences (per-device batch x devices x gradient accumulation), AdamW (beta2 0.999,
// epsilon 1e-6, weight decay 0.01, none on biases and layer norms), 2,500 warm-up steps then linear decay,
// 15% of words (whole words) and 15% of entities masked, dropout 0.1, no gradient clipping. Appendix A:
// stage 1 updates only the new parameters (entity embeddings and the entity prediction head) for 100K steps
// at peak lr 5e-4; stage 2 updates everything for 100K more at peak lr 1e-5.
//
// The corpus is read lazily, and an "epoch" is `steps_per_epoch` optimizer steps (the checkpoint interval);
// the reader starts a new pass, with new masks, whenever it reaches the end of the corpus (in the same workers).
local tracking = import 'tracking.libsonnet';

{
  batch_size:: 2048,  // sequences per optimizer step, across devices and accumulated micro-batches

  // Stage 1 (freeze_word_side) freezes what the original recipe initialises from RoBERTa: word embeddings,
  // transformer layers, pooler and MLM head, each where the checkpoint gives weights for it (the model's
  // `freeze_checkpoint_weights`: an MLM head the checkpoint lacks is randomly initialised, so it is trained). What
  // stays trainable is `luke.entity_embeddings.*` (the new entity table, its projection, position/token-type
  // embeddings and layer norm), `entity_predictions.*` and those missing parameters.

  // The micro-batch (sequences a device runs at once) that a GPU of `memory_gib` holds: the largest of 128, 64 and 32
  // whose estimate leaves 15% of the memory free, else 16 (and 16 on the CPU). The estimate, for LUKE base (512 words
  // and 128 entities a sequence, 500,000 entities, bf16, AdamW): 4.1 GiB of weights, gradients and optimizer state
  // (from the parameter count) plus 0.41 GiB a sequence, what remains of the 17.3 GiB peak that benchmarks/gpu_check.py
  // measured at 32 sequences on an H200 (benchmarks/RESULTS.md; its `memory_by_micro_batch` measures the others).
  // So 128 on 80 GB cards, 64 on 40 GB, 32 on 24 GB: fewer accumulated micro-batches, fewer kernel launches a token.
  micro_batch(memory_gib)::
    local fitting = [b for b in [128, 64, 32] if 4.1 + 0.41 * b <= 0.85 * memory_gib];
    if std.length(fitting) > 0 then fitting[0] else 16,

  // model: a `model` block (see `model` below, or `{type: 'from_archive', ...}`); steps: optimizer steps;
  // freeze_word_side: stage 1. gpus: the number of GPUs, one process each (distributed training from 2 on; one
  // process on the GPU or, with none, on the CPU otherwise); NUM_GPUS in the environment, else the machine's (the
  // project's `allennlp` gives it). Two processes on the CPU: -o '{"distributed": {"cuda_devices": [-1, -1]}, ...}'.
  // batch_size_per_device: the micro-batch; by default `micro_batch` of GPU_MEMORY_GIB (the environment's, else the
  // first GPU's memory, 0 without one).
  config(model, corpus, lr, steps, freeze_word_side=false, gpus=std.parseInt(std.extVar('NUM_GPUS')),
         batch_size_per_device=null, steps_per_epoch=1000, seed=13370)::
    local devices = std.max(gpus, 1);
    local micro = if batch_size_per_device != null then batch_size_per_device
                  else $.micro_batch(std.parseInt(std.extVar('GPU_MEMORY_GIB')));
    local accumulation = $.batch_size / (micro * devices);
    assert accumulation == std.floor(accumulation) && accumulation >= 1 :
           'batch_size_per_device (%d) x number of GPUs (%d) must divide %d' % [micro, devices, $.batch_size];
    {
      dataset_reader: {
        type: 'luke_pretraining',
        masked_lm_prob: 0.15,
        masked_entity_prob: 0.15,
        random_word_prob: 0.1,
        unmasked_word_prob: 0.1,
        whole_word_masking: true,
        seed: seed,
        // Pass after pass without end (new masks each): the data-loader workers live across passes, so no pass
        // starts with a stall while new ones start.
        endless: true,
        // Each row's masked positions at a fixed size: the heads run without a host sync, at static shapes.
        masked_positions: true,
      },
      // A validation corpus (validation_data_path, optional) is read once per validation, with the same masks each time.
      validation_dataset_reader: self.dataset_reader + { endless: false, dynamic_masking: false },
      train_data_path: corpus,
      vocabulary: { type: 'empty' },  // words and entities are ids from the corpus
      model: model + (if freeze_word_side then { freeze_checkpoint_weights: true } else {}),
      data_loader: {
        batch_size: micro,
        batches_per_epoch: steps_per_epoch * accumulation,
        max_instances_in_memory: micro * 64,  // lazy: each pass is read (and masked) anew
        num_workers: 2,
      },
      trainer: {
        // The project's trainer: bf16 autocast on GPUs (precision "auto"; fp32 on the CPU), one gradient all-reduce
        // per optimizer step however many micro-batches are accumulated, exact --recover. luke_adamw: PyTorch's
        // AdamW, fused on GPUs.
        type: 'luke_gradient_descent',
        precision: 'auto',
        optimizer: {
          type: 'luke_adamw',
          lr: lr,
          betas: [0.9, 0.999],
          eps: 1e-6,
          weight_decay: 0.01,
          // No weight decay on biases and layer norms. Frozen parameters never reach the optimizer.
          parameter_groups: [[['(bias|LayerNorm\\.weight|layer_norm\\.weight)$'], { weight_decay: 0.0 }]],
        },
        learning_rate_scheduler: { type: 'linear_with_warmup', warmup_steps: 2500 },
        cuda_device: 'auto',  // one process: the GPU where there is one (distributed: each process's own)
        num_epochs: std.ceil(steps / steps_per_epoch),
        num_gradient_accumulation_steps: accumulation,
        // allennlp's check flags a biased linear layer followed by a layer norm, which the heads have by design
        // (BERT's dense -> gelu -> layer norm; the check cannot see the functional gelu between them).
        run_confidence_checks: false,
        callbacks: tracking.callbacks(),  // LUKE_TRACKING=tensorboard,mlflow,wandb (tracking.libsonnet)
      },
    } + (if gpus > 1 then {
      // Frozen parameters are frozen when the model is built, before DistributedDataParallel registers the others.
      distributed: { cuda_devices: std.range(0, gpus - 1) },
    } else {}),

  // The `luke_pretraining` model, starting from `model_name` (RoBERTa/BERT, or LUKE to continue pretraining);
  // a new entity table gets the corpus's entity vocabulary size. Plain attention during pretraining, as in the
  // original implementation (`allennlp export-luke` initialises the entity-aware queries from it).
  model(model_name, corpus):: {
    type: 'luke_pretraining',
    model_name: model_name,
    entity_vocab: std.split(corpus, ',')[0],  // (corpora joined by commas share their entity vocabulary)
    use_entity_aware_attention: false,
    config_overrides: { hidden_dropout_prob: 0.1, attention_probs_dropout_prob: 0.1 },
  },
}
