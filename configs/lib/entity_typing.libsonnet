// Entity typing on Open Entity (paper §4.1; Table 12: lr 1e-5, batch 4, 3 epochs).
local lib = import 'fine_tuning.libsonnet';

{
  // variant: 'luke' (entity-aware attention), 'luke_original_attention', or 'roberta' (plain
  // pretrained_transformer encoder; the mention's first and last subword states).
  config(model_name, train_path, validation_path, variant='luke'):: {
    dataset_reader: { type: 'luke_open_entity', model_name: model_name, max_seq_length: 256 },
    train_data_path: train_path,
    validation_data_path: validation_path,
    model: {
      type: 'luke_entity_typing',
      embedder: if variant == 'roberta' then lib.transformer_embedder(model_name)
                else lib.luke_embedder(model_name, entity_aware=variant == 'luke'),
      feature: if variant == 'roberta' then 'words' else 'entity',
      dropout: 0.1,
    },
    data_loader: lib.data_loader(4),
    validation_data_loader: { batch_size: 32, shuffle: false },
    trainer: lib.trainer(lr=1e-5, epochs=3, cuda_device='auto') + { validation_metric: '+f1' },
    evaluation: lib.evaluation,
  },
}
