// SQuAD 1.1 extractive QA, variant "luke", with entity inputs (configs/lib/reading_comprehension.libsonnet).
// Set: MODEL_NAME (e.g. studio-ousia/luke-base, or a local LUKE checkpoint directory with its entity_vocab.json),
//      TRAIN_DATA_PATH (the official train-v1.1.json), VALIDATION_DATA_PATH (the official dev-v1.1.json,
//      e.g. ../shared/data/squad1.1/dev-v1.1.json),
//      MENTION_DICTIONARY (the JSON written by `allennlp build-mention-dictionary DUMP OUT`).
// Trains on the GPU where there is one (trainer.cuda_device "auto"; -1 is the CPU).
local rc = import '../lib/reading_comprehension.libsonnet';
rc.squad(
  std.extVar('MODEL_NAME'),
  std.extVar('TRAIN_DATA_PATH'),
  std.extVar('VALIDATION_DATA_PATH'),
  variant='luke',
  mention_dictionary=std.extVar('MENTION_DICTIONARY'),
) + {
  // The paper's figures (LUKE-large): EM/F1 on the SQuAD 1.1 dev set (the validation data here) and on its hidden
  // test set (the leaderboard's), read by `allennlp seeds`; training ignores this key (docs/reproduction.md).
  paper: {
    source: 'Yamada et al. (2020), LUKE-large: SQuAD 1.1 dev EM/F1 89.8/95.0, test EM/F1 90.2/95.4',
    metrics: { best_validation_em: 0.898, best_validation_f1: 0.950, test_em: 0.902, test_f1: 0.954 },
  },
}
