import logging
from typing import Any, Dict, List, Optional, Tuple, Union

import torch
import torch.nn.functional as F
from allennlp.data import Vocabulary
from allennlp.models import Model

from luke_allennlp.modeling import LukeForPretraining
from luke_allennlp.modeling.inputs import LukeInputs
from luke_allennlp.modeling.pretraining import IGNORE_INDEX
from luke_allennlp.modeling.static_shapes import Runner
from luke_allennlp.models.luke_task_model import ReportsMetrics
from luke_allennlp.modules.encoder_loading import EncoderLoading
from luke_allennlp.resources.pretraining_corpus import entity_vocab_size as read_entity_vocab_size
from luke_allennlp.training.metrics import MaskedPrediction

logger = logging.getLogger(__name__)

# The parameters `freeze_checkpoint_weights` freezes where the checkpoint gives them (LukeForPretraining's names).
# (The pooler, which pretraining does not use, is always frozen: see LukeForPretraining.)
WORD_SIDE = ("luke.embeddings.", "luke.encoder.", "lm_head.")


@Model.register("luke_pretraining")
class LukePretraining(ReportsMetrics, Model):
    """
    LUKE pretraining (paper §3.3): masked language modelling and masked entity prediction over a Wikipedia
    corpus read by `luke_pretraining`; loss = MLM cross-entropy + masked-entity cross-entropy. Wraps
    `luke_allennlp.modeling.LukeForPretraining` (parameters `pretraining.luke.*`, `pretraining.lm_head.*`,
    `pretraining.entity_predictions.*`), which computes the heads at the masked positions only.
    `allennlp export-luke` turns an archive into a `transformers.LukeForMaskedLM` directory.

    Metrics: accuracy and perplexity of the masked words (`masked_lm_*`) and entities (`masked_entity_*`).

    # Parameters

    vocab : `Vocabulary`
        Unused (use `vocabulary: {type: "empty"}`): words and entities are ids from the corpus.
    model_name, entity_vocab_size, entity_emb_size, use_entity_aware_attention, load_weights,
    gradient_checkpointing, config_overrides :
        How the checkpoint is loaded, as for the `luke` embedder: see
        `luke_allennlp.modules.encoder_loading.EncoderLoading`. `model_name` is the checkpoint to start from:
        RoBERTa or BERT (`*ForMaskedLM` / `BertForPreTraining` keep their MLM head; the entity side is new,
        paper Appendix A) or LUKE (`LukeForMaskedLM` keeps both heads). The original LUKE was pretrained with
        the plain attention (`use_entity_aware_attention: false`); its entity-aware query matrices were
        initialised from the word query for fine-tuning (which `LukeEncoder.from_pretrained` and `allennlp
        export-luke` do).
    entity_vocab : `str`, optional (default = `None`)
        A corpus directory (its metadata gives the entity vocabulary) or an entity vocabulary file: the size of
        a new entity table. Give this or `entity_vocab_size` when `model_name` is RoBERTa or BERT.
    freeze_checkpoint_weights : `bool`, optional (default = `False`)
        Stage 1 of the paper's recipe (Appendix A): the word side that `model_name` gives weights for (word
        embeddings, transformer layers, MLM head) is frozen; the entity side, the entity head, and any
        word-side parameter the checkpoint has no weights for (e.g. the MLM head of a checkpoint saved without
        it, randomly initialised) are trained. Both lists are logged. With `load_weights: false` nothing comes
        from the checkpoint, so nothing is frozen.
    compile : `Union[bool, str]`, optional (default = `False`)
        Run the model under `torch.compile` (in place; parameter names are unchanged): `true` in torch.compile's
        default mode, or the name of a mode (`"reduce-overhead"`: CUDA graphs, `"max-autotune"`). With the reader's
        `masked_positions` (the configs' default) the whole forward pass, heads and loss included, is one graph per
        bucket of sequence lengths (`static_shapes.Runner`); without them, the encoder.
    """

    def __init__(
        self,
        vocab: Vocabulary,
        model_name: str,
        entity_vocab: Optional[str] = None,
        entity_vocab_size: Optional[int] = None,
        entity_emb_size: Optional[int] = None,
        use_entity_aware_attention: Optional[bool] = None,
        load_weights: bool = True,
        gradient_checkpointing: bool = False,
        freeze_checkpoint_weights: bool = False,
        compile: Union[bool, str] = False,
        config_overrides: Optional[Dict[str, Any]] = None,
        **kwargs,
    ) -> None:
        super().__init__(vocab, **kwargs)
        # Where the words and entities come from (the `luke_entity_cloze` predictor reads them).
        self.model_name, self.entity_vocab_source = model_name, entity_vocab
        if entity_vocab is not None:
            size = read_entity_vocab_size(entity_vocab)
            if entity_vocab_size is not None and entity_vocab_size != size:
                raise ValueError(f"entity_vocab_size {entity_vocab_size} != the {size} entities of {entity_vocab}")
            entity_vocab_size = size
        loading = EncoderLoading(
            model_name,
            use_entity_aware_attention,
            entity_vocab_size,
            entity_emb_size,
            load_weights,
            gradient_checkpointing,
            config_overrides,
        )
        if entity_vocab_size is None and not loading.from_luke:
            raise ValueError(
                f"{model_name} has no entity side: give entity_vocab (e.g. the corpus) or entity_vocab_size"
            )
        self.pretraining = loading.load(LukeForPretraining)
        if freeze_checkpoint_weights and load_weights:  # without weights from the checkpoint there is nothing to freeze
            self._freeze_checkpoint_weights(model_name)
        self.pretraining.runner = Runner.of_option(self.pretraining.luke, compile)
        self.masked_lm_metric = MaskedPrediction()
        self.masked_entity_metric = MaskedPrediction()
        self.metric = {"masked_lm": self.masked_lm_metric, "masked_entity": self.masked_entity_metric}

    def _freeze_checkpoint_weights(self, model_name: str) -> None:
        missing = set(self.pretraining.missing_from_checkpoint)
        frozen, untrained = [], []
        for name, param in self.pretraining.named_parameters():
            if name.startswith(WORD_SIDE):
                if name in missing:
                    untrained.append(name)
                else:
                    param.requires_grad = False
                    frozen.append(name)
        logger.info("freezing the %d word-side parameters %s gives weights for", len(frozen), model_name)
        if untrained:
            logger.warning(
                "%s has no weights for %s: they are randomly initialised, so they are trained with the entity side",
                model_name,
                untrained,
            )

    def forward(  # type: ignore[override]
        self,
        word_ids: torch.LongTensor,
        word_attention_mask: torch.BoolTensor,
        entity_ids: torch.LongTensor,
        entity_position_ids: torch.LongTensor,
        entity_attention_mask: torch.BoolTensor,
        masked_lm_labels: Optional[torch.LongTensor] = None,
        masked_entity_labels: Optional[torch.LongTensor] = None,
        masked_counts: Optional[List[Tuple[int, int]]] = None,
        masked_lm_positions: Optional[torch.LongTensor] = None,
        masked_entity_positions: Optional[torch.LongTensor] = None,
    ) -> Dict[str, torch.Tensor]:
        """
        # Parameters

        word_ids, word_attention_mask, masked_lm_labels : (batch, words)
        entity_ids, entity_attention_mask, masked_entity_labels : (batch, entities)
        entity_position_ids : (batch, entities, mention length), -1 padded
        masked_counts : each instance's (masked words, masked entities), host values from the reader (the heads'
            sizes without reading the device)
        masked_lm_positions, masked_entity_positions : (batch, fixed size), -1 padded
            The positions of the labels at a static size (the reader's `masked_positions`): the heads then run
            without a host sync, at shapes CUDA graphs can capture.
        """
        if entity_ids.size(1) == 0:
            # A batch without entities: one padding entity (attended by nothing) keeps the entity side in the
            # graph, since distributed training needs a gradient for every parameter in every step.
            entity_ids = F.pad(entity_ids, (0, 1))
            entity_attention_mask = F.pad(entity_attention_mask, (0, 1))
            entity_position_ids = entity_position_ids.new_full((entity_ids.size(0), 1, 1), -1)
            if masked_entity_labels is not None:
                masked_entity_labels = F.pad(masked_entity_labels, (0, 1), value=IGNORE_INDEX)
            if masked_entity_positions is not None:  # (no entity: nothing to predict)
                masked_entity_positions = torch.full_like(masked_entity_positions, -1)
        inputs = LukeInputs(
            word_ids,
            word_attention_mask,
            entity_ids=entity_ids,
            entity_position_ids=entity_position_ids,
            entity_attention_mask=entity_attention_mask,
        )
        out = self.pretraining(
            inputs,
            labels=masked_lm_labels,
            entity_labels=masked_entity_labels,
            masked_counts=tuple(map(sum, zip(*masked_counts))) if masked_counts else None,  # type: ignore[arg-type]
            masked_positions=masked_lm_positions,
            masked_entity_positions=masked_entity_positions,
        )
        output: Dict[str, torch.Tensor] = {}
        if out.loss is not None:
            output["loss"] = out.loss
        if out.targets is not None:
            output["masked_lm_loss"] = out.masked_lm_loss
            self.masked_lm_metric(out.logits, out.targets, out.masked_lm_loss)
        if out.entity_targets is not None:
            output["masked_entity_loss"] = out.masked_entity_loss
            self.masked_entity_metric(out.entity_logits, out.entity_targets, out.masked_entity_loss)
        return output
