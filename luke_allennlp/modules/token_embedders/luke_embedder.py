import dataclasses
from typing import Any, Dict, Optional, Union

import torch
from allennlp.modules.token_embedders.token_embedder import TokenEmbedder

from luke_allennlp.modeling import LukeEncoder, LukeEncoderOutput
from luke_allennlp.modeling.inputs import LukeInputs
from luke_allennlp.modeling.static_shapes import Runner
from luke_allennlp.modules.encoder_loading import EncoderLoading
from luke_allennlp.resources.checkpoint_tokenizer import max_mention_length as checkpoint_max_mention_length
from luke_allennlp.resources.checkpoint_tokenizer import special_entity_ids
from luke_allennlp.resources.task_entities import LUKE_SPECIAL_ENTITY_IDS, TASK_ENTITY_SOURCES, TASK_ENTITY_VOCAB

OUTPUTS = ("words", "entities", "pooled")
ENTITY_VOCABS = ("checkpoint", "task")


@TokenEmbedder.register("luke")
class LukeEmbedder(TokenEmbedder):
    """
    The LUKE encoder as an AllenNLP `TokenEmbedder`.

    Given only the word inputs of a `pretrained_transformer` indexer (`token_ids`, `mask`, `type_ids`), it is a
    drop-in word encoder (e.g. inside allennlp's `basic_classifier`). Entity inputs reach it as keyword
    arguments (`entity_ids`, `entity_position_ids`, `entity_attention_mask`, `entity_token_type_ids`), from an
    indexer or from a task model; task models that need word and entity states together call `encode`, or run their
    head with the encoder through its `runner` (`static_shapes.Runner`: compiled or not, as `compile` says).

    Registered as a `TokenEmbedder` with name "luke".

    # Parameters

    model_name, use_entity_aware_attention, entity_vocab_size, entity_emb_size, load_weights, gradient_checkpointing,
    config_overrides :
        How the checkpoint is loaded: see `luke_allennlp.modules.encoder_loading.EncoderLoading` (shared with
        `luke_pretraining`). A RoBERTa/BERT checkpoint needs `entity_vocab_size` (or `entity_vocab: "task"`).
    entity_vocab : `str`, optional (default = `"checkpoint"`)
        `"checkpoint"` keeps the checkpoint's entity table. `"task"` keeps only the fine-tuning entities of
        `luke_allennlp.resources.task_entities.TASK_ENTITY_VOCAB` (`[PAD]`, `[MASK]`, `[HEAD]`, `[TAIL]`), the last three
        initialised from the checkpoint's `[MASK]` embedding (paper §4); the task readers emit these ids.
    output : `str`, optional (default = `"words"`)
        What `forward` returns: `"words"` (batch, words, hidden), `"entities"` (batch, entities, hidden) or
        `"pooled"` (batch, hidden).
    train_parameters : `bool`, optional (default = `True`)
        If false, the encoder's weights are frozen. The pooler trains only with `output="pooled"` (otherwise
        nothing uses it: it is frozen at the checkpoint's weights).
    max_mention_length : `int`, optional (default = the checkpoint's)
        The position cap, in subwords (`position_cap`): an entity of a task model's inputs averages the position
        embeddings of its mention's first `max_mention_length` subwords at most, as transformers' `LukeTokenizer` and
        the original code: the checkpoint's tokenizer_config.json `max_mention_length`, else 30. The readers count
        the mentions it cuts.
    compile : `Union[bool, str]`, optional (default = `False`)
        Run the encoder under `torch.compile` on inputs padded to static shapes (`static_shapes.Runner`; parameter
        names and checkpoints are unchanged): `true` in torch.compile's default mode, or the name of a mode
        (`"reduce-overhead"`: CUDA graphs, `"max-autotune"`). On a GPU this removes most of the per-operation
        overhead (see benchmarks/RESULTS.md); the first batches of each new shape pay the compilation. Task models
        whose heads run through `encode_with_head` (NER, relation classification, entity typing, SQuAD-style QA, the
        pooled sequence and multiple-choice heads, entity disambiguation) compile encoder, head and loss as one
        graph.
    """

    def __init__(
        self,
        model_name: str,
        *,
        use_entity_aware_attention: Optional[bool] = None,
        entity_vocab: str = "checkpoint",
        entity_vocab_size: Optional[int] = None,
        entity_emb_size: Optional[int] = None,
        output: str = "words",
        train_parameters: bool = True,
        load_weights: bool = True,
        gradient_checkpointing: bool = False,
        compile: Union[bool, str] = False,
        config_overrides: Optional[Dict[str, Any]] = None,
        max_mention_length: Optional[int] = None,
    ) -> None:
        super().__init__()
        if max_mention_length is not None and max_mention_length < 1:
            raise ValueError(f"max_mention_length must be positive, not {max_mention_length}")
        if output not in OUTPUTS:
            raise ValueError(f"output must be one of {OUTPUTS}, not {output!r}")
        if entity_vocab not in ENTITY_VOCABS:
            raise ValueError(f"entity_vocab must be one of {ENTITY_VOCABS}, not {entity_vocab!r}")
        self.output = output
        # The most subwords whose positions an entity averages (`max_mention_length` in the config, as the
        # checkpoint's tokenizer names it): task models cap their entities' position ids at it.
        self.position_cap = max_mention_length or checkpoint_max_mention_length(model_name)
        loading = EncoderLoading(
            model_name,
            use_entity_aware_attention,
            entity_vocab_size,
            entity_emb_size,
            load_weights,
            gradient_checkpointing,
            config_overrides,
        )
        from_luke = loading.from_luke
        if entity_vocab == "task" and not from_luke:  # a new entity side holds only the task entities
            loading = dataclasses.replace(loading, entity_vocab_size=len(TASK_ENTITY_VOCAB))
        self.luke = loading.load(LukeEncoder)
        if entity_vocab == "task" and from_luke:
            pretrained = special_entity_ids(model_name, LUKE_SPECIAL_ENTITY_IDS)
            self.luke.select_entity_embeddings([pretrained[TASK_ENTITY_SOURCES[name]] for name in TASK_ENTITY_VOCAB])
        self.runner = Runner.of_option(self.luke, compile)  # (the encoder, and a task's head with it: compiled or not)
        for param in self.luke.parameters():
            param.requires_grad = train_parameters
        if output != "pooled" and self.luke.pooler is not None:
            # Nothing trains the pooler then (task models read word and entity states): frozen, it stays as the
            # checkpoint gave it (and is saved and exported so), and distributed training needs no gradient for it.
            self.luke.pooler.requires_grad_(False)

    def get_output_dim(self) -> int:
        return self.luke.config.hidden_size

    def encode(self, inputs: LukeInputs) -> LukeEncoderOutput:
        """Word and entity states together (`LukeEncoder.forward`, through the `runner`)."""
        return self.runner(inputs)

    def forward(
        self,
        token_ids: torch.LongTensor,
        mask: Optional[torch.BoolTensor] = None,
        type_ids: Optional[torch.LongTensor] = None,
        segment_concat_mask: Optional[torch.BoolTensor] = None,
        **entity_inputs: torch.Tensor,
    ) -> torch.Tensor:
        """
        # Parameters

        token_ids : `torch.LongTensor`, (batch, words)
        mask : `torch.BoolTensor`, optional, (batch, words)
        type_ids : `torch.LongTensor`, optional, (batch, words)
        segment_concat_mask : `torch.BoolTensor`, optional
            Produced by a `pretrained_transformer` indexer with `max_length`; folding long sequences is not
            supported, so the indexer must not set `max_length`.
        **entity_inputs :
            `entity_ids`, `entity_position_ids`, `entity_attention_mask`, `entity_token_type_ids`.
        """
        if segment_concat_mask is not None:
            raise ValueError("the luke embedder does not fold long sequences: remove max_length from the indexer")
        outputs = self.encode(LukeInputs(token_ids, mask, type_ids, **entity_inputs))
        if self.output == "words":
            return outputs.last_hidden_state  # (batch, words, hidden)
        if self.output == "pooled":
            return outputs.pooler_output  # (batch, hidden)
        if outputs.entity_last_hidden_state is None:
            raise ValueError('output="entities" needs entity inputs (entity_ids and entity_position_ids)')
        return outputs.entity_last_hidden_state  # (batch, entities, hidden)
