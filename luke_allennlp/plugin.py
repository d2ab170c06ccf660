"""
The plugin entry: the module that `.allennlp_plugins` names (and `luke_allennlp_readers`, the installed readers
package, imports). Importing it installs the compatibility layer with the product's behaviours on allennlp's
commands (`luke_allennlp.cli.HOOKS`) and registers every component: models, the `luke` embedder, predictors, metrics,
the learning-rate schedule, the sampler, the trackers (`tensorboard`, `mlflow`, `wandb`), the subcommands. The dataset
readers register from `data_readers`, which imports this module. Nothing else under `luke_allennlp` imports
`luke_allennlp_compat` but the behaviours, which replace allennlp's functions with its `patch` helper.
"""

import luke_allennlp_compat
from luke_allennlp.cli import HOOKS

luke_allennlp_compat.install(HOOKS)

import luke_allennlp.commands  # noqa: F401  (the allennlp subcommands: build-entity-vocab, ...)
from luke_allennlp.data.samplers.luke_bucket import LukeBucketBatchSampler  # noqa: F401
from luke_allennlp.evaluation.per_instance_serializer import PerInstanceSerializer  # noqa: F401
from luke_allennlp.experiments.optuna_pruning import LukeOptunaPruning  # noqa: F401  (allennlp tune's trials)
from luke_allennlp.models import LukeBioTagger, LukeEntityTyping, LukeRelationClassifier, LukeSpanNer  # noqa: F401
from luke_allennlp.models.luke_entity_disambiguation import LukeEntityDisambiguation  # noqa: F401
from luke_allennlp.models.luke_pretraining import LukePretraining  # noqa: F401
from luke_allennlp.models.luke_record import LukeRecord  # noqa: F401
from luke_allennlp.models.luke_squad import LukeSquad  # noqa: F401
from luke_allennlp.modules.token_embedders.luke_embedder import LukeEmbedder  # noqa: F401
from luke_allennlp.predictors import (  # noqa: F401
    LukeEntityTypingPredictor,
    LukeRecordPredictor,
    LukeRelationClassifierPredictor,
    LukeSpanNerPredictor,
    LukeSquadPredictor,
)
from luke_allennlp.predictors.luke_entity_disambiguation import LukeEntityDisambiguationPredictor  # noqa: F401
from luke_allennlp.training.callbacks import mlflow, tensorboard, wandb  # noqa: F401  (the trackers)
from luke_allennlp.training.learning_rate_schedulers import LinearWithWarmupRatio  # noqa: F401
from luke_allennlp.training.metrics import (  # noqa: F401
    EntityDisambiguationAccuracy,
    EntityLinkingF1,
    MultiLabelF1,
    RelationF1,
    SpanF1,
    SquadEmAndF1,
)
