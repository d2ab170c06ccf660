// Relation classification (paper §4.2; Table 12 for TACRED: lr 1e-5, batch 32, 5 epochs). The same reader
// reads TACRED JSON, SemEval-2010 Task 8 and KBP37 files.
local lib = import 'fine_tuning.libsonnet';

{
  // variant: 'luke' (entity-aware attention), 'luke_original_attention', or 'roberta' (plain
  // pretrained_transformer encoder, entity markers in the text, first/last subword states of the mentions).
  // validation_metric: '+f1' (TACRED's micro F1) or '+macro_f1' (SemEval's official score, and KBP37's).
  config(model_name, train_path, validation_path, variant='luke', validation_metric='+f1'):: {
    dataset_reader: {
      type: 'luke_relation_classification',
      model_name: model_name,
      max_seq_length: 512,
      use_entity_markers: variant == 'roberta',
    },
    train_data_path: train_path,
    validation_data_path: validation_path,
    model: {
      type: 'luke_relation_classifier',
      embedder: if variant == 'roberta' then lib.transformer_embedder(model_name)
                else lib.luke_embedder(model_name, entity_aware=variant == 'luke'),
      feature: if variant == 'roberta' then 'words' else 'entity',
      bias: false,  // as the original LUKE (and transformers' LukeForEntityPairClassification, for export-luke)
      dropout: 0.1,
    },
    data_loader: lib.data_loader(32),
    validation_data_loader: { batch_size: 32, shuffle: false },
    trainer: lib.trainer(lr=1e-5, epochs=5, cuda_device='auto') + { validation_metric: validation_metric },
    evaluation: lib.evaluation,
  },
}
