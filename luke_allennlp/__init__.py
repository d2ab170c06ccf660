"""
LUKE as an AllenNLP plugin.

`luke_allennlp.modeling` is the model in plain PyTorch and needs no AllenNLP. When AllenNLP is installed,
importing this package registers its components: models, the `luke` embedder, predictors, metrics, the
learning-rate schedule, the subcommands. The dataset readers live in the top-level package `data_readers`,
which depends on this one and not the reverse: `import data_readers` registers them and, through this
package, everything else (`.allennlp_plugins` lists both for the `allennlp` command). Installed, that folder is
the package `luke_allennlp_readers` (setup.py), so that no generic top-level name lands in site-packages.
"""

import importlib.util

import luke_allennlp_compat

luke_allennlp_compat.install()

if importlib.util.find_spec("allennlp") is not None:
    import luke_allennlp.commands  # noqa: F401  (the allennlp subcommands: build-entity-vocab, ...)
    from luke_allennlp.data.samplers.luke_bucket import LukeBucketBatchSampler  # noqa: F401
    from luke_allennlp.evaluation.per_instance_serializer import PerInstanceSerializer  # noqa: F401
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
    from luke_allennlp.training.learning_rate_schedulers import LinearWithWarmupRatio  # noqa: F401
    from luke_allennlp.training.metrics import (  # noqa: F401  # noqa: F401
        EntityDisambiguationAccuracy,
        EntityLinkingF1,
        MultiLabelF1,
        RelationF1,
        SpanF1,
        SquadEmAndF1,
    )
