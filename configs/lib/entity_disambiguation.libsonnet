// Entity disambiguation with LUKE's masked-entity prediction (Yamada et al., NAACL 2022, "Global Entity
// Disambiguation with BERT"). Fine-tuning settings of the released code (examples/entity_disambiguation/train.py):
// AdamW (lr 2e-5, eps 1e-6, weight decay 0.01 except biases and layer norms, no bias correction), batch 16,
// 2 epochs, linear decay after 10% warm-up, gradient norm clipped at 1.0; 90% of the gold entities masked;
// 512 subwords, 128 mentions of up to 30 subwords per input, 30 candidates; entity embeddings frozen;
// evaluation with global (confidence-order) inference.
local lib = import 'fine_tuning.libsonnet';

{
  reader(model_name, mention_dictionary=null, pages='all'):: {
    type: 'luke_entity_disambiguation',
    model_name: model_name,
    [if mention_dictionary != null then 'mention_dictionary']: mention_dictionary,
    max_candidates: 30,
    max_seq_length: 512,
    max_entities: 128,
    max_mention_length: 30,
    pages: pages,
  },

  config(model_name, train_path, validation_path, train_reader, validation_reader, cuda_device='auto'):: {
    dataset_reader: train_reader,
    validation_dataset_reader: validation_reader,
    train_data_path: train_path,
    validation_data_path: validation_path,
    vocabulary: { type: 'empty' },
    model: {
      type: 'luke_entity_disambiguation',
      // The checkpoint's whole entity table: candidates are ids of its vocabulary.
      embedder: { type: 'luke', model_name: model_name, entity_vocab: 'checkpoint' },
      model_name: model_name,
      inference: 'global',
      masked_entity_prob: 0.9,
      freeze_entity_embeddings: true,
    },
    data_loader: lib.data_loader(16),
    validation_data_loader: { batch_size: 16, shuffle: false },
    trainer: lib.trainer(lr=2e-5, epochs=2, cuda_device=cuda_device) + {
      // allennlp's huggingface_adamw: the released code's AdamW without bias correction (luke_adamw, PyTorch's,
      // always corrects it).
      optimizer+: { type: 'huggingface_adamw', betas: [0.9, 0.999], correct_bias: false },
      learning_rate_scheduler+: { warmup_ratio: 0.1 },
      grad_norm: 1.0,
      validation_metric: '+accuracy',
      // allennlp's check flags a biased linear layer followed by a layer norm, which the entity head has by design
      // (dense -> gelu -> layer norm; the check cannot see the functional gelu between them).
      run_confidence_checks: false,
    },
    evaluation: lib.evaluation,
  },
}
