// Cloze-style QA on ReCoRD (paper §4.4; Table 11: lr 1e-5, batch 32, 2 epochs; original LUKE code: query
// cut to 90 subwords, windows of 512 with stride 128).
local lib = import 'fine_tuning.libsonnet';

{
  // variant: 'luke' (entity-aware attention) or 'luke_original_attention'.
  config(model_name, train_path, validation_path, variant='luke'):: {
    dataset_reader: {
      type: 'luke_record',
      model_name: model_name,
      max_seq_length: 512,
      doc_stride: 128,
      max_query_length: 90,
    },
    train_data_path: train_path,
    validation_data_path: validation_path,
    model: {
      type: 'luke_record',
      embedder: lib.luke_embedder(model_name, entity_aware=variant == 'luke'),
      dropout: 0.1,
    },
    // 32 queries per batch; on a small GPU keep the effective batch with e.g.
    // -o '{"data_loader.batch_size": 8, "trainer.num_gradient_accumulation_steps": 4}'.
    data_loader: { batch_size: 32, shuffle: true },
    validation_data_loader: { batch_size: 32, shuffle: false },
    trainer: lib.trainer(lr=1e-5, epochs=2, cuda_device=-1) + { validation_metric: '+f1' },
    evaluation: lib.evaluation,
  },
}
