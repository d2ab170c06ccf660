"""How the `luke` embedder and the `luke_pretraining` model load LUKE from a checkpoint: one definition."""

from dataclasses import dataclass
from typing import Any, Dict, Optional, Type, TypeVar

from luke_allennlp.modeling.checkpoint_files import read_config

T = TypeVar("T")


@dataclass(frozen=True)
class EncoderLoading:
    """
    The checkpoint-loading options that the `luke` embedder and the `luke_pretraining` model share. Both
    constructors take them as parameters of these names, types and defaults (allennlp reads a constructor's
    signature as its config schema: both configs accept these options alike).

    # Parameters

    model_name : `str`
        A LUKE, RoBERTa or BERT checkpoint: a local directory or a Hugging Face Hub name (online only).
        RoBERTa/BERT checkpoints get a new entity side (paper Appendix A).
    use_entity_aware_attention : `bool`, optional (default = `None`)
        Overrides the checkpoint's setting; `False` is the paper's "original attention" ablation. `None`
        keeps the checkpoint's (on for a new entity side).
    entity_vocab_size : `int`, optional (default = `None`)
        Entity vocabulary size of a new entity side; must match a LUKE checkpoint if given.
    entity_emb_size : `int`, optional (default = `None`)
        Entity table width of a new entity side (`None` = 256, as in the paper).
    load_weights : `bool`, optional (default = `True`)
        If false, only the architecture is read from `model_name`: use it when the weights come from
        elsewhere, e.g. an AllenNLP archive.
    gradient_checkpointing : `bool`, optional (default = `False`)
        Recompute each layer's activations in the backward pass, to save memory.
    config_overrides : `Dict[str, Any]`, optional (default = `None`)
        Other `LukeConfig` fields to override, e.g. `{"hidden_dropout_prob": 0.2}`.
    """

    model_name: str
    use_entity_aware_attention: Optional[bool] = None
    entity_vocab_size: Optional[int] = None
    entity_emb_size: Optional[int] = None
    load_weights: bool = True
    gradient_checkpointing: bool = False
    config_overrides: Optional[Dict[str, Any]] = None

    @property
    def from_luke(self) -> bool:
        """Whether `model_name` is a LUKE checkpoint (it has an entity side)."""
        return read_config(self.model_name).get("model_type") == "luke"

    def load(self, model_class: Type[T]) -> T:
        """`model_class.from_pretrained` (`LukeEncoder` or `LukeForPretraining`) with these options. Without weights,
        while an archive loads (whose weights replace every parameter), the encoder is not randomly initialised."""
        from luke_allennlp.resources.archive_config import loading

        skip = {} if self.load_weights or loading() is None else {"initialize": False}
        model = model_class.from_pretrained(  # type: ignore[attr-defined]
            self.model_name,
            use_entity_aware_attention=self.use_entity_aware_attention,
            entity_vocab_size=self.entity_vocab_size,
            entity_emb_size=self.entity_emb_size,
            load_weights=self.load_weights,
            **skip,
            **(self.config_overrides or {}),
        )
        if self.gradient_checkpointing:
            getattr(model, "luke", model).gradient_checkpointing_enable()
        return model
