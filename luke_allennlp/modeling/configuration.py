"""The LUKE architecture's hyper-parameters, in the field names of `transformers.LukeConfig`."""

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Dict


@dataclass
class LukeConfig:
    """
    Hyper-parameters of a LUKE encoder. The field names and defaults are those of
    `transformers.LukeConfig` (LUKE base), so a `config.json` written by either loads into the other.

    # Parameters

    vocab_size : `int`
        Size of the word (subword) vocabulary.
    entity_vocab_size : `int`
        Size of the entity vocabulary (`[PAD]` = 0, `[UNK]` = 1, `[MASK]` = 2 in LUKE's vocabularies).
    hidden_size : `int`
        Width of word and entity states (H in the paper's notation for the entity table is `entity_emb_size`).
    entity_emb_size : `int`
        Width of the entity embedding table; when it differs from `hidden_size` the table is followed by a
        bias-free projection to `hidden_size` (the paper's decomposed embedding).
    use_entity_aware_attention : `bool`
        Whether attention picks its query matrix by the (query type, key type) pair (paper §3.2). When off,
        words and entities share one query matrix: the original attention.
    pad_token_id : `int`
        Word padding id. Word position ids are counted from `pad_token_id + 1`, as in RoBERTa.
    """

    vocab_size: int = 50267
    entity_vocab_size: int = 500000
    hidden_size: int = 768
    entity_emb_size: int = 256
    num_hidden_layers: int = 12
    num_attention_heads: int = 12
    intermediate_size: int = 3072
    hidden_act: str = "gelu"
    hidden_dropout_prob: float = 0.1
    attention_probs_dropout_prob: float = 0.1
    max_position_embeddings: int = 512
    type_vocab_size: int = 2
    initializer_range: float = 0.02
    layer_norm_eps: float = 1e-12
    use_entity_aware_attention: bool = True
    pad_token_id: int = 1
    bos_token_id: int = 0
    eos_token_id: int = 2
    # Keys of a loaded config.json that are not architecture fields (e.g. `architectures`,
    # `torch_dtype`); kept so that saving does not lose them.
    extra: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.hidden_size % self.num_attention_heads != 0:
            raise ValueError(
                f"hidden_size ({self.hidden_size}) is not a multiple of "
                f"num_attention_heads ({self.num_attention_heads})"
            )

    @property
    def head_dim(self) -> int:
        return self.hidden_size // self.num_attention_heads

    @classmethod
    def from_dict(cls, config: Dict[str, Any], **overrides: Any) -> "LukeConfig":
        """Builds a config from a `config.json` dictionary; unknown keys go to `extra`."""
        merged = {**config, **overrides}
        names = {f.name for f in dataclasses.fields(cls)} - {"extra"}
        known = {k: v for k, v in merged.items() if k in names}
        extra = {k: v for k, v in merged.items() if k not in names}
        return cls(**known, extra=extra)

    def to_dict(self) -> Dict[str, Any]:
        """The `config.json` content, loadable by `transformers.LukeConfig`."""
        out = {k: v for k, v in self.extra.items() if k not in ("model_type", "architectures")}
        out.update({f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name != "extra"})
        out["model_type"] = "luke"
        out["architectures"] = ["LukeModel"]
        return out
