// JGLUE (Kurihara et al., LREC 2022): the sentence-level tasks and JSQuAD with a LUKE checkpoint (LUKE-Japanese:
// studio-ousia/luke-japanese-base, -large and their -lite versions). The hyper-parameters are those of JGLUE's
// fine-tuning (github.com/yahoojapan/JGLUE, fine-tuning/README.md):
//   - its table "Hyperparameters": learning rate searched in {5e-5, 3e-5, 2e-5}, epochs in {3, 4}, warm-up ratio 0.1,
//     max seq length 512 (MARC-ja), 128 (JSTS, JNLI), 384 (JSQuAD), 64 (JCommonsenseQA);
//   - its example commands: MARC-ja (run_glue.py; JSTS and JNLI use the same command with another --metric_name)
//     lr 5e-5, batch 32, 4 epochs; JSQuAD (run_squad.py) lr 5e-5, batch 32, 3 epochs; JCommonsenseQA (run_swag.py)
//     lr 5e-5, batch 64, 4 epochs. The best values of the search per task are not published: these are the
//     commands' values.
//   - what the commands leave at transformers' defaults: AdamW with betas (0.9, 0.999), epsilon 1e-8, no weight
//     decay; linear decay after the warm-up; run_squad.py's doc_stride 128 and max_query_length 64, n_best_size 20
//     and max_answer_length 30.
local lib = import 'fine_tuning.libsonnet';
local tracking = import 'tracking.libsonnet';

{
  trainer(lr, epochs, validation_metric):: {
    type: 'luke_gradient_descent',
    precision: 'auto',
    optimizer: { type: 'luke_adamw', lr: lr, weight_decay: 0.0, betas: [0.9, 0.999], eps: 1e-8 },
    learning_rate_scheduler: { type: 'linear_with_warmup_ratio', warmup_ratio: 0.1 },
    num_epochs: epochs,
    validation_metric: validation_metric,
    cuda_device: 'auto',
    callbacks: tracking.callbacks(),  // LUKE_TRACKING=tensorboard,mlflow,wandb (tracking.libsonnet)
  },

  // The LUKE encoder without entity inputs: only the fine-tuning entities are kept ([PAD], [MASK], ...), the
  // checkpoint's large entity table is not loaded into the model.
  embedder(model_name):: lib.luke_embedder(model_name),

  // Optional entity inputs (off by default, null): mention_dictionary, the file of `allennlp
  // build-mention-dictionary`; the names of the dictionary found in the text become entities (their most linked
  // entity, if the checkpoint's entity vocabulary has it; limits as the SQuAD config's), and the embedder keeps
  // the checkpoint's entity table. Turn it on with configs/jglue/jsts_entities.jsonnet's MENTION_DICTIONARY, or
  // with overrides: -o '{"dataset_reader.mention_dictionary": "...", "model.embedder.entity_vocab": "checkpoint"}'.
  entity_reader(mention_dictionary):: if mention_dictionary == null then {} else {
    mention_dictionary: mention_dictionary,
    min_link_probability: 0.01,
    max_entities: 128,
    max_mention_length: 30,
  },
  entity_embedder(model_name, mention_dictionary)::
    $.embedder(model_name) + (if mention_dictionary == null then {} else { entity_vocab: 'checkpoint' }),

  // MARC-ja, JNLI, JSTS and GLUE-style data: one sentence or a pair (fields), classes or a score (regression).
  sentence_classification(model_name, train_path, validation_path, fields, max_seq_length, batch_size, epochs,
                          labels=null, regression=false, id_field=null, mention_dictionary=null):: {
    dataset_reader: {
      type: 'luke_sentence_classification',
      model_name: model_name,
      max_seq_length: max_seq_length,
      sentence_fields: fields,
      id_field: id_field,
      regression: regression,
    } + (if labels != null then { labels: labels } else {}) + $.entity_reader(mention_dictionary),
    train_data_path: train_path,
    validation_data_path: validation_path,
    model: {
      type: 'luke_sequence_classifier',
      embedder: $.entity_embedder(model_name, mention_dictionary),
      regression: regression,
    },
    data_loader: lib.data_loader(batch_size),
    validation_data_loader: { batch_size: 32, shuffle: false },
    trainer: $.trainer(5e-5, epochs, if regression then '+pearson' else '+accuracy'),
    evaluation: lib.evaluation,
  },

  multiple_choice(model_name, train_path, validation_path, max_seq_length=64, batch_size=64, epochs=4,
                  mention_dictionary=null):: {
    dataset_reader: {
      type: 'luke_multiple_choice',
      model_name: model_name,
      max_seq_length: max_seq_length,
      question_field: 'question',
      choice_fields: ['choice0', 'choice1', 'choice2', 'choice3', 'choice4'],
      id_field: 'q_id',
    } + $.entity_reader(mention_dictionary),
    train_data_path: train_path,
    validation_data_path: validation_path,
    model: { type: 'luke_multiple_choice', embedder: $.entity_embedder(model_name, mention_dictionary) },
    data_loader: lib.data_loader(batch_size),
    validation_data_loader: { batch_size: 32, shuffle: false },
    trainer: $.trainer(5e-5, epochs, '+accuracy'),
    evaluation: lib.evaluation,
  },

  // JSQuAD through the SQuAD reader and model (its contexts begin with "title [SEP] ", read as text), scored as
  // JGLUE's patched squad_metrics.py scores (character F1, see luke_allennlp/training/metrics/squad_em_and_f1.py).
  squad(model_name, train_path, validation_path):: {
    dataset_reader: {
      type: 'luke_squad',
      model_name: model_name,
      max_seq_length: 384,
      doc_stride: 128,
      max_question_length: 64,
    },
    train_data_path: train_path,
    validation_data_path: validation_path,
    model: {
      type: 'luke_squad',
      embedder: $.embedder(model_name),
      top_k: 20,
      max_answer_length: 30,
      answer_scoring: 'jglue',
    },
    data_loader: lib.data_loader(32),
    validation_data_loader: { batch_size: 32, shuffle: false },
    trainer: $.trainer(5e-5, 3, '+f1'),
    evaluation: lib.evaluation,
  },
}
