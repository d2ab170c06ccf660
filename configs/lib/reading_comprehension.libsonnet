// Reading comprehension. SQuAD 1.1 (paper §4.5, Appendix C; Table 11: lr 15e-6, batch 48, 2 epochs; original
// LUKE code: windows of 512 subwords with stride 128, questions cut to 64 subwords, top-20 starts x ends,
// answers of at most 30 subwords, entity table frozen).
// ReCoRD (paper §4.4; Table 11: lr 1e-5, batch 32, 2 epochs; original LUKE code: query cut to 90 subwords,
// windows of 512 with stride 128).
local lib = import 'fine_tuning.libsonnet';

{
  // variant: 'luke' (entity-aware attention), 'luke_original_attention', or a plain pretrained_transformer
  // encoder: 'roberta', 'bert', 'xlnet' (each tokenizer's own pair format: XLNet puts the passage first and
  // its special tokens last, with segment ids). mention_dictionary (LUKE variants only): the JSON of
  // `allennlp build-mention-dictionary`, for entity inputs with the checkpoint's entity vocabulary; null is
  // the "w/o entity inputs" ablation (Table 5).
  squad(model_name, train_path, validation_path, variant='luke', mention_dictionary=null):: {
    local luke = std.startsWith(variant, 'luke'),
    local entities = mention_dictionary != null,
    assert luke || !entities : 'entity inputs need a LUKE variant',
    dataset_reader: {
      type: 'luke_squad',
      model_name: model_name,
      max_seq_length: 512,
      doc_stride: 128,
      max_question_length: 64,
    } + (if entities then {
      mention_dictionary: mention_dictionary,
      min_link_probability: 0.01,
      max_entities: 128,
      max_mention_length: 30,
    } else {}),
    train_data_path: train_path,
    validation_data_path: validation_path,
    model: {
      type: 'luke_squad',
      embedder: if !luke then lib.transformer_embedder(model_name)
                else lib.luke_embedder(model_name, entity_aware=variant == 'luke')
                     // Real Wikipedia entities index the pretrained entity table.
                     + (if entities then { entity_vocab: 'checkpoint' } else {}),
      top_k: 20,
      max_answer_length: 30,
      freeze_entity_embeddings: true,
    },
    // 48 questions per batch (a question is one window unless its passage is longer than 512 subwords); on a
    // small GPU keep the effective batch with e.g.
    // -o '{"data_loader.batch_sampler.batch_size": 8, "trainer.num_gradient_accumulation_steps": 6}'.
    data_loader: lib.data_loader(48),
    validation_data_loader: { batch_size: 32, shuffle: false },
    trainer: lib.trainer(lr=15e-6, epochs=2, cuda_device='auto') + { validation_metric: '+f1' },
    evaluation: lib.evaluation,
  },

  // variant: 'luke' (entity-aware attention) or 'luke_original_attention'.
  record(model_name, train_path, validation_path, variant='luke'):: {
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
    // -o '{"data_loader.batch_sampler.batch_size": 8, "trainer.num_gradient_accumulation_steps": 4}'.
    data_loader: lib.data_loader(32),
    validation_data_loader: { batch_size: 32, shuffle: false },
    trainer: lib.trainer(lr=1e-5, epochs=2, cuda_device='auto') + { validation_metric: '+f1' },
    evaluation: lib.evaluation,
  },
}
