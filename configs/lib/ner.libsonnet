// Span-based NER on CoNLL-2003 (paper §4.3; Table 12: lr 1e-5, batch 8, 5 epochs).
local lib = import 'fine_tuning.libsonnet';

{
  // variant: 'luke' (entity-aware attention), 'luke_original_attention', 'roberta' (word features only,
  // plain pretrained_transformer encoder: the RoBERTa row of Table 3), or 'bio_crf' (the classic BIO tagger
  // with a CRF over a plain pretrained_transformer encoder, on the same reader output).
  config(model_name, train_path, validation_path, variant='luke', cuda_device='auto'):: {
    dataset_reader: {
      type: 'luke_conll2003',
      model_name: model_name,
      max_seq_length: 512,
      max_span_words: 16,
      max_entities: 128,
      encoding: 'auto',  // the tag scheme from the tags (IOB1 as CoNLL-2003 ships, IOB2 as the Hub's, BIOES)
    },
    train_data_path: train_path,
    validation_data_path: validation_path,
    model: if variant == 'bio_crf' then {
      type: 'luke_bio_tagger',
      embedder: lib.transformer_embedder(model_name),
      use_crf: true,
      dropout: 0.1,
    } else {
      type: 'luke_span_ner',
      embedder: if variant == 'roberta' then lib.transformer_embedder(model_name)
                else lib.luke_embedder(model_name, entity_aware=variant == 'luke'),
      feature: if variant == 'roberta' then 'words' else 'all',
      dropout: 0.1,
    },
    // Sentences with similar numbers of spans (the entity side is most of an NER pass), then of subwords.
    data_loader: lib.data_loader(8, sorting_keys=['entity_attention_mask', 'word_ids']),
    validation_data_loader: { batch_size: 8, shuffle: false },
    trainer: lib.trainer(lr=1e-5, epochs=5, cuda_device=cuda_device) + { validation_metric: '+f1' },
    evaluation: lib.evaluation,
  },
}
