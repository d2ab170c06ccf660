"""
`allennlp` subcommands of the plugin (registered on import; `allennlp` imports the plugin before it builds
its parser):

- `build-entity-vocab DUMP OUT`: the entity vocabulary of a Wikipedia dump (of several, merged across languages:
  mLUKE's);
- `build-pretraining-corpus DUMP TOKENIZER ENTITY_VOCAB OUT_DIR`: LUKE's pretraining corpus;
- `build-mention-dictionary DUMP OUT`: the names linked on each page, for SQuAD's entity inputs;
- `merge-pretraining-corpus PART_DIR... OUT_DIR`: the corpora of a dump's parts joined;
- `build-tokenizer INPUT... OUT_DIR`: a word tokenizer (BPE or unigram) trained on dumps and text files;
- `build-tiny-checkpoint OUT_DIR --tokenizer DIR` (or `--kind luke-japanese --jglue DIR`): a randomly initialised
  checkpoint for smoke runs;
- `export-luke ARCHIVE OUT_DIR`: a `luke_pretraining` or fine-tuned task archive as a transformers LUKE checkpoint;
- `import-luke-task CHECKPOINT OUT_DIR`: a transformers LUKE task checkpoint as an AllenNLP archive;
- `squad-predictions PREDICTIONS OUT`: `allennlp evaluate`'s SQuAD predictions as the official JSON;
- `evaluate-cross-lingual ARCHIVE FILE... --output-dir DIR`: one model on many languages, one table;
- `build-gxlt-pairs FILE... OUT_DIR`: XQuAD's question-language x context-language files;
- `plot DIR... --out FILE.png|FILE.html`: training runs and seeds summaries drawn (matplotlib);
- `seeds CONFIG -s DIR --seeds N`: a config trained with N seeds, the spread of their metrics beside the paper's;
- `tune CONFIG SPACE -s DIR --trials N`: a hyperparameter search on Optuna.
"""

from luke_allennlp.commands.build_entity_vocab import BuildEntityVocab
from luke_allennlp.commands.build_gxlt_pairs import BuildGxltPairs
from luke_allennlp.commands.build_mention_dictionary import BuildMentionDictionary
from luke_allennlp.commands.build_pretraining_corpus import BuildPretrainingCorpus
from luke_allennlp.commands.build_tiny_checkpoint import BuildTinyCheckpoint
from luke_allennlp.commands.build_tokenizer import BuildTokenizer
from luke_allennlp.commands.evaluate_cross_lingual import EvaluateCrossLingual
from luke_allennlp.commands.export_luke import ExportLuke
from luke_allennlp.commands.import_luke_task import ImportLukeTask
from luke_allennlp.commands.merge_pretraining_corpus import MergePretrainingCorpus
from luke_allennlp.commands.plot import Plot
from luke_allennlp.commands.seeds import Seeds
from luke_allennlp.commands.squad_predictions import SquadPredictions
from luke_allennlp.commands.tune import Tune

__all__ = [
    "BuildEntityVocab",
    "BuildGxltPairs",
    "BuildMentionDictionary",
    "BuildPretrainingCorpus",
    "BuildTinyCheckpoint",
    "BuildTokenizer",
    "EvaluateCrossLingual",
    "ExportLuke",
    "ImportLukeTask",
    "MergePretrainingCorpus",
    "Plot",
    "Seeds",
    "SquadPredictions",
    "Tune",
]
