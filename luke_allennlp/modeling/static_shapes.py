"""
The one door through which the encoder runs, with a task's head, compiled or not (`Runner`). A task says what its head
is (`Head`: the function, how each of its tensors is padded, how each of its outputs is cut); the runner runs encoder
and head eagerly, or under `torch.compile` as one graph per bucket (encoder, head and loss: a task model's step whole,
which CUDA graphs can capture), and hands back the outputs cut to the inputs' sizes either way.

Compiled, each batch's words and entities are padded (masked out) to the next multiple of a word / entity bucket size
(at least one), so that e.g. 8 word lengths cover every input up to 512 subwords, each compiled once, and CUDA graphs
(`mode="reduce-overhead"`) can replay a step (`StaticShapes`). The batch size and the mention length stay dynamic; a
batch of one row and mentions of one position are padded to two, since dynamo specialises sizes 0 and 1 (each would
compile every bucket again; in training the copied row draws its own dropout, so such a step averages two dropout
samples of its row). (Symbolic sequence lengths are avoided on purpose: inductor in torch 2.13 fails on the backward
pass of attention dropout over the concatenated word + entity sequence.)

The compiled graphs are one per (head, word bucket, entity bucket or none, training, gradient mode) seen: a new one is
logged, and a warning says when dynamo compiles again for a bucket already compiled or, past its recompile limit,
runs a new bucket uncompiled. The `luke` embedder's and the `luke_pretraining` model's `compile` option build a
compiled `Runner`; the pretraining model's head is its heads and loss, for batches whose masked positions come at a
static size.
"""

import dataclasses
import logging
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Sequence, Tuple, Union

import torch
import torch.nn.functional as F

from luke_allennlp.modeling.inputs import (
    ENTITIES,
    MENTIONS,
    PADDING,
    ROWS,
    WORD_SLOTS,
    WORDS,
    Lengths,
    LukeInputs,
    Padding,
    padding_value,
)

logger = logging.getLogger(__name__)

__all__ = [
    "ENTITIES",
    "MENTIONS",
    "ROWS",
    "WORD_SLOTS",
    "WORDS",
    "Head",
    "Like",
    "Padding",
    "Runner",
    "StaticShapes",
    "runs_compiled",
]

Sizes = Tuple[int, int, Optional[int]]  # (rows, words, entities or None) of the inputs before padding


class Like(NamedTuple):
    """An output cut to the shape of the head's tensor `index` before padding (every dimension of it), or with `flat`
    its first dimension to that tensor's number of elements (an output over its flattened rows)."""

    index: int
    flat: bool = False


# How an output is cut: its leading dimensions to the rows (ROWS), rows and words (WORDS), rows and entities
# (ENTITIES), as a head tensor (`Like`), or not at all (None: a loss). A tuple of them for a tuple of outputs, a dict
# by field for a dataclass.
Cut = Union[None, str, Like, Tuple[Any, ...], Dict[str, Any]]


class Head(NamedTuple):
    """
    What a task says of its head: `function(word_states, entity_states, *tensors)` (states (rows, words, hidden) and
    (rows, entities, hidden) or None), how each of its tensors is padded (`inputs`: `Padding(kind, value)`, a value
    that the head's loss ignores) and how its outputs are cut back (`outputs`, a `Cut`). `name`: what the log calls
    the encoder with it (default "the encoder and Class.method").
    """

    function: Callable[..., Any]
    inputs: Tuple[Padding, ...] = ()
    outputs: Cut = None
    name: Optional[str] = None


# The encoder alone: its outputs cut to the inputs' words and entities.
ENCODER_OUTPUTS = {"last_hidden_state": WORDS, "entity_last_hidden_state": ENTITIES, "pooler_output": ROWS}


class Runner:
    """
    The encoder, and a task's head on its states, run as one: `runner(inputs, head, *tensors)`. Uncompiled (no
    `compile_kwargs`), the encoder runs eagerly (`lengths`: each row's real words and entities, known on the host, for
    a head that reads no padding position: see `LukeEncoder.forward`) and the head on its outputs. Compiled, the
    inputs and the head's tensors are padded to static shapes and encoder and head run as one graph per bucket
    (`StaticShapes`; `lengths` is ignored); the outputs come back cut to the inputs' sizes. Under CUDA graphs
    (`mode="reduce-overhead"`) they are the graph's: the next call overwrites them, so a caller that keeps one past
    it keeps a copy. The runner is no module: parameter names and checkpoints are the encoder's.

    # Parameters

    encoder : `LukeEncoder`
    compile_kwargs : `Dict[str, Any]`, optional
        `torch.compile`'s arguments (`{}`: its default mode); None runs eagerly.
    word_multiple, entity_multiple : `int`, optional (default = 64, 16)
        The bucket sizes.
    """

    def __init__(
        self,
        encoder: torch.nn.Module,
        compile_kwargs: Optional[Dict[str, Any]] = None,
        word_multiple: int = 64,
        entity_multiple: int = 16,
    ) -> None:
        self.encoder = encoder
        self.compile_kwargs = compile_kwargs
        self.word_multiple, self.entity_multiple = word_multiple, entity_multiple
        self.graphs: Dict[Optional[Callable], StaticShapes] = {}  # per head function (None: the encoder alone)

    @classmethod
    def of_option(cls, encoder: torch.nn.Module, compile: Union[bool, str]) -> "Runner":
        """The runner of a config's `compile` option: false runs eagerly, true in torch.compile's default mode, a
        string in that mode (`"reduce-overhead"`: CUDA graphs, `"max-autotune"`)."""
        if not compile:
            return cls(encoder)
        return cls(encoder, {} if compile is True else {"mode": compile})

    @property
    def compiled(self) -> bool:
        return self.compile_kwargs is not None

    def __call__(
        self,
        inputs: LukeInputs,
        head: Optional[Head] = None,
        *tensors: Optional[torch.Tensor],
        lengths: Optional[Lengths] = None,
    ) -> Any:
        """The encoder's outputs (`LukeEncoderOutput`) of `inputs`, or with `head` the head's outputs on them."""
        if not self.compiled:
            out = self.encoder(inputs, lengths=lengths)
            return out if head is None else head.function(out.last_hidden_state, out.entity_last_hidden_state, *tensors)
        function, paddings, outputs = (None, (), ENCODER_OUTPUTS) if head is None else head[:3]
        graph = self.graphs.get(function) or self._graph(head)
        out, sizes = graph(self.encoder.checked(inputs), tensors, paddings, self.encoder.training)
        return cut(out, outputs, sizes, tensors)

    def _graph(self, head: Optional[Head]) -> "StaticShapes":
        encoder = self.encoder
        function = None if head is None else head.function

        def encoder_and_head(padded: LukeInputs, *tensors: Optional[torch.Tensor]) -> Any:
            out = encoder.encode_complete(padded)
            return out if function is None else function(out.last_hidden_state, out.entity_last_hidden_state, *tensors)

        if head is None:
            what = "the encoder"
        elif head.name is not None:
            what = head.name
        else:
            owner = getattr(function, "__self__", None)  # a bound method: named by its object's class
            name = f"{type(owner).__name__}.{function.__name__}" if owner is not None else function.__qualname__
            what = f"the encoder and {name}"
        graph = StaticShapes(
            encoder_and_head,
            what,
            self.word_multiple,
            self.entity_multiple,
            encoder.config.pad_token_id,
            **self.compile_kwargs,
        )
        self.graphs[function] = graph
        return graph


def cut(value: Any, how: Cut, sizes: Sizes, tensors: Sequence[Optional[torch.Tensor]]) -> Any:
    """`value` (a tensor, None, a tuple or a dataclass of them) cut back as `how` says (`Cut`) to the inputs' `sizes`
    and the head's `tensors` before padding."""
    if value is None or how is None:
        return value
    if isinstance(how, dict):
        return dataclasses.replace(
            value, **{name: cut(getattr(value, name), h, sizes, tensors) for name, h in how.items()}
        )
    if isinstance(how, tuple) and not isinstance(how, Like):
        return type(value)(cut(v, h, sizes, tensors) for v, h in zip(value, how))
    rows, words, entities = sizes
    if how == ROWS:
        return value[:rows]
    if how == WORDS:
        return value[:rows, :words]
    if how == ENTITIES:
        return value[:rows, :entities]
    like = tensors[how.index]
    if how.flat:
        return value[: like.numel()]
    return value[tuple(slice(0, n) for n in like.shape)]


class StaticShapes:
    """
    `function` compiled (`torch.compile(function, dynamic=False, **compile_kwargs)`) and called on inputs padded to
    the buckets: the encoder's `LukeInputs` (each field as `PADDING` declares) and a head's tensors, each padded as its
    `Padding` says. Returns `function`'s output on the padded inputs and the sizes before padding,
    `(batch, words, entities or None)`, to which `Runner` cuts the output back.

    # Parameters

    function : `Callable`
        Takes the padded `LukeInputs`, then the head's padded tensors (or None), positionally.
    what : `str`
        What is compiled, for the log ("the encoder").
    word_multiple, entity_multiple : `int`
        The bucket sizes.
    pad_token_id : `int`
        The word ids' padding.
    """

    def __init__(
        self,
        function: Callable,
        what: str,
        word_multiple: int,
        entity_multiple: int,
        pad_token_id: int,
        **compile_kwargs: Any,
    ) -> None:
        import torch._dynamo

        # One graph per bucket: allow more than dynamo's default of 8 per function (8 word x 8 entity buckets, and
        # none, in training and in evaluation, fit).
        torch._dynamo.config.recompile_limit = max(torch._dynamo.config.recompile_limit, 256)
        self.compiled = torch.compile(function, dynamic=False, **compile_kwargs)
        self.what = what
        self.word_multiple, self.entity_multiple = word_multiple, entity_multiple
        self.pad_token_id = pad_token_id
        self.buckets: Dict[tuple, int] = {}  # bucket -> the frames dynamo compiled for it

    def __call__(
        self,
        inputs: LukeInputs,
        tensors: Sequence[Optional[torch.Tensor]],
        paddings: Sequence[Padding],
        training: bool,
    ) -> Tuple[Any, Sizes]:
        """`function`'s output on the padded inputs and head `tensors` (each padded as `paddings` says), and the sizes
        before padding; `training`: the module's mode (a graph of its own)."""
        batch, num_words, num_entities = inputs.sizes()
        pad_words = _padding(num_words, self.word_multiple)
        pad_entities = 0 if num_entities is None else _padding(num_entities, self.entity_multiple)

        def pad(tensor: Optional[torch.Tensor], kind: str, value: Any) -> Optional[torch.Tensor]:
            if tensor is None:
                return None
            if batch == 1:  # a copy of the row (real tokens: an all-padding row would give NaN attention)
                tensor = torch.cat([tensor, tensor])
            if kind == WORDS:
                tensor = F.pad(tensor, (0, pad_words), value=value)
            elif kind == ENTITIES:
                tensor = F.pad(tensor, (0, pad_entities), value=value)
            elif kind == WORD_SLOTS:  # (at most as long as the words: to the padded words)
                tensor = F.pad(tensor, (0, num_words + pad_words - tensor.size(-1)), value=value)
            elif kind == MENTIONS:
                tensor = F.pad(tensor, (0, max(0, 2 - tensor.size(2)), 0, pad_entities), value=value)
                torch._dynamo.maybe_mark_dynamic(tensor, 2)  # the longest mention of the batch
            torch._dynamo.maybe_mark_dynamic(tensor, 0)
            return tensor

        padded = LukeInputs(
            *(
                pad(tensor, padding.kind, padding_value(padding.value, self.pad_token_id))
                for tensor, padding in zip(inputs, PADDING)
            )
        )
        padded_head: List[Optional[torch.Tensor]] = [
            pad(tensor, padding.kind, padding.value) for tensor, padding in zip(tensors, paddings)
        ]
        entities = None if num_entities is None else num_entities + pad_entities
        bucket = (training, torch.is_grad_enabled(), num_words + pad_words, entities)
        frames = dict(torch._dynamo.utils.counters["frames"])
        out = self.compiled(padded, *padded_head)
        now = torch._dynamo.utils.counters["frames"]
        # Dynamo converts a frame (`total`) where no graph it holds fits, and compiles it (`ok`) unless it gives up
        # (its recompile limit); it converts nothing where one fits, e.g. one compiled for another model instance.
        tried, compiled = now["total"] - frames.get("total", 0), now["ok"] - frames.get("ok", 0)
        self._check(bucket, compiled, tried)
        return out, (batch, num_words, num_entities)

    def _check(self, bucket: tuple, compiled: int, tried: int) -> None:
        """Logs each bucket's compilation (or its reuse of a graph dynamo holds already); warns where dynamo compiles a
        bucket again, or gives up compiling a new one."""
        training, grad, words, entities = bucket
        where = (
            f"{words} words, {entities or 'no'} entities{', training' if training else ''}{'' if grad else ', no grad'}"
        )
        if bucket not in self.buckets:
            self.buckets[bucket] = compiled
            if compiled:
                logger.info("torch.compile: graph %d of %s, for %s", len(self.buckets), self.what, where)
            elif not tried:
                logger.info(
                    "torch.compile: %s reuses a graph compiled before (another instance), for %s", self.what, where
                )
            else:
                logger.warning(
                    "torch.compile: dynamo did not compile %s for %s (recompile limit %d reached?): "
                    "inputs of this size run uncompiled",
                    self.what,
                    where,
                    torch._dynamo.config.recompile_limit,
                )
        elif compiled:
            self.buckets[bucket] += compiled
            logger.warning(
                "torch.compile: %s was compiled again for %s (%d times): an input shape is not bounded by the buckets",
                self.what,
                where,
                self.buckets[bucket],
            )


def runs_compiled(module: torch.nn.Module) -> bool:
    """Whether any part of `module` runs the encoder through a compiled `Runner` (its `runner`: the `luke` embedder's,
    the pretraining model's)."""
    return any(isinstance(getattr(m, "runner", None), Runner) and m.runner.compiled for m in module.modules())


def _padding(length: int, multiple: int) -> int:
    """What pads `length` to the next multiple of `multiple` (one bucket for an empty sequence)."""
    return -length % multiple + (multiple if length == 0 else 0)
